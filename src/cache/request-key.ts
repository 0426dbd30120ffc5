import { canonicalString, sameCanonical, type CanonicalForm } from '../query/canonical-text.js';
import { FNV_OFFSET, fnvRun, fnvStep } from '../query/hash.js';

/** The ETag's second hash's seed: two 32-bit hashes make collisions between live answers negligible. */
const SEED_B = 0x9e3779b9;
/** U+0001, the separator of the parts (none holds it: normalisedText), as the hashes step over it. */
const SEP = 0x01;
/** The same separator as text, for normalisedText. */
const SEP_TEXT = '\u0001';

/** The parts of a normalised request (NormalisedRequest), as a kept entry holds them. */
export interface KeyParts {
  /** `product/dataset` */
  readonly dataset: string;
  /** the generation answering: a key names one generation, so an entry never outlives or crosses one */
  readonly generation: number;
  /** the query's canonical form: every parameter but cursor, format and columns, normalised (parse-query.ts); a kept key's is a string (RequestKey.copy) */
  readonly canonical: CanonicalForm;
  /** the writer's format: `json`, `csv`, `arrow` */
  readonly format: string;
  /** the stored columns written: projectionKey (`*` for all) */
  readonly columns: string;
  /** the content coding of the middle; null for identity */
  readonly encoding: string | null;
  readonly cursor: string | null;
}

/**
 * A data request after normalisation: everything that decides the bytes of an answer's
 * cacheable middle, with its two hashes. The ETag names it by them (etag.ts) and the
 * response cache files it under one of them, and both are computed here once per request
 * from the parts, without joining them into one string: the joined text, built per request
 * and hashed four times (twice for the ETag, by V8 for the cache's Map, once more for its
 * admission), cost about 5% of a walk-forward loop's request and 0.7 KB of garbage
 * (docs/decisions.md#allocation).
 *
 * One per serving thread, refilled by every request (`fill`); a kept entry holds a `copy`,
 * whose canonical text is a string of its own (a request's may be the thread's text:
 * CanonicalForm).
 */
export class RequestKey implements KeyParts {
  dataset = '';
  generation = 0;
  canonical: CanonicalForm = '';
  format = '';
  columns = '';
  encoding: string | null = null;
  cursor: string | null = null;
  /**
   * The two hashes as int32: an unsigned 32-bit value above 2^31 is a heap number wherever
   * it is not kept in a register, two per request (near-zero allocation: docs/decisions.md#allocation); the
   * getters give them unsigned.
   */
  private a = 0;
  private b = 0;

  /** FNV-1a (32 bits) of `${dataset}\u0001${normalisedText(parts)}` from FNV's offset basis: the ETag's first hash */
  get hashA(): number {
    return this.a >>> 0;
  }

  /** the same from SEED_B: the ETag's second hash */
  get hashB(): number {
    return this.b >>> 0;
  }

  /** Refilled from `parts` (a request's answer context, or another key): read field by field, so a reused object costs nothing. */
  fill(parts: KeyParts): this {
    this.dataset = parts.dataset;
    this.generation = parts.generation;
    this.canonical = parts.canonical;
    this.format = parts.format;
    this.columns = parts.columns;
    this.encoding = parts.encoding;
    this.cursor = parts.cursor;
    this.a = this.hashFrom(FNV_OFFSET);
    this.b = this.hashFrom(SEED_B);
    return this;
  }

  /** FNV-1a of `${dataset}\u0001${canonical}\u0001${format}\u0001${columns}\u0001${encoding ?? ''}\u0001${cursor ?? ''}` from `seed`, as an int32. */
  private hashFrom(seed: number): number {
    let h = fnvRun(this.dataset, seed);
    const c = this.canonical;
    h = fnvStep(h, SEP);
    h = typeof c === 'string' ? fnvRun(c, h) : c.fnvRun(h);
    h = fnvRun(this.format, fnvStep(h, SEP));
    h = fnvRun(this.columns, fnvStep(h, SEP));
    h = fnvStep(h, SEP);
    if (this.encoding !== null) h = fnvRun(this.encoding, h);
    h = fnvStep(h, SEP);
    return this.cursor === null ? h : fnvRun(this.cursor, h);
  }

  /**
   * The response cache's key for it: the first hash mixed with the generation (the hash
   * leaves the generation out, as the ETag names it in clear), as a small integer so the
   * Map hashes it without boxing. Equal requests, equal keys; a collision is told apart
   * by `matches`.
   */
  get slot(): number {
    return this.a ^ Math.imul(this.generation, 0x85ebca6b);
  }

  /** The characters of the request as one text (dataset, generation and normalised text joined): what a kept entry counts against the cache's bound. */
  get length(): number {
    return (
      this.dataset.length +
      this.canonical.length +
      this.format.length +
      this.columns.length +
      (this.encoding?.length ?? 0) +
      (this.cursor?.length ?? 0) +
      digitsOf(this.generation) +
      6
    );
  }

  /** Whether `kept` is this very request: every part equal (hashes that merely collide are not). */
  matches(kept: KeyParts): boolean {
    return (
      kept.generation === this.generation &&
      kept.dataset === this.dataset &&
      sameCanonical(this.canonical, kept.canonical) &&
      kept.format === this.format &&
      kept.columns === this.columns &&
      kept.encoding === this.encoding &&
      kept.cursor === this.cursor
    );
  }

  /** A copy that later requests do not refill (a kept entry's, an answer finished asynchronously), its text a string. */
  copy(): RequestKey {
    return new RequestKey().fill({
      dataset: this.dataset,
      generation: this.generation,
      canonical: canonicalString(this.canonical),
      format: this.format,
      columns: this.columns,
      encoding: this.encoding,
      cursor: this.cursor,
    });
  }
}

/** Decimal digits of a non-negative integer (no string made: admission asks per miss). */
function digitsOf(n: number): number {
  let d = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) d++;
  return d;
}

/**
 * The normalised request as text, without dataset and generation: what the weak ETag
 * hashes (with them: RequestKey's hashes are of this text). Parts are joined by U+0001,
 * which none holds (a canonical query joins its own parts with U+0001 too, at fixed
 * positions; the parts after it come from fixed vocabularies or base64url). Only tests
 * and documentation join it: requests hash the parts.
 */
export function normalisedText(r: Omit<KeyParts, 'dataset' | 'generation'>): string {
  return `${canonicalString(r.canonical)}${SEP_TEXT}${r.format}${SEP_TEXT}${r.columns}${SEP_TEXT}${r.encoding ?? ''}${SEP_TEXT}${r.cursor ?? ''}`;
}
