import { FNV_OFFSET, fnvStep } from './hash.js';

/** A filter clause as the text reads it (query.ts's FilterClause, named here so query.ts may import this module). */
interface FilterText {
  readonly column: string;
  readonly values: readonly string[];
}

/** U+0001: separates the parts of a canonical query text (none holds it). */
const SEP = 0x01;
/** U+0000: separates a filter's values. */
const VALUE_SEP = 0x00;

/** Uint16Array units are in platform order; utf16le reads them so only on a little-endian CPU. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The canonical text of a query, written part by part into one buffer of UTF-16 code units
 * and made a string once (`take`). A template literal of a dozen parts made a rope of a
 * dozen cons strings, then a flat copy when it was first hashed, and a string per number:
 * about 0.6 KB of garbage per request (near-zero allocation per request: docs/decisions.md#allocation). The
 * text is the same, unit for unit, so fingerprints (cursors issued by other replicas and
 * releases) and ETags do not change: test/canonical-text.test.ts holds the parsers to the
 * joined form they used to build.
 *
 * One per thread (`canonicalText`): a parser writes it from `begin` to `take` with nothing
 * in between that parses, so no two texts interleave.
 */
export class CanonicalText {
  private units = new Uint16Array(256);
  /** the units' bytes, for making the string (toString('utf16le'): V8 keeps it one byte a unit when it can) */
  private bytes = Buffer.from(this.units.buffer);
  private n = 0;
  /** FNV-1a of the units so far, as query/hash.ts's fnv1a hashes the text: the fingerprint */
  private h = FNV_OFFSET;

  /** Starts a text with its first part. */
  begin(first: string): this {
    this.n = 0;
    this.h = FNV_OFFSET;
    return this.text(first);
  }

  /** U+0001, then `s`. */
  part(s: string): this {
    return this.unit(SEP).text(s);
  }

  /** U+0001, then `v` as `${v}` writes it (nothing for null). */
  num(v: number | null): this {
    this.unit(SEP);
    return v === null ? this : this.number(v);
  }

  /** `\u0001column=v1\u0000v2` per filter, in order (nothing without filters). */
  filters(filters: readonly FilterText[]): this {
    for (const f of filters) {
      this.unit(SEP).text(f.column).unit(0x3d);
      for (let i = 0; i < f.values.length; i++) {
        if (i > 0) this.unit(VALUE_SEP);
        this.text(f.values[i]!);
      }
    }
    return this;
  }

  /** Units written since `begin`: take().length without making the string. */
  get length(): number {
    return this.n;
  }

  /** FNV-1a (32 bits) of the text written since `begin`: fnv1a(take()) without making it. */
  get fingerprint(): number {
    return this.h >>> 0;
  }

  /** The text written since `begin`, as one flat string. */
  take(): string {
    if (!LITTLE_ENDIAN) return String.fromCharCode(...this.units.subarray(0, this.n));
    return this.bytes.toString('utf16le', 0, this.n * 2);
  }

  /** FNV-1a's steps over the text from `h`: fnvRun(take(), h) without making the string (an int32). */
  fnvRun(h: number): number {
    const u = this.units;
    for (let i = 0; i < this.n; i++) h = fnvStep(h, u[i]!);
    return h;
  }

  /** Whether the text is `s`, unit for unit: take() === s without making the string. */
  equals(s: string): boolean {
    const n = this.n;
    if (s.length !== n) return false;
    const u = this.units;
    for (let i = 0; i < n; i++) if (u[i] !== s.charCodeAt(i)) return false;
    return true;
  }

  private text(s: string): this {
    const len = s.length;
    this.room(len);
    const u = this.units;
    let n = this.n;
    let h = this.h;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      u[n++] = c;
      h = fnvStep(h, c);
    }
    this.n = n;
    this.h = h;
    return this;
  }

  private unit(c: number): this {
    this.room(1);
    this.units[this.n++] = c;
    this.h = fnvStep(this.h, c);
    return this;
  }

  /** `${v}` of an integer within ±2^53, without making that string (anything else goes through String: parsers give integers). */
  private number(v: number): this {
    if (!Number.isSafeInteger(v)) return this.text(String(v));
    if (v < 0) {
      this.unit(0x2d);
      v = -v;
    }
    // Digits from the last: below 2^53, v / 10 never rounds up to the next integer (its
    // fraction is at most 0.9 and doubles there are 1/8 apart at most), so the floor is exact.
    let k = 1;
    for (let p = 10; p <= v; p *= 10) k++;
    this.room(k);
    const u = this.units;
    const start = this.n;
    const end = start + k;
    for (let i = end - 1; i >= start; i--) {
      u[i] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    }
    let h = this.h;
    for (let i = start; i < end; i++) h = fnvStep(h, u[i]!);
    this.n = end;
    this.h = h;
    return this;
  }

  private room(k: number): void {
    if (this.n + k <= this.units.length) return;
    let cap = this.units.length * 2;
    while (cap < this.n + k) cap *= 2;
    const next = new Uint16Array(cap);
    next.set(this.units.subarray(0, this.n));
    this.units = next;
    this.bytes = Buffer.from(next.buffer);
  }
}

/** The one CanonicalText of this thread (see CanonicalText). */
export const canonicalText = new CanonicalText();

/**
 * A query's canonical text: its own string, or, for a query parsed into a serving thread's
 * scratch, the thread's CanonicalText itself, valid like the scratch until the next parse.
 * A loop or random-date request's text is new every time, and making it a string was a
 * quarter of what a request allocated (docs/decisions.md#allocation); the response cache reads the units where
 * they were written and makes the string only for what it keeps (RequestKey.copy).
 */
export type CanonicalForm = string | CanonicalText;

/** Whether two canonical texts are the same text (the thread's CanonicalText is only ever itself). */
export function sameCanonical(a: CanonicalForm, b: CanonicalForm): boolean {
  if (typeof a === 'string') return typeof b === 'string' ? a === b : b.equals(a);
  return typeof b === 'string' ? a.equals(b) : a === b;
}

/** The text as a string of its own (one to keep). */
export function canonicalString(c: CanonicalForm): string {
  return typeof c === 'string' ? c : c.take();
}
