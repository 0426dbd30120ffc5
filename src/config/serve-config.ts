import { z } from 'zod';
import { LOG_LEVELS } from '../log/logger.js';
import type { LogLevel } from '../log/logger.js';
import type { OptionRow, OptionSpec } from './option-table.js';
import { optionRows, optionSpecs } from './option-table.js';
import { booleanOption, enumOption, integerOption, locationOption, pathOption, wordOption } from './option-types.js';
import { parseOptions } from './parse-options.js';

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
  keys: locationOption()
    .optional()
    .describe('The keys file (JSON): a path, file:///abs/file or s3://bucket/key. Required unless --demo.'),
  host: wordOption().default('127.0.0.1').describe('Address to listen on; 0.0.0.0 listens on every interface.'),
  port: integerOption(0, 65535).default(8080).describe('TCP port to listen on; 0 picks a free port.'),
  demo: booleanOption()
    .default(false)
    .describe(
      'Serve the built-in demo data set with the demo keys, generated into --demo-dir. Replaces --source and --keys.',
    ),
  demoDir: pathOption().default('.demo-data').describe('Folder the demo data set and keys are generated into (relative to the working directory).'),
  accessLog: booleanOption().default(true).describe('Write one JSON line per request (batched) to stderr.'),
  logLevel: enumOption(LOG_LEVELS).default('info').describe('Least severe level of the server log written to stderr.'),
  // Room for later options; each is one field here and appears in --help and the README:
  // s3Endpoint (--s3-endpoint), s3ForcePathStyle (--s3-force-path-style),
  // refreshInterval (--refresh-interval), startupTimeout (--startup-timeout),
  // cacheDir (--cache-dir), workers (--workers).
});

/** What is served: the demo, or a source with its keys file (both as the operator wrote them). */
export type ServeData =
  | { readonly mode: 'demo'; readonly dir: string }
  | { readonly mode: 'source'; readonly source: string; readonly keys: string };

export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  readonly accessLog: boolean;
  readonly logLevel: LogLevel;
  readonly data: ServeData;
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
    return { host: o.host, port: o.port, accessLog: o.accessLog, logLevel: o.logLevel, data };
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
export function parseServeConfig(
  argv: string[],
  env: Record<string, string | undefined>,
): { ok: true; config: ServeConfig } | { ok: false; message: string } {
  const result = parseOptions(serveCommand, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) {
    return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache serve --help)` };
  }
  return { ok: true, config: result.config };
}
