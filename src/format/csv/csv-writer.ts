import type { ByteWriter } from '../../render/byte-writer.js';
import { CsvRowRenderer } from '../../render/csv-rows.js';
import type { FormatWriter } from '../format-writer.js';
import { LayoutCache } from '../layout-cache.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { ResolvedPage } from '../resolved-page.js';

/**
 * CSV answers (contract 9): a header row and one line per row; the envelope travels in
 * headers, so the whole body is the head and a request writes no tail. Renderers are
 * compiled per (table, layout). TODO(formats): computed columns (walk-forward's
 * decision_date, vintages' visible_from/to) are read at position, which CsvRowRenderer
 * does not do yet; such a layout fails loudly rather than write wrong cells.
 */
export class CsvFormatWriter implements FormatWriter {
  readonly format = 'csv';
  readonly contentType = CONTENT_TYPES.csv;
  readonly cacheableHead = true;
  private readonly renderers = new LayoutCache<CsvRowRenderer>((columns) => {
    if (columns.some((c) => c.at !== 'row')) throw new Error('internal: CSV of computed columns is not written yet');
    return new CsvRowRenderer({ columns: columns.map((c) => c.column) });
  });

  writeHead(out: ByteWriter, page: ResolvedPage): void {
    const { view } = page;
    const r = this.renderers.of(view.columns);
    r.writeHeader(out);
    r.writeRows(out, view.rows, view.count);
  }

  writeTail(): void {}
}
