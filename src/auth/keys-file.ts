import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/**
 * The keys file of contract 7, validated once at load. The parsed form never holds a
 * plaintext key: a `key` entry is hashed here, so nothing downstream (registry, logs, a
 * debugger print of the config) can leak it.
 */

export interface RateLimit {
  /** Tokens added per second (may be fractional, e.g. 0.5 = one request every 2 s). */
  readonly perSecond: number;
  /** Bucket capacity: the most requests that can be made at once. Integer >= 1. */
  readonly burst: number;
}

export interface KeyEntry {
  readonly id: string;
  /** Lowercase hex SHA-256 of the key. */
  readonly sha256: string;
  /** True when the file gave the key in plaintext (`key`): local use only, worth a warning. */
  readonly plaintext: boolean;
  /** Entitled product ids, or '*' for every product. */
  readonly products: '*' | readonly string[];
  /** null means unlimited. */
  readonly rateLimit: RateLimit | null;
  readonly admin: boolean;
}

export interface KeysConfig {
  /** Where the file came from, for messages. */
  readonly origin: string;
  /** A key's dense index everywhere (registry, rate limiter) is its position here. */
  readonly keys: readonly KeyEntry[];
}

const HEX64 = /^[0-9a-fA-F]{64}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const rateLimitSchema = z
  .object({
    per_second: z.number().finite().positive('must be > 0'),
    burst: z.number().int('must be an integer').min(1, 'must be >= 1').max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();

const productsSchema = z.preprocess(
  (v) => (v === '*' ? ['*'] : v),
  z
    .array(z.string({ invalid_type_error: 'must be a product id string' }), {
      invalid_type_error: 'must be "*" or a non-empty array of product ids',
    })
    .min(1, 'must be "*" or a non-empty array of product ids'),
);

// Messages for `key` and `sha256` never include the value: it is the secret.
const entrySchema = z
  .object({
    id: z
      .string()
      .min(1, 'must be a non-empty string')
      .max(128, 'must be at most 128 characters')
      .refine((s) => !CONTROL.test(s), 'must not contain control characters'),
    sha256: z.string({ invalid_type_error: 'must be a string' }).regex(HEX64, 'must be 64 hex digits').optional(),
    key: z
      .string({ invalid_type_error: 'must be a string' })
      .min(1, 'must be a non-empty string')
      .refine((s) => s.trim() === s && !CONTROL.test(s), 'must not have surrounding whitespace or control characters')
      .optional(),
    products: productsSchema,
    rate_limit: rateLimitSchema.optional(),
    admin: z.boolean().optional(),
  })
  .strict();

const fileSchema = z.object({ keys: z.array(entrySchema).min(1, 'must list at least one key') }).strict();

type RawEntry = z.infer<typeof entrySchema>;

/** A problem at a JSON path; formatted into one line with the origin. */
class KeysFileProblem {
  constructor(
    readonly path: ReadonlyArray<string | number>,
    readonly message: string,
  ) {}
}

/** Validates an already-parsed keys document (e.g. a built-in demo config). */
export function buildKeysConfig(json: unknown, origin: string): KeysConfig {
  const r = fileSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      fail(origin, new KeysFileProblem([...issue.path, issue.keys[0] ?? '?'], 'unknown field'));
    }
    fail(origin, new KeysFileProblem(issue.path, issue.message));
  }
  const keys: KeyEntry[] = [];
  const byId = new Map<string, number>();
  const bySecret = new Map<string, number>();
  r.data.keys.forEach((raw, i) => {
    const entry = toEntry(raw, i, origin);
    const sameId = byId.get(entry.id);
    if (sameId !== undefined) fail(origin, new KeysFileProblem(['keys', i, 'id'], `duplicate id, also used by keys[${sameId}]`));
    const sameSecret = bySecret.get(entry.sha256);
    if (sameSecret !== undefined) {
      const field = entry.plaintext ? 'key' : 'sha256';
      fail(origin, new KeysFileProblem(['keys', i, field], `same key as keys[${sameSecret}] (id "${keys[sameSecret]!.id}")`));
    }
    byId.set(entry.id, i);
    bySecret.set(entry.sha256, i);
    keys.push(entry);
  });
  return { origin, keys };
}

function toEntry(raw: RawEntry, i: number, origin: string): KeyEntry {
  const at = (...rest: Array<string | number>): Array<string | number> => ['keys', i, ...rest];
  if (raw.sha256 !== undefined && raw.key !== undefined) {
    fail(origin, new KeysFileProblem(at(), 'has both "key" and "sha256"; give exactly one'));
  }
  if (raw.sha256 === undefined && raw.key === undefined) {
    fail(origin, new KeysFileProblem(at(), 'needs one of "key" or "sha256"'));
  }
  const plaintext = raw.key !== undefined;
  const sha256 = plaintext ? sha256Hex(raw.key!) : raw.sha256!.toLowerCase();

  let products: '*' | string[];
  if (raw.products.includes('*')) {
    if (raw.products.length !== 1) fail(origin, new KeysFileProblem(at('products'), '"*" must be the only entry'));
    products = '*';
  } else {
    raw.products.forEach((p, j) => {
      // A product the catalog lacks is accepted (it may come with a later catalog, contract 13); a malformed id never can.
      if (!/^[a-z][a-z0-9_]{0,31}$/.test(p)) {
        fail(
          origin,
          new KeysFileProblem(at('products', j), `"${p}" is not a product id (lowercase letters, digits and _, at most 32, starting with a letter)`),
        );
      }
    });
    products = [...new Set(raw.products)];
  }

  const rl = raw.rate_limit;
  // Omitted burst: one second's worth, and at least one request.
  const rateLimit = rl === undefined ? null : { perSecond: rl.per_second, burst: rl.burst ?? Math.max(1, Math.ceil(rl.per_second)) };
  return { id: raw.id, sha256, plaintext, products, rateLimit, admin: raw.admin ?? false };
}

/** Hex SHA-256 of a presented or configured key: the only form keys are compared in. */
export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Parses keys-file text; throws an Error with a one-line message naming origin and JSON path. */
export function parseKeysFile(text: string, origin: string): KeysConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    // V8's message quotes the text around the fault, which may be a key: report a position only.
    fail(origin, new KeysFileProblem([], `not valid JSON${jsonPosition(text, (e as Error).message)}`));
  }
  return buildKeysConfig(json, origin);
}

/** Reads the text of a keys file. The seam for S3: pass a reader that understands `s3://`. */
export type KeysFileReader = (location: string) => Promise<string>;

export const readLocalKeysFile: KeysFileReader = async (location) => {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://')) {
    throw new Error(`${location}: keys file location not supported by the local reader`);
  }
  const path = location.startsWith('file://') ? fileURLToPath(location) : location;
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(`${location}: cannot read keys file (${err.code ?? err.message})`);
  }
};

export async function loadKeysFile(location: string, read: KeysFileReader = readLocalKeysFile): Promise<KeysConfig> {
  return parseKeysFile(await read(location), location);
}

function fail(origin: string, p: KeysFileProblem): never {
  throw new Error(`${origin}: invalid keys file at ${formatPath(p.path)}: ${p.message}`);
}

/** `keys[1].rate_limit.burst` style, `(root)` for the document itself. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  return out === '' ? '(root)' : out;
}

function jsonPosition(text: string, message: string): string {
  const m = /at position (\d+)/.exec(message);
  if (m === null) return /end of JSON input/.test(message) ? ' (unexpected end of input)' : '';
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return ` (line ${line}, column ${column})`;
}
