import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import { LOG_LEVELS } from '../log/logger.js';
import { parseAuthFailLimit, type AuthFailLimit } from '../auth/auth-throttle.js';
import { TrustedProxies } from '../auth/client-address.js';
import type { LogLevel } from '../log/logger.js';
import type { OptionRow, OptionSpec } from './option-table.js';
import { optionRows, optionSpecs } from './option-table.js';
import type { Budget } from '../generations/retention-budget.js';
import { booleanOption, budgetOption, durationOption, enumOption, integerOption, locationOption, pathOption, wordOption } from './option-types.js';
import { parseOptions } from './parse-options.js';

/** After the drain and the listeners' close, how long requests in flight may take before the process exits anyway. */
export const SHUTDOWN_GRACE_SECONDS = 10;

/**
 * The options of `pitcache serve` (contract 8). Each field is a flag and an environment
 * variable; see option-table.ts for how the names, help and defaults are derived.
 */
const serveOptions = z.object({
  source: locationOption()
    .optional()
    .describe(
      'Where the snapshots are: s3://bucket/prefix, file:///abs/dir or a path. Each dataset lives at <source>/<product_id>/<dataset>/. Required unless --demo.',
    ),
  keys: locationOption().optional().describe('The keys file (JSON): a path, file:///abs/file or s3://bucket/key. Required unless --demo.'),
  host: wordOption().default('127.0.0.1').describe('Address to listen on; 0.0.0.0 listens on every interface.'),
  port: integerOption(0, 65535).default(8080).describe('TCP port to listen on; 0 picks a free port.'),
  demo: booleanOption()
    .default(false)
    .describe('Serve the built-in demo data set with the demo keys, generated into --demo-dir. Replaces --source and --keys.'),
  demoDir: pathOption().default('.demo-data').describe('Folder the demo data set and keys are generated into (relative to the working directory).'),
  accessLog: booleanOption().default(true).describe('Write one JSON line per request (batched) to stderr.'),
  logLevel: enumOption(LOG_LEVELS).default('info').describe('Least severe level of the server log written to stderr.'),
  s3Endpoint: endpointOption()
    .optional()
    .describe(
      'Endpoint URL of an S3-compatible store (MinIO, a local emulator), e.g. http://127.0.0.1:9000; unset for AWS S3. Credentials and region come from the standard AWS chain (env, profile, instance role); the region defaults to us-east-1.',
    ),
  s3ForcePathStyle: booleanOption()
    .default(false)
    .describe('Address the bucket in the path (http://host/bucket/key) instead of the host name, as most S3-compatible stores need.'),
  refreshInterval: integerOption(0, 86_400)
    .default(60)
    .describe('Seconds between checks of every manifest for a new generation (a conditional read: no transfer when unchanged); 0 turns polling off.'),
  startupTimeout: integerOption(0, 86_400)
    .default(60)
    .describe(
      'Seconds start-up keeps retrying a source it cannot reach before it declares itself ready anyway (those datasets answer 503 and keep being retried in the background); 0 tries once.',
    ),
  cacheDir: pathOption()
    .optional()
    .describe('Folder for verified copies of the last good snapshots: start-up serves them when the source is unreachable. Unset: no copies are kept.'),
  workers: integerOption(1, 1024).optional().describe('Threads that answer requests, sharing one copy of the data; default: the number of CPU cores.'),
  responseCacheMb: integerOption(0, 1_048_576)
    .default(64)
    .describe(
      'MiB of rendered response bodies kept for repeated queries (split across the serving threads), keyed by dataset, generation and normalised query; 0 turns the cache off.',
    ),
  rowCacheMb: integerOption(0, 1_048_576)
    .default(64)
    .describe(
      'MiB of rendered rows kept for overlapping queries such as consecutive walk-forward steps (one arena in shared memory that every serving thread reads and fills), tagged by generation, columns, format and row; 0 turns the cache off.',
    ),
  pageCacheMb: integerOption(0, 1_048_576)
    .default(32)
    .describe(
      'MiB of whole JSON pages (up to 512 rows, 128 KiB each) kept beside the row cache, so that the next step of a walk-forward loop copies the rows it shares with the last in a few long runs instead of row by row; in shared memory, tagged as the row cache is. 0 turns it off; it needs --row-cache-mb above 0.',
    ),
  datasets: datasetsOption()
    .optional()
    .describe(
      'The datasets this replica loads and serves (a shard behind a path-routing balancer): product/dataset patterns separated by commas, either part * or ending in *, e.g. gbsi_us/*,pemi/grid_stress. The others answer 404 naming the served ones; /readyz waits only for these. Unset: every named dataset.',
    ),
  metricsPort: integerOption(0, 65535)
    .optional()
    .describe(
      'Port of a second listener that serves only GET /metrics (Prometheus text), without a key, for in-cluster scrapers; 0 picks a free port. Unset: /metrics is served on --port only, to admin keys.',
    ),
  retainMemory: budgetOption()
    .default('25%')
    .describe(
      "Memory for superseded generations kept for cursor chains and generation=N, all datasets together: bytes (2GiB, 512MiB, 1000000) or a percentage of the live generations' bytes (25%), never below the largest live generation. Live generations never count; over it the least recently used goes. A released generation is loaded again from the source's history/ when asked for.",
    ),
  cursorIdle: durationOption()
    .default('10m')
    .describe('A superseded generation no request has used for this long is released even under --retain-memory: 90s, 10m, 1h, 2d (or ms).'),
  drainSeconds: integerOption(0, 3600)
    .default(10)
    .describe(
      `On SIGTERM or SIGINT: seconds during which /readyz answers 503 while requests are still answered, so that load balancers stop sending; then the listeners close, requests in flight get up to ${SHUTDOWN_GRACE_SECONDS} s more, and the process exits 0. A second signal exits at once.`,
    ),
  authFailLimit: parsedOption(parseAuthFailLimit)
    .default('30/60s')
    .describe(
      'Failed authentications (missing or wrong key) allowed per client address in a window, as <failures>/<window>; past it the address gets 429 with Retry-After until the window ends, checked before its key is hashed. 0 turns it off.',
    ),
  trustedProxies: parsedOption((text) => TrustedProxies.parse(text))
    .default('')
    .describe(
      'Proxies (CIDRs or addresses, comma-separated, e.g. 10.0.0.0/8,127.0.0.1) whose X-Forwarded-For names the client: for a request from one of them, the client is the last untrusted hop of that header. Empty: the client is always the socket peer, whatever X-Forwarded-For says.',
    ),
});

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

