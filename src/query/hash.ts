/** FNV-1a's offset basis: the seed of an unseeded hash. */
export const FNV_OFFSET = 0x811c9dc5;

/** One FNV-1a step: `h` after the code unit `c` (an int32; `>>> 0` gives the hash). */
export function fnvStep(h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193);
}

/** FNV-1a, 32 bits, over the UTF-16 code units of a string. Fingerprints, not security. */
export function fnv1a(text: string, seed = FNV_OFFSET): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i));
  return h >>> 0;
}
