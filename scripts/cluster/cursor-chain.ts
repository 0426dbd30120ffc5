/**
 * One cursor chain walked through the balancer, a page at a time (a caller may pause
 * between pages, across a publish or a rolling restart). Contract 2 and 12: every page is
 * answered from the chain's first generation, by whichever replica receives it, and the
 * pages together are exactly that generation's rows.
 */
import { answerGeneration, dataOf, get, WrongAnswer, type Expectations } from './api-client.js';
import { pathOf, type ClusterDataset } from './generations.js';

export class CursorChain {
  private readonly rows: unknown[] = [];
  private cursor: string | null = null;
  private started = false;
  /** the chain's generation, from its first page */
  generation: number | null = null;
  /** x-request-id of every page, in order */
  readonly recordIds: string[] = [];

  constructor(
    private readonly base: string,
    private readonly key: string,
    readonly dataset: ClusterDataset,
    private readonly limit: number,
  ) {}

  get done(): boolean {
    return this.started && this.cursor === null;
  }

  get pages(): number {
    return this.recordIds.length;
  }

  private get query(): string {
    return `${pathOf(this.dataset)}?latest=false&limit=${this.limit}`;
  }

  /** Fetches the next page; throws WrongAnswer when it is not a page of the chain's generation. */
  async step(): Promise<void> {
    if (this.done) throw new Error('the chain is complete');
    const path = this.cursor === null ? this.query : `${this.query}&cursor=${encodeURIComponent(this.cursor)}`;
    const a = await get(this.base, path, this.key);
    const what = `chain ${this.query} page ${this.pages + 1} (${a.recordId})`;
    const g = answerGeneration(a, what);
    if (a.recordId !== null) this.recordIds.push(a.recordId);
    if (this.generation === null) this.generation = g;
    else if (g !== this.generation) throw new WrongAnswer(`${what}: generation ${g} in a chain of generation ${this.generation}`);
    this.rows.push(...dataOf(a));
    this.started = true;
    const next = (a.body?.['next_cursor'] as string | undefined) ?? null;
    if (next === null && a.body?.['has_more'] !== false)
      throw new WrongAnswer(`${what}: no next_cursor but has_more is ${JSON.stringify(a.body?.['has_more'])}`);
    this.cursor = next;
  }

  /** Walks the rest of the chain, pausing `pauseMs` between pages. */
  async finish(pauseMs = 0): Promise<void> {
    while (!this.done) {
      await this.step();
      if (pauseMs > 0 && !this.done) await new Promise((r) => setTimeout(r, pauseMs));
    }
  }

  /** Once done: the pages together must be exactly the generation's rows. */
  check(expect: Expectations): number {
    if (!this.done || this.generation === null) throw new Error('check() before the chain is complete');
    const want = expect.rowsJson(this.dataset, this.generation);
    if (want === undefined) throw new WrongAnswer(`chain ${this.query}: generation ${this.generation} was never published`);
    if (JSON.stringify(this.rows) !== want)
      throw new WrongAnswer(
        `chain ${this.query} (${this.pages} pages): rows differ from generation ${this.generation}'s: ${JSON.stringify(this.rows).slice(0, 300)}`,
      );
    return this.generation;
  }
}
