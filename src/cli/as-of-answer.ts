import type { SnapshotSource } from '../source/snapshot-source.js';
import { findProduct } from '../catalog/products.js';
import { JsonFormatWriter } from '../format/json/json-writer.js';
import { ByteWriter } from '../format/bytes/byte-writer.js';
import { CsvRowRenderer } from '../format/csv/csv-cells.js';
import { arrowStreamBytes } from '../format/arrow/ipc-stream.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import { DatasetSlot } from '../generations/dataset-slot.js';
import { loadGeneration } from '../generations/load-generation.js';
import { inlineBuilder } from '../generations/table-builder.js';
import { readManifest } from '../snapshot/read-manifest.js';
import type { Clock } from '../time/clock.js';
import type { Output } from '../publish/output.js';
import { decodeCursor, encodeCursor } from '../query/cursor.js';
import { parseQuery } from '../query/parse-query.js';
import { PageResolver, type Resume } from '../query/page-resolver.js';

/**
 * `pitcache asof`: the answer to an API query rebuilt from the stored files (spec section 1,
 * rule 5), with the server's own code all the way: the manifest and snapshot checks and
 * indexing (loadGeneration), the query parser, the page resolver (PIT-4) and the row
 * renderer. Every page of the cursor chain is resolved from the one generation loaded, as
 * the API does, and the resume state goes through a real cursor token, so the chain is
 * the API's chain; pages are as large as the API allows.
 *
 * json: ONE JSON array holding every row of the answer, byte for byte the rows the API's
 * `data` arrays hold over the whole chain, concatenated. No envelope: retrieved_at,
 * record_id and the cursor describe an HTTP exchange, not the data.
 * csv: see format/csv/csv-cells.ts.
 * arrow: one Arrow IPC stream of every row, the API's arrow format (format/arrow/ipc-stream.ts),
 * with the series key in the schema metadata.
 */
export interface AsOfRequest {
  readonly source: SnapshotSource;
  readonly productId: string;
  readonly dataset: string;
  /** the API query string (undecoded), e.g. `as_of=2026-04-02&country=DE,FR` */
  readonly rawQuery: string;
  readonly format: 'json' | 'csv' | 'arrow';
  readonly out: Output;
  readonly clock: Clock;
}

export interface AsOfSummary {
  readonly generation: number;
  readonly rows: number;
  readonly pages: number;
}

export async function writeAsOfAnswer(req: AsOfRequest): Promise<AsOfSummary> {
  const product = findProduct(req.productId);
  if (product === undefined) throw new Error(`unknown product ${req.productId}`);
  const slot = new DatasetSlot(product, req.dataset);
  const check = await readManifest(req.source, { productId: req.productId, dataset: req.dataset }, null);
  if (check.status !== 'ok') throw new Error(`${slot.id} has no manifest.json at ${req.source.description}`);
  const { generation: gen } = await loadGeneration(req.source, slot, check.manifest, req.clock, inlineBuilder);
  const query = parseQuery(req.rawQuery, product, req.dataset);

  const w = new ByteWriter();
  const csv = req.format === 'csv' ? new CsvRowRenderer(gen.table) : null;
  const json = new JsonFormatWriter();
  const resolver = new PageResolver();
  // Arrow: row ids of every page, gathered into one batch at the end.
  let arrowRows = req.format === 'arrow' ? new Int32Array(1024) : null;
  if (req.format === 'arrow') {
    // nothing before the rows: the schema comes with them
  } else if (csv === null) {
    await req.out.write('[');
  } else {
    csv.writeHeader(w);
    await flush(w, req.out);
  }
  let resume: Resume = null;
  let rows = 0;
  let pages = 0;
  for (;;) {
    const page = resolver.resolve(gen, query, resume);
    pages++;
    if (arrowRows !== null) {
      if (arrowRows.length < rows + page.count) {
        const grown = new Int32Array(Math.max(rows + page.count, arrowRows.length * 2));
        grown.set(arrowRows.subarray(0, rows));
        arrowRows = grown;
      }
      arrowRows.set(page.rows.subarray(0, page.count), rows);
    } else if (csv !== null) {
      csv.writeRows(w, page.rows, page.count);
      await flush(w, req.out);
    } else if (page.count > 0) {
      // The JSON writer writes `[...]`; pages join into one array.
      if (rows > 0) w.byte(0x2c);
      const start = w.pos;
      json.writeRows(w, { columns: gen.outputColumns, rows: page.rows, count: page.count, seriesKey: gen.table.seriesKey });
      w.buf.copyWithin(start, start + 1, w.pos - 1);
      w.pos -= 2;
      await flush(w, req.out);
    }
    rows += page.count;
    if (page.next === null) break;
    const token = encodeCursor({ generation: gen.number, fingerprint: query.fingerprint, total: page.total, ...page.next });
    resume = decodeCursor(token);
    if (resume === null) throw new Error('internal: a cursor of this answer does not decode');
  }
  if (arrowRows !== null) {
    const columns = gen.table.columns.map((column) => ({ column, at: 'row' as const }));
    const meta = new Map([[SERIES_KEY_METADATA, JSON.stringify(gen.table.seriesKey)]]);
    await req.out.write(arrowStreamBytes({ columns, rows: arrowRows, count: rows, seriesKey: gen.table.seriesKey }, meta));
  } else if (csv === null) await req.out.write(']\n');
  return { generation: gen.number, rows, pages };
}

/** Hands over a copy: an Output may keep the chunk while the writer's buffer is reused. */
async function flush(w: ByteWriter, out: Output): Promise<void> {
  if (w.pos === 0) return;
  const chunk = Buffer.from(w.view());
  w.reset();
  await out.write(chunk);
}
