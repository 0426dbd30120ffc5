import { ArrowFormatWriter } from '../format/arrow/arrow-writer.js';
import { ByteWriter } from '../format/bytes/byte-writer.js';
import { CsvFormatWriter } from '../format/csv/csv-writer.js';
import { JsonFormatWriter } from '../format/json/json-writer.js';
import { negotiateFormat } from '../format/negotiate.js';
import type { PageView } from '../format/page-view.js';
import { splitPresentation } from '../format/presentation.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import { PageResolver } from '../query/page-resolver.js';
import { VintagesResolver } from '../query/vintages-resolver.js';
import { WalkForwardResolver } from '../query/walk-forward-resolver.js';
import { Pinned, pinRequest, type PinContext } from './data-page.js';
import { PageScratch } from './page-scratch.js';

/** Where the chain's bytes go (the CLI's stdout): a chunk is the sink's once written. */
export interface ChainSink {
  write(chunk: Uint8Array): Promise<void>;
}

export interface ChainSummary {
  readonly generation: number;
  readonly rows: number;
  readonly pages: number;
}

/** Row ids of every page, gathered for one Arrow batch at the end (grown by doubling, as the pages come). */
class GatheredRows {
  rows = new Int32Array(1024);
  count = 0;

  add(view: PageView): void {
    const n = this.count + view.count;
    if (this.rows.length < n) {
      const grown = new Int32Array(Math.max(n, this.rows.length * 2));
      grown.set(this.rows.subarray(0, this.count));
      this.rows = grown;
    }
    this.rows.set(view.rows.subarray(0, view.count), this.count);
    this.count = n;
  }
}

/**
 * The file channel (spec 1, rule 5: `pitcache asof`): every page of an answer's cursor
 * chain, through the data endpoint's own stages without a socket: parse (the presentation
 * split off the query, the format as `format=` names it) -> pin (pinRequest: the query
 * parsed, pinned to the slot's generation) -> resolve (the page and its envelope) -> write
 * (the server's format writers). Each page after the first is asked for as the API's
 * client asks: the same query with the previous page's `cursor`, so the chain is the
 * API's chain, page for page.
 *
 * What is written is the answer's rows, not the HTTP envelope (retrieved_at, record_id and
 * the cursor describe an exchange, not the data):
 * - json: ONE array of every row, the bytes of the `data` arrays of the API's pages joined,
 *   then a line feed;
 * - csv: the header, then the records of every page: the API's CSV pages joined, header once;
 * - arrow: one IPC stream of every row in one record batch, the schema carrying the series
 *   key (no envelope): for a one-page answer, the batch is the API's byte for byte.
 * A one-page answer (the slot's whole answer fits `limit`) is thus the server's body (CSV),
 * its `data` (JSON), or its record batch (Arrow).
 */
export async function writeAnswerChain(slot: DatasetSlot, rawQuery: string, sink: ChainSink): Promise<ChainSummary> {
  const p = splitPresentation(rawQuery);
  const format = negotiateFormat(p.format, '');
  const rest = p.rest;
  const pinned = new Pinned({ rows: new PageResolver(), walkForward: new WalkForwardResolver(), vintages: new VintagesResolver(), page: new PageScratch() });
  const ctx: PinContext = { registry: { ready: true }, supply: null, fetched: null };
  const out = new ByteWriter();
  const json = format === 'json' ? new JsonFormatWriter() : null;
  const csv = format === 'csv' ? new CsvFormatWriter() : null;
  const gathered = format === 'arrow' ? new GatheredRows() : null;
  if (json !== null) out.byte(0x5b);
  let cursor: string | null = null;
  let rows = 0;
  let pages = 0;
  let generation = 0;
  let view: PageView | null = null;
  do {
    const request = pinRequest('rows', pinned, ctx, slot, cursor === null ? rest : `${rest}${rest === '' ? '' : '&'}cursor=${cursor}`);
    generation = request.gen.number;
    const page = request.resolve(request.gen.outputColumns);
    view = page.view;
    if (csv !== null) {
      if (pages === 0) csv.writeMiddle(out, page);
      else csv.writeRows(out, view);
    } else if (json !== null && view.count > 0) {
      // The JSON writer writes `[...]`: its rows join the one array.
      if (rows > 0) out.byte(0x2c);
      const start = out.pos;
      json.writeRows(out, view);
      out.buf.copyWithin(start, start + 1, out.pos - 1);
      out.pos -= 2;
    }
    gathered?.add(view);
    rows += view.count;
    pages++;
    cursor = page.meta.nextCursor;
    await flush(out, sink);
  } while (cursor !== null);
  if (json !== null) out.ascii(']\n');
  if (gathered !== null)
    new ArrowFormatWriter().writeStream(out, { columns: view.columns, rows: gathered.rows, count: gathered.count, seriesKey: view.seriesKey });
  await flush(out, sink);
  return { generation, rows, pages };
}

/** Hands over a copy: the sink may keep the chunk while the writer's buffer is reused. */
async function flush(w: ByteWriter, sink: ChainSink): Promise<void> {
  if (w.pos === 0) return;
  const chunk = Buffer.from(w.view());
  w.reset();
  await sink.write(chunk);
}
