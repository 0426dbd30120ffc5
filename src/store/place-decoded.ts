import type { IntCtor } from './arrow-column.js';
import type { DecodedColumn } from './decode-arrow.js';
import { scatter32, scatter8, scatterF64, scatterInto } from './scatter.js';
import { allocF64, allocI32, allocShared, allocU8 } from './shared-memory.js';

/**
 * Columns that were decoded in snapshot order (the ones the row order is computed from, or
 * all of them for tools), moved to the table's row order on shared memory.
 */
export function placeDecoded(c: DecodedColumn, rank: Int32Array): DecodedColumn {
  const n = rank.length;
  const validity = c.validity === null ? null : placed8(c.validity, rank);
  switch (c.kind) {
    case 'string': {
      const codes = allocI32(n);
      scatter32(c.codes, codes, rank, 0);
      return { ...c, validity, codes };
    }
    case 'date32': {
      const values = allocI32(n);
      scatter32(c.values, values, rank, 0);
      return { ...c, validity, values };
    }
    case 'timestamp': {
      const values = allocF64(n);
      scatterF64(c.values, values, rank, 0);
      return { ...c, validity, values };
    }
    case 'bool':
      return { ...c, validity, values: placed8(c.values, rank) };
    case 'float': {
      const values = c.values instanceof Float32Array ? allocShared(Float32Array, n) : allocF64(n);
      scatterInto(c.values, values, rank, 0);
      return { ...c, validity, values };
    }
    case 'int': {
      const values = allocShared(c.values.constructor as IntCtor, n);
      scatterInto(c.values, values, rank, 0);
      return { ...c, validity, values };
    }
    case 'int64': {
      const values = allocShared(BigInt64Array, n);
      scatterInto(c.values, values, rank, 0);
      return { ...c, validity, values };
    }
  }
}

/** Rows already in order: the column as it is when it lives on shared memory, else a shared copy. */
export function sharedColumn(c: DecodedColumn): DecodedColumn {
  const arrays: ArrayBufferView[] = c.kind === 'string' ? [c.codes] : [c.values];
  if (c.validity !== null) arrays.push(c.validity);
  return arrays.every((a) => a.buffer instanceof SharedArrayBuffer) ? c : copyDecoded(c);
}

/** A copy on shared memory, in the same order. */
export function copyDecoded(c: DecodedColumn): DecodedColumn {
  const identity = new Int32Array(c.kind === 'string' ? c.codes.length : c.values.length);
  for (let i = 0; i < identity.length; i++) identity[i] = i;
  return placeDecoded(c, identity);
}

function placed8(src: Uint8Array, rank: Int32Array): Uint8Array {
  const out = allocU8(rank.length);
  scatter8(src, out, rank, 0);
  return out;
}
