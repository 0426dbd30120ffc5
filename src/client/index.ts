import { Table, tableFromIPC, tableToIPC, type RecordBatch, type Schema } from 'apache-arrow';
import type { components } from './openapi-types.js';
import { PitcacheError } from './pitcache-error.js';

export { PitcacheError };
export type QueryEnvelope = components['schemas']['QueryEnvelope'];
export type WalkForwardEnvelope = components['schemas']['WalkForwardEnvelope'];
export type VintagesEnvelope = components['schemas']['VintagesEnvelope'];
export type JoinEnvelope = components['schemas']['JoinEnvelope'];
export type Catalog = components['schemas']['Catalog'];
export type CatalogDataset = components['schemas']['CatalogDataset'];
export type Params = Record<string, string | number | boolean | readonly string[] | undefined>;
/** One event of a join given as a plain object: `at` (RFC 3339 or YYYY-MM-DD, or a Date), each series-key column, any other column passed through. */
export type JoinEvent = Record<string, string | number | boolean | Date | null>;
/** asof_join's query (contract 15). */
export interface JoinParams {
  readonly columns?: string | readonly string[];
  readonly max_age?: number;
  readonly before_floor?: 'floor' | 'skip' | 'error';
  readonly generation?: number;
}

export interface PitcacheClientOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch?: typeof fetch;
  /** retries on 429 and 503, each after the server's Retry-After (default 3) */
  readonly maxRetries?: number;
  /** injectable for tests; default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** A typed, fetch-based client of the pitcache HTTP API (docs/api.md). */
export class PitcacheClient {
  private readonly fetchFn: typeof fetch;
  private readonly maxRetries: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: PitcacheClientOptions) {
    this.fetchFn = opts.fetch ?? globalThis.fetch;
    this.maxRetries = opts.maxRetries ?? 3;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** The datasets this key may read, with their columns, series key, filters, floor and what is loaded (contract 13). */
  catalog(): Promise<Catalog> {
    return this.json<Catalog>('/catalog', {});
  }

  query(product: string, dataset: string, params: Params = {}): Promise<QueryEnvelope> {
    return this.json<QueryEnvelope>(`/${product}/${dataset}`, params);
  }

  /** Every page of one cursor chain (docs/api.md#pages). */
  pages(product: string, dataset: string, params: Params = {}): AsyncGenerator<QueryEnvelope> {
    return this.chain<QueryEnvelope>(`/${product}/${dataset}`, params);
  }

  /** Every page of a walk-forward (contract 10): decision_from and decision_to are required. */
  walkForward(product: string, dataset: string, params: Params & { decision_from: string; decision_to: string }): AsyncGenerator<WalkForwardEnvelope> {
    return this.chain<WalkForwardEnvelope>(`/${product}/${dataset}/walk_forward`, params);
  }

  /** Every page of a revision history (contract 11). */
  vintages(product: string, dataset: string, params: Params = {}): AsyncGenerator<VintagesEnvelope> {
    return this.chain<VintagesEnvelope>(`/${product}/${dataset}/vintages`, params);
  }

  /**
   * Every page of a chain as one apache-arrow Table (`format=arrow`, cursors from the
   * x-next-cursor header), with the stored Arrow types. `endpoint` picks the plain query
   * (default), `walk_forward` or `vintages`; params are that endpoint's.
   */
  async arrow(product: string, dataset: string, params: Params = {}, endpoint: '' | 'walk_forward' | 'vintages' = ''): Promise<Table> {
    const path = `/${product}/${dataset}${endpoint === '' ? '' : `/${endpoint}`}`;
    const batches: RecordBatch[] = [];
    let schema: Schema | null = null;
    let cursor: string | null = null;
    do {
      const res = await this.get(path, { ...params, format: 'arrow', ...(cursor === null ? {} : { cursor }) });
      const page = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
      schema ??= page.schema;
      batches.push(...page.batches);
      cursor = res.headers.get('x-next-cursor');
    } while (cursor !== null);
    return batches.length === 0 ? new Table(schema!) : new Table(batches);
  }

  /**
   * The point-in-time join of events (contract 15): for each event, the row that was
   * knowable at its `at`, one row per event in the events' order. Events as an apache-arrow
   * Table (sent as an Arrow stream; `at` a Timestamp or Date32, keeping every column's
   * type) or as rows (sent as JSON); the answer is a Table with the stored Arrow types and
   * `floor_applied` last.
   */
  async asofJoin(product: string, dataset: string, events: Table | readonly JoinEvent[], params: JoinParams = {}): Promise<Table> {
    const url = this.url(`/${product}/${dataset}/asof_join`, { ...params, format: 'arrow' });
    const body =
      events instanceof Table
        ? { bytes: tableToIPC(events, 'stream'), type: 'application/vnd.apache.arrow.stream' }
        : { bytes: Buffer.from(JSON.stringify(events.map((e) => (e.at instanceof Date ? { ...e, at: e.at.toISOString() } : e)))), type: 'application/json' };
    const res = await this.send(url, { method: 'POST', body: body.bytes, headers: { 'x-api-key': this.opts.apiKey, 'content-type': body.type } });
    return tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  }

  private async *chain<T extends { has_more: boolean; next_cursor?: string }>(path: string, params: Params): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const page: T = await this.json<T>(path, cursor === undefined ? params : { ...params, cursor });
      yield page;
      cursor = page.has_more ? page.next_cursor : undefined;
    } while (cursor !== undefined);
  }

  private async json<T>(path: string, params: Params): Promise<T> {
    const res = await this.get(path, params);
    return (await res.json()) as T;
  }

  /** GET with the key; 429 and 503 are retried after Retry-After, up to maxRetries times. */
  async get(path: string, params: Params): Promise<Response> {
    return this.send(this.url(path, params), { headers: { 'x-api-key': this.opts.apiKey } });
  }

  /** The path on the server with the parameters given (lists joined by commas, undefined ones left out). */
  private url(path: string, params: Params | JoinParams): URL {
    const url = new URL(path, this.opts.baseUrl);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, Array.isArray(v) ? v.join(',') : String(v));
    return url;
  }

  /** The request sent; 429 and 503 are retried after Retry-After, up to maxRetries times; any other failure is a PitcacheError. */
  private async send(url: URL, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.fetchFn(url, init);
      if (res.ok) return res;
      if ((res.status === 429 || res.status === 503) && attempt < this.maxRetries) {
        const seconds = Number(res.headers.get('retry-after') ?? '1');
        await res.body?.cancel();
        await this.sleep((Number.isFinite(seconds) && seconds >= 0 ? seconds : 1) * 1000);
        continue;
      }
      throw await toError(res);
    }
  }
}

async function toError(res: Response): Promise<PitcacheError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; param?: string }; record_id?: string };
    return new PitcacheError(res.status, body.error?.code ?? 'unknown', body.error?.message ?? text, body.error?.param, body.record_id);
  } catch {
    return new PitcacheError(res.status, 'unknown', text, undefined, res.headers.get('x-request-id') ?? undefined);
  }
}
