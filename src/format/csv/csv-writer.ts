import type { ByteWriter } from '../bytes/byte-writer.js';
import type { RowCache } from '../arenas/row-cache.js';
import type { FormatWriter } from '../format-writer.js';
import { LayoutCache } from '../layout-cache.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { PageView } from '../page-view.js';
import type { ResolvedPage } from '../resolved-page.js';
import { CsvLayout } from './csv-layout.js';

/**
 * CSV answers (contract 9): a header row and one line per row; the envelope travels in
 * headers, so the whole body is the cacheable middle: a request writes no prefix or suffix. Layouts are
 * compiled per (table, output layout), computed columns included (csv-layout.ts), their
 * stored cells through the thread's row cache, if any.
 */
export class CsvFormatWriter implements FormatWriter<null> {
  readonly format = 'csv';
  readonly contentType = CONTENT_TYPES.csv;
  readonly prefixed = false;
  private readonly layouts = new LayoutCache<CsvLayout>((columns) => new CsvLayout(columns, this.rowCache));

  constructor(private readonly rowCache: RowCache | null = null) {}

  shapeOf(): null {
    return null;
  }

  writePrefix(): void {}

  writeMiddle(out: ByteWriter, page: ResolvedPage): void {
    const layout = this.layouts.of(page.view.columns);
    layout.writeHeader(out);
    layout.writeRecords(out, page.view);
  }

  /** The records alone, without the header (the file channel joins the pages of a chain after one header). */
  writeRows(out: ByteWriter, view: PageView): void {
    this.layouts.of(view.columns).writeRecords(out, view);
  }

  writeSuffix(): void {}

  /** Its suffix is empty: nothing of a request's own to rewrite. */
  restampSuffix(_buf: Uint8Array, at: number, end: number): boolean {
    return at === end;
  }
}
