import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseAuthFailLimit, type AuthFailLimit } from '../auth/auth-throttle.js';
import { TrustedProxies } from '../auth/client-address.js';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import type { Budget } from '../generations/retention-budget.js';
import { LOG_LEVELS } from '../log/logger.js';
import { booleanOption, budgetOption, durationOption, enumOption, integerOption, locationOption, pathOption, wordOption } from './option-types.js';

/** After the drain and the listeners' close, how long requests in flight may take before the process exits anyway. */
export const SHUTDOWN_GRACE_SECONDS = 10;

const MIB = 1024 * 1024;

/**
 * One option of `pitcache serve`: how its flag's text is read, how a value given in code
 * (`startServer({...})`) is checked, its default and its help line. The table below is the
 * one description of every serve option: the CLI, `--help`, the README table, the defaults
 * of programmatic callers and the typed object the threads get all come from it.
 */
interface ServeOption<T> {
  /**
   * the flag without dashes when it is not the field's name in kebab-case (`--row-cache-mb`
   * for rowCacheBytes); null: not on the command line, given in code only (a tuning seam)
   */
  readonly flag: string | null | undefined;
  /** reads the flag's or the variable's text into the value (and says what is wrong) */
  readonly text: z.ZodType<T, z.ZodTypeDef, unknown>;
  /** checks a value given in code */
  readonly value: z.ZodType<T, z.ZodTypeDef, unknown>;
  /** the default as it would be typed (read by `text`); undefined: the value of `absent` */
  readonly default: string | undefined;
  readonly absent: () => T;
  readonly description: string;
}

interface OptionExtras<T> {
  readonly flag?: string;
  /** default: `text`, which must then take a typed value as it is */
  readonly value?: z.ZodType<T, z.ZodTypeDef, unknown>;
}

function option<T>(text: z.ZodType<T, z.ZodTypeDef, unknown>, def: string, description: string, extras: OptionExtras<T> = {}): ServeOption<T> {
  return { flag: extras.flag, text, value: extras.value ?? text, default: def, absent: () => text.parse(def), description };
}

/** An option without a default: null when not given, unless `absent` says what it resolves to. */
function optional<T>(text: z.ZodType<T, z.ZodTypeDef, unknown>, description: string, extras: OptionExtras<T> = {}): ServeOption<T | null> {
  return { flag: extras.flag, text, value: (extras.value ?? text).nullable(), default: undefined, absent: () => null, description };
}

/** An option without a default that resolves to a computed value (the number of cores, every dataset). */
function resolved<T>(text: z.ZodType<T, z.ZodTypeDef, unknown>, absent: () => T, description: string, extras: OptionExtras<T> = {}): ServeOption<T> {
  return { flag: extras.flag, text, value: extras.value ?? text, default: undefined, absent, description };
}

/** An option given in code only (no flag, not in `--help` or the README): its default and check. */
function codeOnly<T>(value: z.ZodType<T, z.ZodTypeDef, unknown>, def: T, description: string): ServeOption<T> {
  return { flag: null, text: value, value, default: undefined, absent: () => def, description };
}

/** A non-negative integer given in code, in its unit: `must be an integer of ms from 0 to 86400000`. */
function integerIn(unit: string, min: number, max: number): z.ZodNumber {
  const message = `must be an integer of ${unit} from ${min} to ${max}`;
  return z.number({ invalid_type_error: message, required_error: message }).int(message).min(min, message).max(max, message);
}

/** Seconds up to `max` on the command line (`--flag`), ms in the object. */
function seconds(flag: string, max: number, def: string, description: string): ServeOption<number> {
  return option(
    integerOption(0, max).transform((s) => s * 1000),
    def,
    description,
    { flag, value: integerIn('ms', 0, max * 1000) },
  );
}

/** MiB on the command line (`--flag`), bytes in the object: a caller in code may give less than a MiB. */
function mebibytes(flag: string, def: string, description: string): ServeOption<number> {
  const max = 1_048_576;
  return option(
    integerOption(0, max).transform((mb) => mb * MIB),
    def,
    description,
    { flag, value: integerIn('bytes', 0, max * MIB) },
  );
}

