/**
 * A copy of `x` (plain objects, arrays and typed arrays: a TableTransfer) whose arrays on
 * SharedArrayBuffers all lie in ONE new SharedArrayBuffer, each at its own 8-aligned place.
 *
 * Why: a generation built as a few dozen buffers (a column, an index, a tree level each)
 * takes a few dozen allocations from the C allocator, among the build's scratch; when
 * the generation is released they leave holes that other sizes only partly fill, and freed
 * memory inside the allocator's heaps stays resident (about 75 MB of 245 after 140
 * publishes of a 2.7 MB generation under a 64 MiB budget, docs/snapshots.md#release). One
 * allocation per generation is mapped on its own once it is large, so freeing it gives the
 * pages back, and a small one leaves one hole that the next generation of the dataset fits.
 *
 * Buffers above `largest` stay where they are: each is mapped on its own already (the
 * allocator's mmap threshold, Dockerfile), and copying a large generation's columns would
 * hold it twice at the end of its build.
 */
export function packShared<T>(x: T, largest = Infinity): T {
  const places = new Map<SharedArrayBuffer, number>();
  let total = 0;
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || seen.has(v)) return;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof SharedArrayBuffer && v.buffer.byteLength <= largest && !places.has(v.buffer)) {
        total = Math.ceil(total / 8) * 8;
        places.set(v.buffer, total);
        total += v.buffer.byteLength;
      }
      return;
    }
    for (const child of Object.values(v)) visit(child);
  };
  visit(x);
  if (places.size <= 1) return x;
  const packed = new SharedArrayBuffer(Math.max(1, total));
  const bytes = new Uint8Array(packed);
  for (const [buffer, at] of places) bytes.set(new Uint8Array(buffer), at);
  const copies = new Map<object, unknown>();
  const copy = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const done = copies.get(v);
    if (done !== undefined) return done;
    let out: unknown;
    if (ArrayBuffer.isView(v)) {
      const at = v.buffer instanceof SharedArrayBuffer ? places.get(v.buffer) : undefined;
      if (at === undefined) out = v;
      else {
        const View = v.constructor as new (b: SharedArrayBuffer, offset: number, length: number) => ArrayBufferView;
        const width = (v as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
        out = new View(packed, at + v.byteOffset, v.byteLength / width);
      }
    } else if (Array.isArray(v)) {
      const a: unknown[] = [];
      copies.set(v, a);
      for (const item of v) a.push(copy(item));
      return a;
    } else {
      const o: Record<string, unknown> = {};
      copies.set(v, o);
      for (const [k, item] of Object.entries(v)) o[k] = copy(item);
      return o;
    }
    copies.set(v, out);
    return out;
  };
  return copy(x) as T;
}
