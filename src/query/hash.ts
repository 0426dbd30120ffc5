/** FNV-1a's offset basis: the seed of an unseeded hash. */
export const FNV_OFFSET = 0x811c9dc5;

/** One FNV-1a step: `h` after the code unit `c` (an int32; `>>> 0` gives the hash). */
export function fnvStep(h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193);
}

/** FNV-1a, 32 bits, over the UTF-16 code units of a string. Fingerprints, not security. */
export function fnv1a(text: string, seed = FNV_OFFSET): number {
  return fnvRun(text, seed) >>> 0;
}

/**
 * FNV-1a's steps over a string's units from `h`, as an int32 (`>>> 0` gives fnv1a): a hash
 * chained over parts stays a small integer, where an unsigned one above 2^31 would be a
 * heap number at every call that is not inlined (near-zero allocation: docs/decisions.md#allocation).
 */
export function fnvRun(text: string, h: number): number {
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i));
  return h;
}
