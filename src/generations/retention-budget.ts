export { parseDuration } from '../time/duration.js';

/**
 * Which superseded generations stay in memory for the cursor chains started on them
 * (contract 2, 12), across ALL datasets of the process:
 *
 * - one byte budget for the whole process (not per dataset: nine datasets each allowed a
 *   GiB could hold nine GiB beyond the live data, while one dataset over a GiB could keep
 *   none); a budget given as a percentage is of the live generations' bytes;
 * - a generation no cursor has touched for `idleMs` is released even under budget (a
 *   finished backtest must not pin memory for hours);
 * - over budget, the least recently used goes first;
 * - the live generations never count against it and are never released here.
 *
 * A released generation is not lost: with the source's history/ (contract 12) it is loaded
 * again on demand. This class is the policy only: it says what to release; the owner drops
 * the references (on every serving thread) so the memory can go.
 */
export type Budget =
  | { readonly kind: 'bytes'; readonly bytes: number }
  /**
   * A percentage of the live generations' bytes, never less than the largest live
   * generation: a server of one dataset (whose superseded generation is about 100% of its
   * live bytes) must still keep the generation a cursor chain started on across a refresh,
   * or every such chain reloads from history. Bytes are the way to ask for less.
   */
  | { readonly kind: 'percent'; readonly percent: number };

export interface RetainedEntry {
  readonly dataset: string;
  readonly generation: number;
  readonly bytes: number;
  /** ms since epoch of the last cursor that used it (or of its retirement) */
  readonly lastUsedMs: number;
}

/** `--retain-memory`: `2GiB`, `512MiB`, `1500000000` (bytes), or `25%` (of the live generations' bytes, at least the largest). */
export function parseBudget(text: string): Budget {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(text);
  if (pct !== null) {
    const percent = Number(pct[1]);
    if (percent > 1000) throw new Error(`--retain-memory: ${text} is more than 1000% of the live data`);
    return { kind: 'percent', percent };
  }
  const m = /^(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?$/.exec(text);
  if (m === null) throw new Error(`--retain-memory: "${text}" is not a size (e.g. 2GiB, 512MiB, 1000000) or a percentage of the live data (e.g. 25%)`);
  const unit = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[m[2] ?? 'B']!;
  return { kind: 'bytes', bytes: Math.floor(Number(m[1]) * unit) };
}

export class RetentionBudget {
  /** insertion order = recency: a touch re-inserts */
  private readonly entries = new Map<string, RetainedEntry>();
  private liveBytes = 0;
  private largestLive = 0;
  private held = 0;

  constructor(
    private readonly budget: Budget,
    private readonly idleMs: number,
  ) {}

  /** Bytes the retained generations may hold now. */
  limit(): number {
    const b = this.budget;
    if (b.kind === 'bytes') return b.bytes;
    return Math.max(Math.floor((this.liveBytes * b.percent) / 100), this.largestLive);
  }

  /** The live generations' bytes changed (a swap); a percentage budget follows them. Returns what to release. */
  setLiveBytes(bytes: number, largest = 0): RetainedEntry[] {
    this.liveBytes = bytes;
    this.largestLive = largest;
    return this.shrink();
  }

  /** A generation was superseded: keep it if it fits. Returns what to release (possibly itself). */
  retire(dataset: string, generation: number, bytes: number, nowMs: number): RetainedEntry[] {
    const key = keyOf(dataset, generation);
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(key, old);
    const e: RetainedEntry = { dataset, generation, bytes, lastUsedMs: nowMs };
    // Larger than the whole budget: it could never fit, so it must not evict what does.
    if (bytes > this.limit()) return [e];
    this.entries.set(key, e);
    this.held += bytes;
    return this.shrink();
  }

  /** A cursor used this generation: it is recent again. False when it is not retained. */
  touch(dataset: string, generation: number, nowMs: number): boolean {
    const key = keyOf(dataset, generation);
    const e = this.entries.get(key);
    if (e === undefined) return false;
    this.entries.delete(key);
    this.entries.set(key, { ...e, lastUsedMs: nowMs });
    return true;
  }

  /** A generation became live again or was dropped by its owner: it no longer counts. */
  forget(dataset: string, generation: number): void {
    const key = keyOf(dataset, generation);
    const e = this.entries.get(key);
    if (e !== undefined) this.remove(key, e);
  }

  /** Generations idle for `idleMs` or more at `nowMs`: released. Call periodically. */
  sweep(nowMs: number): RetainedEntry[] {
    const out: RetainedEntry[] = [];
    for (const [key, e] of this.entries) {
      if (nowMs - e.lastUsedMs < this.idleMs) continue;
      this.remove(key, e);
      out.push(e);
    }
    return out;
  }

  has(dataset: string, generation: number): boolean {
    return this.entries.has(keyOf(dataset, generation));
  }

  /** For /admin/status and /metrics. */
  stats(): { budgetBytes: number; heldBytes: number; liveBytes: number; entries: RetainedEntry[] } {
    return { budgetBytes: this.limit(), heldBytes: this.held, liveBytes: this.liveBytes, entries: [...this.entries.values()] };
  }

  private shrink(): RetainedEntry[] {
    const out: RetainedEntry[] = [];
    const limit = this.limit();
    for (const [key, e] of this.entries) {
      if (this.held <= limit) break;
      this.remove(key, e);
      out.push(e);
    }
    return out;
  }

  private remove(key: string, e: RetainedEntry): void {
    this.entries.delete(key);
    this.held -= e.bytes;
  }
}

function keyOf(dataset: string, generation: number): string {
  return `${dataset}#${generation}`;
}
