import type { ChunkedTable } from './chunked-table.js';
import { maxChunkRows, SeriesRanks } from './series-ranks.js';
import type { VersionTable } from './version-table.js';

/** Rows of one table, all of them or those `picked` flags 1 (by row, over the chunks). */
export interface Source {
  readonly table: ChunkedTable;
  readonly picked: Uint8Array | null;
}

/**
 * The rows of some sources (the stored generation, then the input) taken a range of series at
 * a time, so that what publishing works on at once is bounded by the range, not the dataset
 * (docs/decisions.md#publish-in-bounded-memory). A row is named by its position among the
 * sources' rows one after the other (sources in order, rows in order): the tie-break of
 * PIT-4. Nothing is kept per row of the dataset: each range is found by a pass over the
 * series-key codes.
 */
export class SeriesRows {
  /** every chunk of every source, in order */
  readonly chunks: VersionTable[] = [];
  /** which source each chunk is of */
  readonly chunkSource: Uint8Array;
  /** each chunk's first row in its table */
  readonly chunkFirst: Float64Array;
  /** picked rows of each series rank, over the sources */
  readonly counts: Float64Array;
  readonly ranks: SeriesRanks;
  private readonly rankBuf: Int32Array;

  constructor(
    private readonly sources: readonly Source[],
    seriesKey: readonly string[],
  ) {
    this.ranks = new SeriesRanks(
      sources.map((s) => s.table),
      seriesKey,
    );
    for (const s of sources) this.chunks.push(...s.table.chunks);
    this.chunkSource = new Uint8Array(this.chunks.length);
    this.chunkFirst = new Float64Array(this.chunks.length);
    let k = 0;
    sources.forEach((s, src) => {
      let first = 0;
      for (const chunk of s.table.chunks) {
        this.chunkSource[k] = src;
        this.chunkFirst[k++] = first;
        first += chunk.rows;
      }
    });
    this.rankBuf = new Int32Array(maxChunkRows(sources.map((s) => s.table)));
    this.counts = new Float64Array(this.ranks.count);
    const counts = this.counts;
    const ranks = this.rankBuf;
    sources.forEach((s, src) => {
      let first = 0;
      const picked = s.picked;
      for (const chunk of s.table.chunks) {
        this.ranks.fill(src, chunk, ranks);
        for (let i = 0; i < chunk.rows; i++) if (picked === null || picked[first + i] === 1) counts[ranks[i]!]!++;
        first += chunk.rows;
      }
    });
  }

  /** The picked rows whose series rank is in [lo, hi), in (series, position) order. */
  collect(lo: number, hi: number): Collected {
    let m = 0;
    for (let r = lo; r < hi; r++) m += this.counts[r]!;
    const chunkOf = new Int32Array(m);
    const rowOf = new Int32Array(m);
    const rankOf = new Int32Array(m);
    let j = 0;
    const ranks = this.rankBuf;
    let k = 0;
    this.sources.forEach((s, src) => {
      let first = 0;
      const picked = s.picked;
      for (const chunk of s.table.chunks) {
        this.ranks.fill(src, chunk, ranks);
        const n = chunk.rows;
        for (let i = 0; i < n; i++) {
          const r = ranks[i]!;
          if (r < lo || r >= hi || (picked !== null && picked[first + i] !== 1)) continue;
          chunkOf[j] = k;
          rowOf[j] = i;
          rankOf[j++] = r - lo;
        }
        first += n;
        k++;
      }
    });
    // Stable counting sort by series: positions stay in order inside each series.
    const seriesStart = new Int32Array(hi - lo + 1);
    for (let r = lo; r < hi; r++) seriesStart[r - lo + 1] = seriesStart[r - lo]! + this.counts[r]!;
    const next = seriesStart.slice(0, hi - lo);
    const order = new Int32Array(m);
    for (let t = 0; t < m; t++) order[next[rankOf[t]!]!++] = t;
    return { rows: m, chunkOf, rowOf, order, seriesStart };
  }
}

/** Some rows of SeriesRows: row j is row `rowOf[j]` of chunk `chunkOf[j]`. */
export interface Collected {
  readonly rows: number;
  readonly chunkOf: Int32Array;
  readonly rowOf: Int32Array;
  /** the rows j in (series, position) order; orderWithinSeries sorts each series further */
  readonly order: Int32Array;
  /** series lo + s holds order[seriesStart[s] .. seriesStart[s + 1]) */
  readonly seriesStart: Int32Array;
}
