import { allocateDoorkeeper } from './row-doorkeeper.js';

/** Bytes of text one page slot holds: a page's rows joined longer than this are never kept. */
export const PAGE_TEXT_BYTES = 128 * 1024;
/** Rows one page slot holds: longer pages are never kept nor looked up. */
export const PAGE_MAX_ROWS = 512;
/**
 * A page is filed under its first row's block of 2^PAGE_KEY_SHIFT rows: a walk-forward
 * loop's next step starts a row or two later, so it finds the last step's page under the
 * same block (or, just past a block's end, under the one before).
 */
export const PAGE_KEY_SHIFT = 6;

/**
 * Int32 words of one page slot's tag, in PageArenaMemory.tags (16 words: one cache line):
 * [SEQ] version (even: stable, odd: being written, 0: never written), [KEY] first row's
 * block, [GEN] [LO] [HI] [KIND] the RowOwner, [COUNT] rows, [AT] where the text starts past
 * the slot's first byte (0-7: the offset that lets copies go eight bytes at a time).
 */
export const PAGE_TAG_WORDS = 16;
export const PAGE_SEQ = 0;
export const PAGE_KEY = 1;
export const PAGE_GEN = 2;
export const PAGE_LO = 3;
export const PAGE_HI = 4;
export const PAGE_KIND = 5;
export const PAGE_COUNT = 6;
export const PAGE_AT = 7;

/**
 * The page doorkeeper forgets after PAGES_SEEN_PER_SLOT marks per slot (at least
 * PAGES_SEEN_MIN): a block asked for again within about that many kept-or-declined pages is
 * a loop's next step, and one asked again later would find its page evicted anyway. Random
 * decision dates that come back only after thousands of other pages (the bench's 20,000
 * paths) are then not kept at all.
 */
export const PAGES_SEEN_PER_SLOT = 4;
export const PAGES_SEEN_MIN = 1024;

/** Bytes between two slots' text: the text plus room to start it at any offset modulo 8. */
export const PAGE_STRIDE = PAGE_TEXT_BYTES + 8;

/** What one slot costs: text, its rows and their ends (Int32 each), and its tag. */
export const PAGE_SLOT_COST = PAGE_STRIDE + PAGE_MAX_ROWS * 8 + PAGE_TAG_WORDS * 4;

/**
 * The shared memory of a page arena: the last pages written, each as its physical rows,
 * the end of each row's text, and the text of the rows joined as the page wrote them, on
 * SharedArrayBuffers every serving thread maps (posted with the row arena, never copied).
 */
export interface PageArenaMemory {
  readonly tags: SharedArrayBuffer;
  /** slot s's rows start at Int32 index s·PAGE_MAX_ROWS */
  readonly rows: SharedArrayBuffer;
  /** the end of each row's text, from the text's start; a row's text starts one past the previous end (the separator) */
  readonly ends: SharedArrayBuffer;
  /** slot s's text starts at s·PAGE_STRIDE + its AT */
  readonly bytes: SharedArrayBuffer;
  /** the doorkeeper's bits: a page is kept when its block was asked for before (row-doorkeeper.ts) */
  readonly seen: SharedArrayBuffer;
}

/** Memory for as many page slots as fit in maxBytes; null when not even one does. */
export function allocatePageArena(maxBytes: number): PageArenaMemory | null {
  const slots = Math.floor(maxBytes / PAGE_SLOT_COST);
  if (slots < 1) return null;
  return {
    tags: new SharedArrayBuffer(slots * PAGE_TAG_WORDS * 4),
    rows: new SharedArrayBuffer(slots * PAGE_MAX_ROWS * 4),
    ends: new SharedArrayBuffer(slots * PAGE_MAX_ROWS * 4),
    bytes: new SharedArrayBuffer(slots * PAGE_STRIDE),
    seen: allocateDoorkeeper(slots * PAGES_SEEN_PER_SLOT, PAGES_SEEN_MIN),
  };
}
