/**
 * Requests to pitcache (through the balancer or to one replica) and the check of every
 * answer against the rows the test published: an answer is right when it is a 200 whose
 * `x-generation` header and `metadata.generation` name one published generation and whose
 * rows are exactly that generation's rows.
 */
import { expectedRowsJson, idOf, pathOf, type ClusterDataset } from './generations.js';

export interface Answer {
  readonly status: number;
  /** x-generation, or null when absent */
  readonly generation: number | null;
  /** x-request-id: the record id in the answering replica's access log */
  readonly recordId: string | null;
  readonly body: Record<string, unknown> | null;
  readonly text: string;
}

export async function get(base: string, path: string, key: string | null): Promise<Answer> {
  const r = await fetch(base + path, { headers: { 'accept-encoding': 'identity', ...(key === null ? {} : { 'x-api-key': key }) } });
  const text = await r.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const g = r.headers.get('x-generation');
  return { status: r.status, generation: g === null ? null : Number(g), recordId: r.headers.get('x-request-id'), body, text };
}

/** What each published generation of each dataset must answer. */
export class Expectations {
  private readonly rows = new Map<string, Map<number, string>>();

  add(d: ClusterDataset, g: number): void {
    const byGen = this.rows.get(idOf(d)) ?? new Map<number, string>();
    byGen.set(g, expectedRowsJson(d, g));
    this.rows.set(idOf(d), byGen);
  }

  /** The JSON of generation g's rows, or undefined when g was never published. */
  rowsJson(d: ClusterDataset, g: number): string | undefined {
    return this.rows.get(idOf(d))?.get(g);
  }
}

/** A wrong answer: a short reason and enough of the answer to look into it. */
export class WrongAnswer extends Error {}

/** The generation an answer is from; throws WrongAnswer unless it is a 200 naming one generation twice alike. */
export function answerGeneration(a: Answer, what: string): number {
  if (a.status !== 200) throw new WrongAnswer(`${what}: status ${a.status}: ${a.text.slice(0, 300)}`);
  const meta = a.body?.['metadata'] as Record<string, unknown> | undefined;
  if (a.generation === null || meta?.['generation'] !== a.generation)
    throw new WrongAnswer(`${what}: x-generation ${a.generation} vs metadata.generation ${JSON.stringify(meta?.['generation'])}`);
  return a.generation;
}

export function dataOf(a: Answer): unknown[] {
  return (a.body?.['data'] as unknown[] | undefined) ?? [];
}

/** Checks one whole-dataset answer (`latest=false`, one page); returns its generation. */
export function checkWhole(expect: Expectations, d: ClusterDataset, a: Answer): number {
  const what = `${pathOf(d)} (${a.recordId})`;
  const g = answerGeneration(a, what);
  const want = expect.rowsJson(d, g);
  if (want === undefined) throw new WrongAnswer(`${what}: generation ${g} was never published`);
  if (JSON.stringify(dataOf(a)) !== want) throw new WrongAnswer(`${what}: rows differ from generation ${g}'s: ${JSON.stringify(dataOf(a)).slice(0, 300)}`);
  return g;
}

/** The query of a whole-dataset answer in one page. */
export const wholePath = (d: ClusterDataset): string => `${pathOf(d)}?latest=false&limit=10000`;
