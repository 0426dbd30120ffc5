import { z } from 'zod';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import type { OptionSpec } from './option-table.js';
import { optionSpecs } from './option-table.js';
import { booleanOption, durationOption, integerOption, locationOption, wordOption } from './option-types.js';
import { parseOptions } from './parse-options.js';

/** The options of `pitcache prune`; see option-table.ts for how flags, variables and help derive from them. */
const pruneOptions = z.object({
  source: locationOption().describe('Where the snapshots are: s3://bucket/prefix, file:///abs/dir or a path (the same as pitcache serve --source).'),
  datasets: z
    .string()
    .optional()
    .describe(
      'The datasets to prune: product/dataset patterns separated by commas, as pitcache serve --datasets (e.g. gbsi_us/*,pemi/grid_stress). Unset: every dataset.',
    ),
  keep: integerOption(1, 1_000_000).optional().describe('Keep the newest N generations of each dataset, the live one counted (1 = only the live one).'),
  olderThan: durationOption()
    .optional()
    .describe(
      "Remove generations whose history manifest's created_at is older than this: 30d, 12h, 90m. With --keep, a generation goes only when both say so.",
    ),
  dryRun: booleanOption().default(false).describe('List what would be removed; remove nothing.'),
  s3Endpoint: wordOption().optional().describe('Endpoint URL of an S3-compatible store (MinIO, a local emulator); unset for AWS S3.'),
  s3ForcePathStyle: booleanOption().default(false).describe('Address the bucket in the path (http://host/bucket/key), as most S3-compatible stores need.'),
});

export interface PruneConfig {
  readonly source: string;
  readonly datasets: DatasetSelection;
  readonly keep: number | null;
  readonly olderThanMs: number | null;
  readonly dryRun: boolean;
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
}

export const pruneConfigSchema = pruneOptions
  .superRefine((o, ctx) => {
    if (o.keep === undefined && o.olderThan === undefined)
      ctx.addIssue({ code: 'custom', path: ['keep'], message: 'is required unless --older-than is given' });
    if (o.datasets !== undefined) {
      try {
        DatasetSelection.parse(o.datasets);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['datasets'], message: (e as Error).message.replace(/^--datasets: /, '') });
      }
    }
  })
  .transform((o): PruneConfig => ({
    source: o.source,
    datasets: o.datasets === undefined ? DatasetSelection.all() : DatasetSelection.parse(o.datasets),
    keep: o.keep ?? null,
    olderThanMs: o.olderThan ?? null,
    dryRun: o.dryRun,
    s3: { ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }), forcePathStyle: o.s3ForcePathStyle },
  }));

export const PRUNE_OPTIONS: readonly OptionSpec[] = optionSpecs(pruneOptions);

/** Reads the config of `pitcache prune` from its arguments (after the word) and the environment. */
export function parsePruneConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: PruneConfig } | { ok: false; message: string } {
  const result = parseOptions({ command: 'prune', specs: PRUNE_OPTIONS, schema: pruneConfigSchema }, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache prune --help)` };
  return { ok: true, config: result.config };
}
