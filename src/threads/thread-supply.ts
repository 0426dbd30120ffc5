import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { Generation } from '../generations/generation.js';
import { GenerationUnavailableError, type GenerationSupply, type UnavailableKind } from '../generations/generation-supply.js';
import type { FromServing } from './serving-messages.js';

/** A serving thread tells the loading thread of a use at most this often per generation (the budget's recency needs no more). */
const TOUCH_EVERY_MS = 1000;

interface Waiting {
  readonly slot: DatasetSlot;
  readonly number: number;
  resolve(g: Generation): void;
  reject(e: Error): void;
}

/**
 * A serving thread's GenerationSupply: it asks the loading thread (serving-pool.ts), which
 * loads the generation once for all threads and sends it here as a 'retained' message
 * right before the 'fetched' reply, so the reply finds it in the slot.
 */
export class ThreadSupply implements GenerationSupply {
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();
  private readonly lastTouch = new Map<string, number>();

  constructor(
    private readonly send: (m: FromServing) => void,
    private readonly clock: Clock,
  ) {}

  fetch(slot: DatasetSlot, number: number): Promise<Generation> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { slot, number, resolve, reject });
      this.send({ type: 'fetch', id, dataset: slot.id, number });
    });
  }

  touched(slot: DatasetSlot, number: number): void {
    const key = `${slot.id}#${number}`;
    const now = this.clock.now();
    if (now - (this.lastTouch.get(key) ?? -Infinity) < TOUCH_EVERY_MS) return;
    this.lastTouch.set(key, now);
    this.send({ type: 'touch', dataset: slot.id, number });
  }

  /** The loading thread's reply to fetch `id`. */
  fetched(id: number, error: { readonly kind: UnavailableKind; readonly message: string } | null): void {
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    if (error !== null) return w.reject(new GenerationUnavailableError(error.kind, error.message));
    const g = w.slot.find(w.number);
    if (g !== null) w.resolve(g);
    else w.reject(new GenerationUnavailableError('gone', `generation ${w.number} of ${w.slot.id} did not reach this thread`));
  }

  /** The budget released a generation: its touches need no memory any more. */
  released(slot: DatasetSlot, number: number): void {
    this.lastTouch.delete(`${slot.id}#${number}`);
  }
}