/** A value read by `parse` (which throws with its own message when the text is wrong). */
function parsedOption<T>(parse: (text: string) => T): z.ZodEffects<z.ZodString, T, string> {
  return z.string({ required_error: 'is required' }).transform((text, ctx) => {
    try {
      return parse(text);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: (e as Error).message.replace(/^--[a-z-]+: /, '') });
      return z.NEVER;
    }
  });
}

/**
 * An http(s) URL without credentials: a secret in a flag would end up in `ps`, shell
 * history and logs. The store's keys come from the AWS chain instead.
 */
function endpointOption(): z.ZodEffects<z.ZodString, string, string> {
  return z.string({ required_error: 'is required' }).superRefine((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an http:// or https:// URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an http:// or https:// URL' });
    } else if (url.username !== '' || url.password !== '') {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must not contain credentials; use the AWS chain (AWS_ACCESS_KEY_ID, a profile)' });
    }
  });
}

const budgetValue: z.ZodType<Budget, z.ZodTypeDef, unknown> = z.union([
  z.object({ kind: z.literal('bytes'), bytes: z.number().int().min(0) }).strict(),
  z.object({ kind: z.literal('percent'), percent: z.number().min(0).max(1000) }).strict(),
]);

const authFailLimitValue: z.ZodType<AuthFailLimit, z.ZodTypeDef, unknown> = z
  .object({ count: z.number().int().min(0), windowMs: z.number().int().min(1000) })
  .strict();

/**
 * The options that say where the data comes from: `pitcache serve` opens the source and
 * the keys file with them (serve-config.ts); a server started in code is handed both.
 */
const DATA_OPTIONS = {
  source: optional(
    locationOption(),
    'Where the snapshots are: s3://bucket/prefix, file:///abs/dir or a path. Each dataset lives at <source>/<product_id>/<dataset>/. Required unless --demo.',
  ),
  keys: optional(locationOption(), 'The keys file (JSON): a path, file:///abs/file or s3://bucket/key. Required unless --demo.'),
  demo: option(booleanOption(), 'false', 'Serve the built-in demo data set with the demo keys, generated into --demo-dir. Replaces --source and --keys.'),
  demoDir: option(pathOption(), '.demo-data', 'Folder the demo data set and keys are generated into (relative to the working directory).'),
  s3Endpoint: optional(
    endpointOption(),
    'Endpoint URL of an S3-compatible store (MinIO, a local emulator), e.g. http://127.0.0.1:9000; unset for AWS S3. Credentials and region come from the standard AWS chain (env, profile, instance role); the region defaults to us-east-1.',
  ),
  s3ForcePathStyle: option(
    booleanOption(),
    'false',
    'Address the bucket in the path (http://host/bucket/key) instead of the host name, as most S3-compatible stores need.',
  ),
};

