import { z } from 'zod';
import type { OptionSpec } from './option-table.js';
import { optionSpecs } from './option-table.js';
import { booleanOption, locationOption, wordOption } from './option-types.js';
import { parseOptions } from './parse-options.js';

/** The options of `pitcache catalog`; see option-table.ts for how flags, variables and help derive from them. */
const catalogOptions = z.object({
  source: locationOption()
    .optional()
    .describe('Where the snapshots are: s3://bucket/prefix, file:///abs/dir or a path (the same as pitcache serve --source). Required unless --builtin.'),
  builtin: booleanOption()
    .default(false)
    .describe('Print the built-in catalog (the one in force where a source has no catalog.json), in the form of catalog.json.'),
  set: wordOption()
    .optional()
    .describe(
      'A catalog.json file to validate and write to --source, only if the catalog there is still the one read (two writers cannot overwrite each other).',
    ),
  s3Endpoint: wordOption().optional().describe('Endpoint URL of an S3-compatible store (MinIO, a local emulator); unset for AWS S3.'),
  s3ForcePathStyle: booleanOption().default(false).describe('Address the bucket in the path (http://host/bucket/key), as most S3-compatible stores need.'),
});

export type CatalogConfig =
  | { readonly mode: 'builtin' }
  | {
      readonly mode: 'print' | 'set';
      readonly source: string;
      readonly file: string | null;
      readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
    };

export const catalogConfigSchema = catalogOptions
  .superRefine((o, ctx) => {
    if (o.builtin && (o.source !== undefined || o.set !== undefined))
      ctx.addIssue({ code: 'custom', path: ['builtin'], message: 'takes no --source or --set' });
    if (!o.builtin && o.source === undefined) ctx.addIssue({ code: 'custom', path: ['source'], message: 'is required (or --builtin)' });
  })
  .transform((o): CatalogConfig => {
    if (o.builtin) return { mode: 'builtin' };
    return {
      mode: o.set === undefined ? 'print' : 'set',
      source: o.source!,
      file: o.set ?? null,
      s3: { ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }), forcePathStyle: o.s3ForcePathStyle },
    };
  });

export const CATALOG_OPTIONS: readonly OptionSpec[] = optionSpecs(catalogOptions);

/** Reads the config of `pitcache catalog` from its arguments (after the word) and the environment. */
export function parseCatalogConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: CatalogConfig } | { ok: false; message: string } {
  const result = parseOptions({ command: 'catalog', specs: CATALOG_OPTIONS, schema: catalogConfigSchema }, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache catalog --help)` };
  return { ok: true, config: result.config };
}
