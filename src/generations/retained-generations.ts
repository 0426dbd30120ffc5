import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import type { Timers } from '../time/timers.js';
import type { CatalogChange, DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';
import { GenerationMemory, type GenerationBytes } from './generation-memory.js';
import type { GenerationHistory } from './generation-history.js';
import type { GenerationReaper } from './generation-reaper.js';
import type { GenerationSupply } from './generation-supply.js';
import type { RetainedEntry, RetentionBudget } from './retention-budget.js';
import type { SlotObserver } from './slot-observer.js';

/** Who else holds generations (the serving threads): told of every one loaded from history and every release. */
export interface RetainedListener {
  adopted(slot: DatasetSlot, g: Generation): void;
  released(slot: DatasetSlot, number: number): void;
}

export interface RetainedOptions {
  readonly registry: DatasetRegistry;
  readonly budget: RetentionBudget;
  readonly history: GenerationHistory;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: Logger;
  readonly listener?: RetainedListener;
  /** frees this thread's hold on what is released (generation-reaper.ts) */
  readonly reaper?: GenerationReaper;
  /** what a generation counts for (its table and its serving threads' bulk indexes); default: one serving thread */
  readonly memory?: GenerationMemory;
}

/** What /admin/status and /metrics show of the retained generations. */
export interface RetentionStats {
  readonly budgetBytes: number;
  readonly heldBytes: number;
  readonly liveBytes: number;
  readonly cursorIdleMs: number;
  readonly entries: readonly RetainedEntry[];
}

/**
 * The loading thread's keeper of superseded generations, across all datasets, under one
 * memory budget (RetentionBudget is the policy; this applies it): a generation a refresh
 * supersedes is retired into the budget, one loaded from history for a cursor or
 * `generation=N` joins it, every use touches it, an idle one is swept on the injected
 * timers, and whatever the budget lets go is dropped from the slot here and on every
 * serving thread (the listener), and each thread's reaper collects it, so its memory is freed.
 *
 * It hears of swaps as a SlotObserver placed after the serving pool, so the threads get the
 * new generation before they are told to release anything.
 */
export class RetainedGenerations implements SlotObserver, GenerationSupply {
  /** the live generation each slot had when last seen (to notice swaps) */
  private readonly live = new Map<DatasetSlot, Generation | null>();
  private timer: unknown = null;
  private stopped = false;
  private readonly memory: GenerationMemory;

  constructor(
    private readonly o: RetainedOptions,
    private readonly idleMs: number,
  ) {
    this.memory = o.memory ?? new GenerationMemory(1);
  }

  /** The bytes a generation counts for in the budget, /admin/status and /metrics. */
  bytesOf(g: Generation): GenerationBytes {
    return this.memory.of(g);
  }

  slotChecked(slot: DatasetSlot): void {
    const now = slot.current;
    const before = this.live.get(slot) ?? null;
    if (now === before) return;
    this.live.set(slot, now);
    if (now !== null) this.o.budget.forget(slot.id, now.number);
    // The budget first follows the live bytes (a percentage, floored by the default at the
    // largest live generation), then the superseded one is retired into it.
    const released = this.followLive();
    if (before !== null && now !== null && before.number !== now.number) {
      released.push(...this.o.budget.retire(slot.id, before.number, this.bytesOf(before).total, this.o.clock.now()));
    }
    this.apply(released);
  }

  ready(): void {}

  /**
   * A new catalog (contract 13): a removed dataset's generations, live and retained, leave
   * the budget (the slot dropped its references; the threads drop theirs); a re-floored
   * one's superseded generations went with the old floor, and its live one is new. What
   * the slots let go is collected in this thread at once (docs/snapshots.md#release).
   */
  catalogChanged(change: CatalogChange): void {
    const gone = new Set<string>([...change.removed, ...change.changed.map((c) => c.slot)].map((s) => s.id));
    for (const e of this.o.budget.stats().entries) if (gone.has(e.dataset)) this.o.budget.forget(e.dataset, e.generation);
    for (const slot of change.removed) this.live.delete(slot);
    for (const { slot } of change.changed) this.live.set(slot, slot.current);
    for (const g of change.dropped) this.o.reaper?.dropped(g);
    this.apply(this.followLive());
  }

  /** The budget follows the live generations' bytes; returns what it lets go. */
  private followLive(): RetainedEntry[] {
    let liveBytes = 0;
    let largest = 0;
    for (const g of this.live.values()) {
      const bytes = g === null ? 0 : this.bytesOf(g).total;
      liveBytes += bytes;
      largest = Math.max(largest, bytes);
    }
    return this.o.budget.setLiveBytes(liveBytes, largest);
  }

  async fetch(slot: DatasetSlot, number: number): Promise<Generation> {
    const held = slot.find(number);
    if (held !== null) {
      this.touched(slot, number);
      return held;
    }
    const g = await this.o.history.load(slot, number);
    // Another request's load of the same generation may have been adopted meanwhile.
    const again = slot.find(number);
    if (again !== null) return again;
    slot.adopt(g);
    this.o.listener?.adopted(slot, g);
    this.o.log.info('generation loaded from history', { dataset: slot.id, generation: number, bytes: this.bytesOf(g).total, load_ms: Math.round(g.loadMs) });
    // Over budget it goes at once; the request asking for it still holds it to the end.
    this.apply(this.o.budget.retire(slot.id, number, this.bytesOf(g).total, this.o.clock.now()));
    return g;
  }

  /** Only the recency moves: the idle timer, when it fires early, sweeps nothing and re-arms for the new time. */
  touched(slot: DatasetSlot, number: number): void {
    this.o.budget.touch(slot.id, number, this.o.clock.now());
  }

  stats(): RetentionStats {
    const s = this.o.budget.stats();
    return { budgetBytes: s.budgetBytes, heldBytes: s.heldBytes, liveBytes: s.liveBytes, cursorIdleMs: this.idleMs, entries: s.entries };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private apply(released: readonly RetainedEntry[]): void {
    for (const e of released) {
      const slot = this.o.registry.byName(e.dataset);
      if (slot === undefined || slot.current?.number === e.generation) continue;
      const g = slot.release(e.generation);
      if (g !== null) this.o.reaper?.dropped(g);
      this.o.listener?.released(slot, e.generation);
      this.o.log.info('retained generation released', { dataset: e.dataset, generation: e.generation, bytes: e.bytes });
    }
    this.arm();
  }

  /** One timer, at the earliest moment a retained generation turns idle; none while nothing is retained. */
  private arm(): void {
    if (this.timer !== null) this.o.timers.clearTimeout(this.timer);
    this.timer = null;
    const entries = this.o.budget.stats().entries;
    if (this.stopped || entries.length === 0) return;
    let due = Infinity;
    for (const e of entries) due = Math.min(due, e.lastUsedMs + this.idleMs);
    this.timer = this.o.timers.setTimeout(
      () => {
        this.timer = null;
        this.apply(this.o.budget.sweep(this.o.clock.now()));
      },
      Math.max(0, due - this.o.clock.now()),
    );
  }
}