/** `--datasets`: a DatasetSelection; its own message when a pattern is malformed or matches nothing. */
function datasetsOption(): z.ZodEffects<z.ZodString, DatasetSelection, string> {
  return z.string({ required_error: 'is required' }).transform((text, ctx) => {
    try {
      return DatasetSelection.parse(text);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: (e as Error).message });
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

/** What is served: the demo, or a source with its keys file (both as the operator wrote them). */
export type ServeData = { readonly mode: 'demo'; readonly dir: string } | { readonly mode: 'source'; readonly source: string; readonly keys: string };

export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  readonly accessLog: boolean;
  readonly logLevel: LogLevel;
  readonly data: ServeData;
  /** How to reach an s3:// source or keys file (the shape openSource takes). */
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
  /** 0: no polling. */
  readonly refreshIntervalMs: number;
  /** 0: one try. */
  readonly startupTimeoutMs: number;
  readonly cacheDir: string | undefined;
  /** Resolved: the number of cores when not given. */
  readonly workers: number;
  /** total bytes of the response cache, all threads together */
  readonly responseCacheBytes: number;
  /** total bytes of the row cache, all threads together */
  readonly rowCacheBytes: number;
  /** bytes of the page arena beside it, all threads together */
  readonly pageCacheBytes: number;
  /** what this replica loads and serves (all named datasets unless --datasets) */
  readonly datasets: DatasetSelection;
  /** the keyless metrics listener's port; null: none */
  readonly metricsPort: number | null;
  /** how long /readyz fails before the listeners close on SIGTERM */
  readonly drainMs: number;
  /** what superseded generations may hold, all datasets together */
  readonly retainMemory: Budget;
  /** a superseded generation unused this long is released */
  readonly cursorIdleMs: number;
  /** failed authentications allowed per client address in a window */
  readonly authFailLimit: AuthFailLimit;
  /** proxies whose X-Forwarded-For is believed */
  readonly trustedProxies: TrustedProxies;
}

export const serveConfigSchema = serveOptions
  .superRefine((o, ctx) => {
    for (const key of ['source', 'keys'] as const) {
      if (o.demo && o[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'cannot be combined with --demo' });
      if (!o.demo && o[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is required unless --demo is given' });
    }
  })
  .transform((o): ServeConfig => {
    const data: ServeData = o.demo
      ? { mode: 'demo', dir: o.demoDir }
      : // Both present: the refinement above has run.
        { mode: 'source', source: o.source!, keys: o.keys! };
    return {
      host: o.host,
      port: o.port,
      accessLog: o.accessLog,
      logLevel: o.logLevel,
      data,
      s3: { ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }), forcePathStyle: o.s3ForcePathStyle },
      refreshIntervalMs: o.refreshInterval * 1000,
      startupTimeoutMs: o.startupTimeout * 1000,
      cacheDir: o.cacheDir,
      workers: o.workers ?? availableParallelism(),
      responseCacheBytes: o.responseCacheMb * 1024 * 1024,
      rowCacheBytes: o.rowCacheMb * 1024 * 1024,
      pageCacheBytes: o.pageCacheMb * 1024 * 1024,
      datasets: o.datasets ?? DatasetSelection.all(),
      metricsPort: o.metricsPort ?? null,
      drainMs: o.drainSeconds * 1000,
      retainMemory: o.retainMemory,
      cursorIdleMs: o.cursorIdle,
      authFailLimit: o.authFailLimit,
      trustedProxies: o.trustedProxies,
    };
  });

export const SERVE_OPTIONS: readonly OptionSpec[] = optionSpecs(serveOptions);

const serveCommand = { command: 'serve', specs: SERVE_OPTIONS, schema: serveConfigSchema };

/** The rows of the README's configuration table and of `pitcache serve --help`. */
export function serveOptionRows(): OptionRow[] {
  return optionRows(SERVE_OPTIONS);
}

/**
 * Reads the config of `pitcache serve` from its arguments (after the word `serve`) and the
 * environment; flags win over variables. `--help` is not an option here: check
 * `wantsHelp` (cli/usage.ts) first.
 */
export function parseServeConfig(argv: string[], env: Record<string, string | undefined>): { ok: true; config: ServeConfig } | { ok: false; message: string } {
  const result = parseOptions(serveCommand, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) {
    return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache serve --help)` };
  }
  return { ok: true, config: result.config };
}
