/**
 * Store columns live on SharedArrayBuffer so that worker threads can later read one copy of
 * a generation without copying it (multi-core serving).
 */
type TypedArrayCtor<T> = { new (buffer: SharedArrayBuffer, byteOffset?: number, length?: number): T; BYTES_PER_ELEMENT: number };

export function allocShared<T>(ctor: TypedArrayCtor<T>, length: number): T {
  return new ctor(new SharedArrayBuffer(Math.max(1, length) * ctor.BYTES_PER_ELEMENT), 0, length);
}

export const allocF64 = (n: number): Float64Array => allocShared(Float64Array, n);
export const allocI32 = (n: number): Int32Array => allocShared(Int32Array, n);
export const allocU8 = (n: number): Uint8Array => allocShared(Uint8Array, n);