/** The options of the server itself: the typed object every serving thread gets whole (ServeOptions). */
const SERVER_OPTIONS = {
  host: option(wordOption(), '127.0.0.1', 'Address to listen on; 0.0.0.0 listens on every interface.'),
  port: option(integerOption(0, 65535), '8080', 'TCP port to listen on; 0 picks a free port.'),
  accessLog: option(booleanOption(), 'true', 'Write one JSON line per request (batched) to stderr.'),
  logLevel: option(enumOption(LOG_LEVELS), 'info', 'Least severe level of the server log written to stderr.'),
  refreshIntervalMs: seconds(
    'refresh-interval',
    86_400,
    '60',
    'Seconds between checks of every manifest for a new generation (a conditional read: no transfer when unchanged); 0 turns polling off.',
  ),
  startupTimeoutMs: seconds(
    'startup-timeout',
    86_400,
    '60',
    'Seconds start-up keeps retrying a source it cannot reach before it declares itself ready anyway (those datasets answer 503 and keep being retried in the background); 0 tries once.',
  ),
  cacheDir: optional(
    pathOption(),
    'Folder for verified copies of the last good snapshots: start-up serves them when the source is unreachable. Unset: no copies are kept.',
  ),
  workers: resolved(
    integerOption(1, 1024),
    availableParallelism,
    'Threads that answer requests, sharing one copy of the data; default: the number of CPU cores.',
  ),
  responseCacheBytes: mebibytes(
    'response-cache-mb',
    '64',
    'MiB of rendered response bodies kept for repeated queries (split across the serving threads), keyed by dataset, generation and normalised query; 0 turns the cache off.',
  ),
  rowCacheBytes: mebibytes(
    'row-cache-mb',
    '64',
    'MiB of rendered rows kept for overlapping queries such as consecutive walk-forward steps (one arena in shared memory that every serving thread reads and fills), tagged by generation, columns, format and row; 0 turns the cache off.',
  ),
  pageCacheBytes: mebibytes(
    'page-cache-mb',
    '32',
    'MiB of whole JSON pages (up to 512 rows, 128 KiB each) kept beside the row cache, so that the next step of a walk-forward loop copies the rows it shares with the last in a few long runs instead of row by row; in shared memory, tagged as the row cache is. 0 turns it off; it needs --row-cache-mb above 0.',
  ),
  datasets: resolved(
    // Kept as text (DatasetSelection.text): the object crosses to the serving threads, which read it with DatasetSelection.parse.
    parsedOption((text) => DatasetSelection.parse(text).text),
    () => DatasetSelection.all().text,
    'The datasets this replica loads and serves (a shard behind a path-routing balancer): product/dataset patterns separated by commas, either part * or ending in *, e.g. gbsi_us/*,pemi/grid_stress. The others answer 404 naming the served ones; /readyz waits only for these. Unset: every named dataset.',
  ),
  metricsPort: optional(
    integerOption(0, 65535),
    'Port of a second listener that serves only GET /metrics (Prometheus text), without a key, for in-cluster scrapers; 0 picks a free port. Unset: /metrics is served on --port only, to admin keys.',
  ),
  retainMemory: option(
    budgetOption(),
    '25%',
    "Memory for superseded generations kept for cursor chains and generation=N, all datasets together: bytes (2GiB, 512MiB, 1000000) or a percentage of the live generations' bytes (25%), never below the largest live generation. Live generations never count; over it the least recently used goes. A released generation is loaded again from the source's history/ when asked for.",
    { value: budgetValue },
  ),
  cursorIdleMs: option(
    durationOption(),
    '10m',
    'A superseded generation no request has used for this long is released even under --retain-memory: 90s, 10m, 1h, 2d (or ms).',
    { flag: 'cursor-idle', value: integerIn('ms', 1, Number.MAX_SAFE_INTEGER) },
  ),
  drainMs: seconds(
    'drain-seconds',
    3600,
    '10',
    `On SIGTERM or SIGINT: seconds during which /readyz answers 503 while requests are still answered, so that load balancers stop sending; then the listeners close, requests in flight get up to ${SHUTDOWN_GRACE_SECONDS} s more, and the process exits 0. A second signal exits at once.`,
  ),
  authFailLimit: option(
    parsedOption(parseAuthFailLimit),
    '30/60s',
    'Failed authentications (missing or wrong key) allowed per client address in a window, as <failures>/<window>; past it the address gets 429 with Retry-After until the window ends, checked before its key is hashed. 0 turns it off.',
    { value: authFailLimitValue },
  ),
  joinInlineBytes: codeOnly(
    z.union([integerIn('bytes', 0, Number.MAX_SAFE_INTEGER), z.literal(Infinity)]),
    256 * 1024,
    'asof_join bodies (gzip undone) larger than this are joined on a join worker of their serving thread, smaller ones on it: a few thousand events, a few milliseconds (docs/decisions.md#join-off-thread); Infinity: every join on the serving thread.',
  ),
  trustedProxies: option(
    // Kept as text (TrustedProxies.text), as datasets is.
    parsedOption((text) => (TrustedProxies.parse(text), text)),
    '',
    'Proxies (CIDRs or addresses, comma-separated, e.g. 10.0.0.0/8,127.0.0.1) whose X-Forwarded-For names the client: for a request from one of them, the client is the last untrusted hop of that header. Empty: the client is always the socket peer, whatever X-Forwarded-For says.',
  ),
};

