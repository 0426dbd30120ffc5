/**
 * A flatbuffer written front to back, for the Arrow schema message (schema-message.ts).
 *
 * The flatbuffers library builds back to front, so the first object created ends up last in
 * the buffer. Writing front to back instead lets the schema message end with the one string
 * that changes per answer (the envelope): everything before it is the same bytes for a
 * layout and is encoded once. Every reference (uoffset) points forward, as the format
 * requires, so a reference is written as a slot and filled in when its target is placed.
 * Each table's vtable is placed right before the table (a positive soffset).
 *
 * Scalars are aligned to their size from the start of the buffer, tables and strings to 4.
 * Fields are always written, defaults included, so a reader never depends on a default.
 */
export interface FlatField {
  /** field id in the schema (its vtable slot) */
  readonly id: number;
  /** 'ref' is a uoffset to an object placed later (fill it with `point`) */
  readonly kind: 'ref' | 'i32' | 'i16' | 'u8';
  /** the scalar's value (unused for refs) */
  readonly value?: number;
}

const SIZE = { ref: 4, i32: 4, i16: 2, u8: 1 } as const;

export class FlatWriter {
  private buf = new Uint8Array(512);
  private dv = new DataView(this.buf.buffer);
  pos = 0;

  /** A uoffset slot at the current position (4-aligned), e.g. the root reference. */
  slot(): number {
    this.align(4);
    const at = this.pos;
    this.grow(4);
    this.pos += 4;
    return at;
  }

  /** Fills the reference at `slot` with the current position (aligned to 4 first): for strings and vectors. */
  point(slot: number): void {
    this.align(4);
    this.dv.setUint32(slot, this.pos - slot, true);
  }

  /**
   * A vtable then its table. Fields are laid out widest first, so each is aligned when the
   * table is. `from`, a reference slot, is pointed at the table (not at its vtable).
   * Returns the positions of the 'ref' fields' slots, in the order given.
   */
  table(fields: readonly FlatField[], from: number | null = null): number[] {
    const slots = Math.max(0, ...fields.map((f) => f.id + 1));
    const ordered = [...fields].sort((a, b) => SIZE[b.kind] - SIZE[a.kind]);
    const inline = 4 + ordered.reduce((n, f) => n + SIZE[f.kind], 0);
    const vtableSize = 4 + 2 * slots;
    // The table (after its vtable) must start 4-aligned.
    this.align(2);
    if ((this.pos + vtableSize) % 4 !== 0) this.zeros(2);
    const vtable = this.pos;
    this.grow(vtableSize);
    this.dv.setUint16(vtable, vtableSize, true);
    this.dv.setUint16(vtable + 2, inline, true);
    const table = vtable + vtableSize;
    this.pos = table;
    this.grow(inline);
    this.dv.setInt32(table, table - vtable, true);
    if (from !== null) this.dv.setUint32(from, table - from, true);
    let at = table + 4;
    const refs = new Map<FlatField, number>();
    for (const f of ordered) {
      this.dv.setUint16(vtable + 4 + 2 * f.id, at - table, true);
      if (f.kind === 'ref') refs.set(f, at);
      else if (f.kind === 'i32') this.dv.setInt32(at, f.value ?? 0, true);
      else if (f.kind === 'i16') this.dv.setInt16(at, f.value ?? 0, true);
      else this.dv.setUint8(at, f.value ?? 0);
      at += SIZE[f.kind];
    }
    this.pos = at;
    return fields.filter((f) => f.kind === 'ref').map((f) => refs.get(f)!);
  }

  /** A vector of `n` references; returns their slots. */
  refVector(n: number): number[] {
    this.align(4);
    this.grow(4 + 4 * n);
    this.dv.setUint32(this.pos, n, true);
    this.pos += 4;
    const slots: number[] = [];
    for (let i = 0; i < n; i++, this.pos += 4) slots.push(this.pos);
    return slots;
  }

  /** A string (length, UTF-8 bytes, NUL). */
  string(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    this.align(4);
    this.grow(4 + bytes.length + 1);
    this.dv.setUint32(this.pos, bytes.length, true);
    this.buf.set(bytes, this.pos + 4);
    this.pos += 4 + bytes.length;
    this.buf[this.pos++] = 0;
  }

  align(n: number): void {
    const pad = (n - (this.pos % n)) % n;
    if (pad > 0) this.zeros(pad);
  }

  /** The bytes written so far (a copy). */
  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  private zeros(n: number): void {
    this.grow(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
  }

  private grow(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf);
    this.buf = next;
    this.dv = new DataView(next.buffer);
  }
}
