import type { Table } from '../../src/store/table.js';

/**
 * Every typed array reachable from a loaded Table (its columns, dictionaries, indexes, the
 * trees' and step lists' private arrays), by the path it was found at. Each view is counted
 * once by identity, and a view over the same bytes as one already seen is counted once too,
 * so aliases (a Date32 effective column read as effectiveUs, a tree's leaves that are keyThr)
 * are not counted twice. What a generation really holds, measured from the structure itself
 * rather than from the table's own `byteSize` arithmetic.
 */
export function tableArrays(t: Table): Map<string, number> {
  const out = new Map<string, number>();
  const seenObjects = new Set<object>();
  const seenBytes = new Map<ArrayBufferLike, Array<[number, number]>>();
  const overlaps = (v: ArrayBufferView): boolean => {
    const spans = seenBytes.get(v.buffer) ?? [];
    seenBytes.set(v.buffer, spans);
    const a = v.byteOffset;
    const b = a + v.byteLength;
    if (spans.some(([x, y]) => a < y && x < b)) return true;
    spans.push([a, b]);
    return false;
  };
  const visit = (v: unknown, path: string): void => {
    if (typeof v !== 'object' || v === null || seenObjects.has(v)) return;
    seenObjects.add(v);
    if (ArrayBuffer.isView(v)) {
      if (v.byteLength > 0 && !overlaps(v)) out.set(path, (out.get(path) ?? 0) + v.byteLength);
      return;
    }
    if (v instanceof Map) {
      // a dictionary's value -> code map: JS heap, not typed arrays (counted by RSS tests)
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((x, i) => visit(x, typeof x === 'object' && x !== null && 'name' in x ? `${path}.${String((x as { name: unknown }).name)}` : `${path}[${i}]`));
      return;
    }
    for (const k of Object.getOwnPropertyNames(v)) visit((v as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`);
  };
  // Columns first: an index aliasing a column's bytes is then not counted again.
  visit(t.columns, 'columns');
  visit(t, '');
  return out;
}

/** The sum of tableArrays(t): the bytes of every typed array the table holds. */
export function tableArrayBytes(t: Table): number {
  let n = 0;
  for (const b of tableArrays(t).values()) n += b;
  return n;
}
