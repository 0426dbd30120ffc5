import { makeData, Utf8 } from 'apache-arrow';
import type { Data } from 'apache-arrow';

/**
 * Building blocks for writing Arrow columns by hand, shared by the snapshot writer and the
 * benchmark's streaming batch builder.
 */

/** A validity bitmap that is only materialized when a null shows up. */
export class Validity {
  private bits: Uint8Array | null = null;
  nullCount = 0;
  constructor(private readonly length: number) {}

  setNull(i: number): void {
    if (this.bits === null) this.bits = new Uint8Array(Math.ceil(this.length / 8)).fill(0xff);
    this.bits[i >> 3]! &= ~(1 << (i & 7));
    this.nullCount++;
  }

  bitmap(): Uint8Array {
    return this.bits ?? new Uint8Array(0);
  }
}

const encoder = new TextEncoder();

/** values[start..end) as an Arrow Utf8 column; null or undefined is a null slot. */
export function utf8Data(values: ArrayLike<string | null>, start: number, end: number): Data<Utf8> {
  const n = end - start;
  const offsets = new Int32Array(n + 1);
  const validity = new Validity(n);
  const parts: Uint8Array[] = [];
  // Snapshot strings repeat a lot (keys, labels, "1.0"): encode each distinct one once.
  const encoded = new Map<string, Uint8Array>();
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = values[start + i];
    if (v === null || v === undefined) validity.setNull(i);
    else {
      let bytes = encoded.get(v);
      if (bytes === undefined) {
        bytes = encoder.encode(v);
        if (encoded.size < 65_536) encoded.set(v, bytes);
      }
      parts.push(bytes);
      total += bytes.length;
    }
    offsets[i + 1] = total;
  }
  const data = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return makeData({ type: new Utf8(), length: n, nullCount: validity.nullCount, nullBitmap: validity.bitmap(), valueOffsets: offsets, data });
}
