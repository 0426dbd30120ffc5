import type { RecordId } from '../http/record-id.js';
import type { PageView } from './page-view.js';

/**
 * An instant (µs since epoch) that renders as an ISO 8601 string with microseconds and Z.
 * Mutable: a serving thread refills one per resolve (data-page.ts' PageScratch), and
 * ownedMeta copies it into a meta that is kept.
 */
export class InstantMicros {
  constructor(public us: number) {}
}

export type ExtensionValue = string | number | boolean | null | InstantMicros;

/**
 * Everything an answer says besides its rows: the envelope of one page, resolved once per
 * request before any writer runs, the same for every format (JSON writes it in the body,
 * CSV and Arrow in headers and schema metadata). A resolved page's meta is the serving
 * thread's scratch, refilled by the next resolve; what keeps one (the response cache, next
 * to a cached head, so a hit needs no resolve; an answer finished off the thread) keeps
 * `ownedMeta` of it.
 */
export interface PageMeta {
  readonly productId: string;
  /** rows in this page */
  readonly count: number;
  /** rows of the whole answer, over all its pages */
  readonly totalCount: number;
  /** the cursor of the next page; null on the last page (`has_more` = cursor present) */
  readonly nextCursor: string | null;
  /** the generation answering */
  readonly generation: number;
  /** days since epoch of the newest visible business date, or null */
  readonly dataLatestDate: number | null;
  /** greatest visible str_observed_at (µs), for data_age_hours; null when nothing is visible */
  readonly maxObservedUs: number | null;
  /** the request's as_of (µs): data_age_hours is measured from it, or from now without it */
  readonly asOfUs: number | null;
  /** contract 16: the answer's as_of, or any of its decision dates or events, lies before the end of the vintage-floor day */
  readonly floorApplied: boolean;
  /** names of the metadata fields after the spec's (generation, as_of, floor...), in order: one list per endpoint */
  readonly extensionKeys: readonly string[];
  /** their values, one per name */
  readonly extensionValues: readonly ExtensionValue[];
}

/**
 * One page of an answer, resolved: which rows and columns (`view`) and what the envelope
 * says (`meta`), both valid until the thread resolves again. This is what parse -> resolve
 * hands to a FormatWriter.
 */
export interface ResolvedPage {
  readonly view: PageView;
  readonly meta: PageMeta;
}

/** What only the request knows: when it was answered and under which id. */
export interface RequestStamp {
  /** µs since epoch (metadata.retrieved_at) */
  readonly retrievedAtUs: number;
  /** the thread's bytes while the request is answered at once; a string once it is kept past an await (record-id.ts) */
  readonly recordId: RecordId;
}

/** metadata.data_age_hours: hours from the newest visible observation to as_of (or to now). */
export function dataAgeHours(meta: PageMeta, nowUs: number): number | null {
  if (meta.maxObservedUs === null) return null;
  return ((meta.asOfUs ?? nowUs) - meta.maxObservedUs) / 3_600_000_000;
}

/** Whether data_age_hours reads the same at any time: measured from as_of, or absent. */
export function ageIsFixed(meta: PageMeta): boolean {
  return meta.maxObservedUs === null || meta.asOfUs !== null;
}

/**
 * A copy of `meta` that later resolves do not change: its own list of extension values,
 * with its own instants (the strings and the list of names are never refilled).
 */
export function ownedMeta(meta: PageMeta): PageMeta {
  const values = meta.extensionValues;
  const owned: ExtensionValue[] = new Array<ExtensionValue>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    owned[i] = v instanceof InstantMicros ? new InstantMicros(v.us) : v;
  }
  return {
    productId: meta.productId,
    count: meta.count,
    totalCount: meta.totalCount,
    nextCursor: meta.nextCursor,
    generation: meta.generation,
    dataLatestDate: meta.dataLatestDate,
    maxObservedUs: meta.maxObservedUs,
    asOfUs: meta.asOfUs,
    floorApplied: meta.floorApplied,
    extensionKeys: meta.extensionKeys,
    extensionValues: owned,
  };
}
