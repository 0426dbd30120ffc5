/**
 * Stable LSD radix sort of row indices by a key of non-negative integers below 2^53,
 * in 16-bit digits, skipping digits that are equal for every key. Loading sorts tens of
 * millions of rows; a comparator sort costs ~20x more there.
 */
export function radixSortIndices(keys: Float64Array): Int32Array {
  const n = keys.length;
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const v = keys[i]!;
    const h = Math.floor(v / 4294967296);
    hi[i] = h;
    lo[i] = v - h * 4294967296;
  }
  let src = new Int32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  let dst = new Int32Array(n);
  const count = new Int32Array(65537);
  const passes: Array<[Uint32Array, number]> = [
    [lo, 0],
    [lo, 16],
    [hi, 0],
    [hi, 16],
  ];
  for (const [words, shift] of passes) {
    count.fill(0);
    for (let i = 0; i < n; i++) count[((words[i]! >>> shift) & 0xffff) + 1]!++;
    let distinct = 0;
    for (let d = 1; d <= 65536; d++) if (count[d]! > 0) distinct++;
    if (distinct <= 1) continue;
    for (let d = 1; d <= 65536; d++) count[d]! += count[d - 1]!;
    for (let i = 0; i < n; i++) {
      const r = src[i]!;
      dst[count[(words[r]! >>> shift) & 0xffff]!++] = r;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}
