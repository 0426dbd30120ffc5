import type { Clock } from '../time/clock.js';
import type { DatasetSlot, SlotRetention } from './dataset-slot.js';
import type { Generation } from './generation.js';
import { RetentionBudget, type Budget, type RetainedEntry } from './retention-budget.js';

/** Where the loading thread's decisions go besides its own slots: the serving threads (serving-pool.ts). */
export interface RetentionListener {
  /** `slot` now holds exactly `slot.retainedNumbers()` of its superseded generations. */
  retainedChanged(slot: DatasetSlot): void;
}

export interface RetentionStats {
  readonly budgetBytes: number;
  readonly heldBytes: number;
  readonly liveBytes: number;
  readonly cursorIdleMs: number;
  readonly generations: readonly RetainedEntry[];
}

/**
 * The loading thread's owner of superseded generations (contract 2, 12; issue 14): every
 * slot of the process reports its swaps and cursor uses here, and one RetentionBudget
 * decides, across all datasets, what is released: the least recently used when the held
 * bytes pass the budget, and whatever no cursor touched for `cursorIdleMs`. Idle ones are
 * swept whenever the process looks: at every check of the source (each refresh interval),
 * every swap, and every read of the stats (/admin/status, /metrics); no timer of its own,
 * so the loader's schedule stays the only one. A release drops the slot's reference here and is relayed to every
 * serving thread, so the memory can go.
 */
export class GenerationRetention implements SlotRetention {
  private readonly budget: RetentionBudget;
  private readonly slots = new Map<string, DatasetSlot>();
  private readonly live = new Map<string, number>();
  private listener: RetentionListener | null = null;

  constructor(
    budget: Budget,
    private readonly cursorIdleMs: number,
    private readonly clock: Clock,
  ) {
    this.budget = new RetentionBudget(budget, cursorIdleMs);
  }

  /** The serving threads (set once, before any generation is loaded). */
  relayTo(listener: RetentionListener): void {
    this.listener = listener;
  }

  swapped(slot: DatasetSlot, prev: Generation | null, next: Generation): void {
    this.slots.set(slot.id, slot);
    this.budget.forget(slot.id, next.number);
    this.live.set(slot.id, next.table.byteSize);
    let liveBytes = 0;
    let largest = 0;
    for (const b of this.live.values()) {
      liveBytes += b;
      if (b > largest) largest = b;
    }
    const released = this.budget.setLiveBytes(liveBytes, largest);
    if (prev !== null) released.push(...this.budget.retire(slot.id, prev.number, prev.table.byteSize, this.clock.now()));
    released.push(...this.budget.sweep(this.clock.now()));
    this.release(released, slot);
  }

  used(slot: DatasetSlot, number: number): void {
    this.budget.touch(slot.id, number, this.clock.now());
  }

  /** A serving thread answered a cursor from this generation. */
  usedBy(dataset: string, number: number): void {
    this.budget.touch(dataset, number, this.clock.now());
  }

  /** Releases the generations idle for the idle time; returns them. */
  sweep(): RetainedEntry[] {
    const released = this.budget.sweep(this.clock.now());
    this.release(released, null);
    return released;
  }

  /** What is held now (idle generations swept first). */
  stats(): RetentionStats {
    this.sweep();
    const s = this.budget.stats();
    return { budgetBytes: s.budgetBytes, heldBytes: s.heldBytes, liveBytes: s.liveBytes, cursorIdleMs: this.cursorIdleMs, generations: s.entries };
  }

  /** Drops the released generations and tells the serving threads; `swapped` is told of even without a release (its new generation list). */
  private release(entries: readonly RetainedEntry[], swapped: DatasetSlot | null): void {
    const changed = new Set<DatasetSlot>();
    if (swapped !== null) changed.add(swapped);
    for (const e of entries) {
      const slot = this.slots.get(e.dataset);
      if (slot === undefined) continue;
      slot.release(e.generation);
      changed.add(slot);
    }
    for (const slot of changed) this.listener?.retainedChanged(slot);
  }
}
