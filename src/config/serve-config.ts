import { z } from 'zod';
import type { OptionRow, OptionSpec } from './option-table.js';
import { optionRows, optionSpecs } from './option-table.js';
import { parseOptions } from './parse-options.js';
import { flagKey, SERVE_OPTION_TABLE, serveOptionsFromFlags, type DataOptions, type ServeOptions } from './serve-options.js';

export { SHUTDOWN_GRACE_SECONDS } from './serve-options.js';

/**
 * The command line of `pitcache serve` (contract 8): every option of the table in
 * serve-options.ts as a flag and an environment variable; see option-table.ts for how the
 * names, help and defaults are derived.
 */
const serveFlags = z.object(
  Object.fromEntries(
    Object.entries(SERVE_OPTION_TABLE).map(([key, o]) => [
      flagKey(key),
      (o.default === undefined ? o.text.optional() : o.text.default(o.default)).describe(o.description),
    ]),
  ),
);

/** What is served: the demo, or a source with its keys file (both as the operator wrote them). */
export type ServeData = { readonly mode: 'demo'; readonly dir: string } | { readonly mode: 'source'; readonly source: string; readonly keys: string };

/** `pitcache serve`'s config: the server's options (handed whole to startServer), and where its data and keys are. */
export type ServeConfig = ServeOptions & {
  readonly data: ServeData;
  /** How to reach an s3:// source or keys file (the shape openSource takes). */
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
};

export const serveConfigSchema = serveFlags
  .superRefine((o, ctx) => {
    for (const key of ['source', 'keys'] as const) {
      if (o['demo'] === true && o[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'cannot be combined with --demo' });
      if (o['demo'] !== true && o[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is required unless --demo is given' });
    }
  })
  .transform((flags): ServeConfig => {
    const o = flags as unknown as DataOptions;
    const data: ServeData = o.demo
      ? { mode: 'demo', dir: o.demoDir }
      : // Both present: the refinement above has run.
        { mode: 'source', source: o.source!, keys: o.keys! };
    const s3Endpoint = flags['s3Endpoint'] as string | undefined;
    return Object.freeze({
      ...serveOptionsFromFlags(flags),
      data: Object.freeze(data),
      s3: Object.freeze({ ...(s3Endpoint === undefined ? {} : { endpoint: s3Endpoint }), forcePathStyle: o.s3ForcePathStyle }),
    });
  });

export const SERVE_OPTIONS: readonly OptionSpec[] = optionSpecs(serveFlags);

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
