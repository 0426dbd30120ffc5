import type { OutputColumn, PageView } from '../format/page-view.js';
import { InstantMicros, type ExtensionValue, type PageMeta, type ResolvedPage } from '../format/resolved-page.js';
import type { Column } from '../store/column.js';
import type { Mutable } from '../mutable.js';

const NO_ROWS = new Int32Array(0);

/**
 * A serving thread's resolved page: one view, one meta and one list of extension values
 * per endpoint, refilled by every resolve (data-page.ts), like the resolver's rows. The
 * writers read a page at once; what keeps a meta keeps `ownedMeta` of it. Handing a page
 * to a writer then allocates nothing.
 *
 * The output layouts with computed columns (walk_forward's `decision_date` first and `floor_applied` last, vintages'
 * `visible_from` and `visible_to` last) are kept while their parts are the same objects: a
 * writer finds its compiled layout by the identity of the list (layout-cache.ts), so a new
 * list per request would also cost a shape string and a WeakMap entry per request.
 */
export class PageScratch implements ResolvedPage {
  readonly view: Mutable<PageView> = { columns: [], rows: NO_ROWS, count: 0, seriesKey: [] };
  readonly meta: Mutable<PageMeta> = {
    productId: '',
    count: 0,
    totalCount: 0,
    nextCursor: null,
    generation: 0,
    dataLatestDate: null,
    maxObservedUs: null,
    asOfUs: null,
    floorApplied: false,
    extensionKeys: [],
    extensionValues: [],
  };
  /** the page's `as_of`, as an extension value (refilled; ownedMeta copies it) */
  readonly asOf = new InstantMicros(0);
  /** extension values of `GET /{product}/{dataset}`: generation, as_of, vintage_floor, floor_applied */
  readonly rowsValues: ExtensionValue[] = [0, null, null, false];
  /** of walk_forward: generation, decisions, vintage_floor */
  readonly walkForwardValues: ExtensionValue[] = [0, 0, null];
  /** of vintages: generation, as_of, release, vintage_floor */
  readonly vintagesValues: ExtensionValue[] = [0, null, 'all', null];

  /**
   * The endpoint's part of the envelope, set before the page is filled (data-page.ts): the
   * instant data_latest_date and data_age_hours are measured under (`asOfUs`, none =
   * everything), whether the floor applied, and the metadata fields after the spec's.
   */
  envelope(asOfUs: number | null, floorApplied: boolean, extensionKeys: readonly string[], extensionValues: readonly ExtensionValue[]): void {
    const meta = this.meta;
    meta.asOfUs = asOfUs;
    meta.floorApplied = floorApplied;
    meta.extensionKeys = extensionKeys;
    meta.extensionValues = extensionValues;
  }

  private suffixed: readonly OutputColumn[] = [];
  private suffixedA: Column | null = null;
  private suffixedB: Column | null = null;
  private suffixedStored: readonly OutputColumn[] | null = null;

  private around: readonly OutputColumn[] = [];
  private aroundFirst: Column | null = null;
  private aroundLast: Column | null = null;
  private aroundStored: readonly OutputColumn[] | null = null;

  /** `first` (computed), `stored`, then `last` (computed): the same list as last time when all are the same. */
  withPrefixAndSuffix(first: Column, stored: readonly OutputColumn[], last: Column): readonly OutputColumn[] {
    if (first !== this.aroundFirst || last !== this.aroundLast || stored !== this.aroundStored) {
      this.around = [{ column: first, at: 'position' }, ...stored, { column: last, at: 'position' }];
      this.aroundFirst = first;
      this.aroundLast = last;
      this.aroundStored = stored;
    }
    return this.around;
  }

  /** `stored` then `a` and `b` (computed): the same list as last time when all are the same. */
  withSuffix(stored: readonly OutputColumn[], a: Column, b: Column): readonly OutputColumn[] {
    if (a !== this.suffixedA || b !== this.suffixedB || stored !== this.suffixedStored) {
      this.suffixed = [...stored, { column: a, at: 'position' }, { column: b, at: 'position' }];
      this.suffixedA = a;
      this.suffixedB = b;
      this.suffixedStored = stored;
    }
    return this.suffixed;
  }
}
