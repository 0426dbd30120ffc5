import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';

/**
 * Why a generation asked for by number cannot be served (contract 12): its history
 * manifest or object is gone (or it was never published), it was refused at load
 * (sha256, schema, contract 6), or the source cannot be reached just now.
 */
export type UnavailableKind = 'gone' | 'refused' | 'unreachable';

export class GenerationUnavailableError extends Error {
  constructor(
    readonly kind: UnavailableKind,
    message: string,
  ) {
    super(message);
    this.name = 'GenerationUnavailableError';
  }
}

/**
 * Where a serving thread gets a generation it does not hold (a cursor of another replica,
 * `generation=N`, one the memory budget released): the loading thread loads it from the
 * source's history/ once, however many ask, and hands it to every thread.
 */
export interface GenerationSupply {
  /** Resolves with generation `number` of the slot's dataset; rejects with GenerationUnavailableError. */
  fetch(slot: DatasetSlot, number: number): Promise<Generation>;
  /** A request was answered from a superseded generation: it is in use (the budget's recency and idle clock). */
  touched(slot: DatasetSlot, number: number): void;
}