type ValueOf<O> = O extends ServeOption<infer T> ? T : never;
type ServerKey = keyof typeof SERVER_OPTIONS;

/**
 * The server's options, parsed and checked once (`pitcache serve`'s flags, or a caller's
 * partial object with the schema's defaults filled in), frozen, and plain data: it is
 * handed whole to every serving thread (structured clone) and each component reads the
 * fields it needs.
 */
export type ServeOptions = { readonly [K in ServerKey]: ValueOf<(typeof SERVER_OPTIONS)[K]> };

/** What `pitcache serve` reads of its data: where the snapshots and keys are, or the demo. */
export type DataOptions = { readonly [K in keyof typeof DATA_OPTIONS]: ValueOf<(typeof DATA_OPTIONS)[K]> };

/** Every serve option in the order of `--help` and the README table. */
export const SERVE_OPTION_TABLE: Readonly<Record<string, ServeOption<unknown>>> = {
  source: DATA_OPTIONS.source,
  keys: DATA_OPTIONS.keys,
  host: SERVER_OPTIONS.host,
  port: SERVER_OPTIONS.port,
  demo: DATA_OPTIONS.demo,
  demoDir: DATA_OPTIONS.demoDir,
  accessLog: SERVER_OPTIONS.accessLog,
  logLevel: SERVER_OPTIONS.logLevel,
  s3Endpoint: DATA_OPTIONS.s3Endpoint,
  s3ForcePathStyle: DATA_OPTIONS.s3ForcePathStyle,
  ...Object.fromEntries(Object.entries(SERVER_OPTIONS).filter(([k, o]) => o.flag !== null && !['host', 'port', 'accessLog', 'logLevel'].includes(k))),
};

export const DATA_OPTION_KEYS: ReadonlySet<string> = new Set(Object.keys(DATA_OPTIONS));
const SERVER_KEYS = Object.keys(SERVER_OPTIONS) as ServerKey[];

/** The field's flag in camelCase, as the command-line schema names it (`rowCacheMb`). */
export function flagKey(key: string): string {
  const flag = SERVE_OPTION_TABLE[key]?.flag;
  return flag === undefined || flag === null ? key : flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The object a caller gives startServer is refused with this: one line naming the field, what it must be and what it got. */
export class ServeOptionsError extends Error {}

/** Deep freeze of plain data. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/** The server's options from the command-line schema's output (fields keyed by flag, values typed): absent ones resolved. */
export function serveOptionsFromFlags(parsed: Readonly<Record<string, unknown>>): ServeOptions {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) out[key] = parsed[flagKey(key)] ?? SERVER_OPTIONS[key].absent();
  return frozen(out) as ServeOptions;
}

/**
 * The server's options from what a caller gave in code: each given field checked by the
 * table, each missing one its default (the same as `pitcache serve`'s). Fields that are not
 * options (the source, the clock...) are ignored.
 */
export function resolveServeOptions(given: Partial<ServeOptions> | object = {}): ServeOptions {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const entry: ServeOption<unknown> = SERVER_OPTIONS[key];
    const v = (given as Readonly<Record<string, unknown>>)[key];
    if (v === undefined) {
      out[key] = entry.absent();
      continue;
    }
    const checked = entry.value.safeParse(v);
    if (!checked.success) {
      const shown = JSON.stringify(v) ?? String(v);
      throw new ServeOptionsError(
        `${key}: ${checked.error.issues[0]?.message ?? 'is not valid'}, got ${shown.length > 80 ? shown.slice(0, 80) + '...' : shown}`,
      );
    }
    out[key] = checked.data;
  }
  return frozen(out) as ServeOptions;
}
