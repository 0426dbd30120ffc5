import { allocatePageArena, type PageArenaMemory } from './page-arena.js';
import { allocateDoorkeeper, type RowAdmission } from './row-doorkeeper.js';

/** Bytes of one slot: a row rendered longer than this is never kept. */
export const ROW_SLOT_BYTES = 512;

/**
 * Int32 words of one slot's tag, in RowArenaMemory.tags:
 * [SEQ] version (even: stable, odd: being written, 0: never written), [ROW] physical row,
 * [GEN] [LO] [HI] [KIND] the RowOwner, [LEN] bytes of text, [REF] 1 when the row was
 * copied (or kept) since the slot was last contested: a hint for which of a row's two
 * candidate slots to take (8 words = 32 bytes, two slots per cache line).
 */
export const TAG_WORDS = 8;
export const TAG_SEQ = 0;
export const TAG_ROW = 1;
export const TAG_GEN = 2;
export const TAG_LO = 3;
export const TAG_HI = 4;
export const TAG_KIND = 5;
export const TAG_LEN = 6;
export const TAG_REF = 7;

/**
 * The shared memory of one row arena: slot tags and slot bytes, on SharedArrayBuffers so
 * that every serving thread maps the same memory (posted in the serving threads' init
 * message, never copied). Made once at start; RowCache is a thread's view of it.
 */
export interface RowArenaMemory {
  readonly tags: SharedArrayBuffer;
  readonly bytes: SharedArrayBuffer;
  /** the doorkeeper's bits when rows are kept on their second render (row-doorkeeper.ts); null: kept at once */
  readonly seen: SharedArrayBuffer | null;
  /** whole pages kept beside the rows (page-arena.ts); null: none */
  readonly pages: PageArenaMemory | null;
}

/**
 * Memory for at most maxBytes of row text (at least one slot), in whole power-of-two slots,
 * with the admission every thread that maps it follows, and a page arena of pageBytes (none when it holds no page).
 */
export function allocateRowArena(maxBytes: number, admission: RowAdmission, pageBytes = 0): RowArenaMemory {
  let slots = 1;
  while (slots * 2 * ROW_SLOT_BYTES <= maxBytes) slots *= 2;
  return {
    tags: new SharedArrayBuffer(slots * TAG_WORDS * 4),
    bytes: new SharedArrayBuffer(slots * ROW_SLOT_BYTES),
    seen: admission === 'second' ? allocateDoorkeeper(slots) : null,
    pages: allocatePageArena(pageBytes),
  };
}
