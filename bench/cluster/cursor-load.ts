/**
 * The cost of a cross-replica cursor (contract 12): a chain begun on replica A at an older
 * generation continues on replica B, which does not hold that generation and must load it
 * from the source. Each sample: page 1 on A with `generation=g` (A mints the cursor), then
 * page 2 on B (B loads g: the "load" latency), then page 3 on B (g now held: the "held"
 * latency). Every g is a generation B never held, so each "load" sample really loads.
 */
export interface CursorLoadResult {
  readonly samples: number;
  /** ms of each page-2 request on B (a load) */
  readonly loadMs: number[];
  /** ms of each page-3 request on B (no load) */
  readonly heldMs: number[];
  readonly query: string;
}

const PAGE = 1000;

async function timed(url: string, key: string): Promise<{ ms: number; cursor: string | null; generation: string | null }> {
  const t = performance.now();
  const r = await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } });
  const body = await r.text();
  const ms = performance.now() - t;
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${body.slice(0, 300)}`);
  return { ms, cursor: r.headers.get('x-next-cursor'), generation: r.headers.get('x-generation') };
}

/** `generations`: older generations at the source that neither replica holds yet. */
export async function cursorLoadCost(a: string, b: string, key: string, path: string, generations: readonly number[]): Promise<CursorLoadResult> {
  const query = `${path}${path.includes('?') ? '&' : '?'}latest=false&limit=${PAGE}`;
  const loadMs: number[] = [];
  const heldMs: number[] = [];
  for (const g of generations) {
    const first = await timed(`${a}${query}&generation=${g}`, key);
    if (first.generation !== String(g) || first.cursor === null)
      throw new Error(`generation=${g} on A answered generation ${first.generation}, cursor ${first.cursor}`);
    const second = await timed(`${b}${query}&generation=${g}&cursor=${encodeURIComponent(first.cursor)}`, key);
    if (second.generation !== String(g) || second.cursor === null) throw new Error(`page 2 on B answered generation ${second.generation}`);
    const third = await timed(`${b}${query}&generation=${g}&cursor=${encodeURIComponent(second.cursor)}`, key);
    if (third.generation !== String(g)) throw new Error(`page 3 on B answered generation ${third.generation}`);
    loadMs.push(second.ms);
    heldMs.push(third.ms);
  }
  return { samples: generations.length, loadMs, heldMs, query: `${query}&generation=g&cursor=...` };
}
