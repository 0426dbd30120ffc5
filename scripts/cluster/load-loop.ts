/**
 * The request loop through the balancer: `clients` concurrent callers, each alternating a
 * whole-dataset answer and a cursor chain (short pauses between pages, so chains straddle
 * refreshes and restarts), every answer checked. Bounded by a request count and a deadline
 * as well as by stop(). A failure is any answer that is not right, and any request that
 * got no answer at all.
 */
import { checkWhole, get, wholePath, WrongAnswer, type Expectations } from './api-client.js';
import { CursorChain } from './cursor-chain.js';
import { idOf, type ClusterDataset } from './generations.js';

export interface LoopOptions {
  readonly base: string;
  readonly key: string;
  readonly datasets: readonly ClusterDataset[];
  readonly clients: number;
  readonly maxRequests: number;
  readonly deadlineMs: number;
  readonly chainLimit: number;
  readonly pageGapMs: number;
}

export class LoadLoop {
  requests = 0;
  /** answers that were right */
  answered = 0;
  readonly failures: string[] = [];
  /** when each failure happened (Date.now()), in the order of `failures` */
  readonly failedAt: number[] = [];
  /** "dataset generation" -> whole answers */
  readonly answersByGeneration = new Map<string, number>();
  /** "dataset generation" -> complete chains */
  readonly chainsByGeneration = new Map<string, number>();
  readonly chains: CursorChain[] = [];
  /** record id of every right whole answer, with its dataset */
  readonly wholes: Array<{ readonly dataset: ClusterDataset; readonly recordId: string }> = [];
  private stopped = false;
  private running: Promise<void> | null = null;
  private readonly deadline: number;

  constructor(
    private readonly o: LoopOptions,
    private readonly expect: Expectations,
  ) {
    this.deadline = Date.now() + o.deadlineMs;
  }

  start(): void {
    this.running = Promise.all(Array.from({ length: this.o.clients }, (_, i) => this.client(i))).then(() => undefined);
  }

  /** Resolves when the loop reached its request count or deadline. */
  async finished(): Promise<void> {
    await this.running;
  }

  /** Stops after the requests in flight (chains in progress are finished) and resolves then. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private get mayStart(): boolean {
    return !this.stopped && this.requests < this.o.maxRequests && Date.now() < this.deadline;
  }

  private async client(i: number): Promise<void> {
    for (let n = i; this.mayStart; n++) {
      // Kind alternates every request, dataset every two: each dataset gets both kinds.
      const d = this.o.datasets[Math.floor(n / 2) % this.o.datasets.length]!;
      if (n % 2 === 0) await this.whole(d);
      else await this.chain(d);
    }
  }

  private async whole(d: ClusterDataset): Promise<void> {
    this.requests++;
    try {
      const a = await get(this.o.base, wholePath(d), this.o.key);
      const g = checkWhole(this.expect, d, a);
      this.answered++;
      bump(this.answersByGeneration, `${idOf(d)} ${g}`);
      if (a.recordId !== null) this.wholes.push({ dataset: d, recordId: a.recordId });
    } catch (e) {
      this.fail(e);
    }
  }

  private async chain(d: ClusterDataset): Promise<void> {
    const c = new CursorChain(this.o.base, this.o.key, d, this.o.chainLimit);
    try {
      // A chain once begun is finished even past the bounds: a half chain proves nothing.
      while (!c.done) {
        this.requests++;
        await c.step();
        this.answered++;
        if (!c.done) await new Promise((r) => setTimeout(r, this.o.pageGapMs));
      }
      const g = c.check(this.expect);
      bump(this.chainsByGeneration, `${idOf(d)} ${g}`);
      this.chains.push(c);
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    const message = e instanceof WrongAnswer ? e.message : `no answer: ${(e as Error).message} ${String((e as { cause?: unknown }).cause ?? '')}`;
    this.failures.push(`${new Date().toISOString().slice(11, 23)} ${message}`);
    this.failedAt.push(Date.now());
  }
}

export function bump(m: Map<string, number>, key: string, by = 1): void {
  m.set(key, (m.get(key) ?? 0) + by);
}
