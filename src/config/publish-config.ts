import { z } from 'zod';
import type { OptionSpec } from './option-table.js';
import { optionSpecs } from './option-table.js';
import { booleanOption, locationOption, pathOption, wordOption } from './option-types.js';
import { parseOptions } from './parse-options.js';

/** The options of `pitcache publish`; see option-table.ts for how flags, variables and help derive from them. */
/** Options shared by the commands that read or write one dataset of a source. */
export const datasetOptions = {
  source: locationOption().describe('Where the snapshots are: s3://bucket/prefix, file:///abs/dir or a path (the same as pitcache serve --source).'),
  product: wordOption().describe('The product id of the dataset, one the catalog at --source names (pitcache catalog --source prints it).'),
  dataset: wordOption().describe('The dataset name, one the product names in the catalog at --source, e.g. system_stress.'),
  s3Endpoint: wordOption().optional().describe('Endpoint URL of an S3-compatible store (MinIO, a local emulator); unset for AWS S3.'),
  s3ForcePathStyle: booleanOption().default(false).describe('Address the bucket in the path (http://host/bucket/key), as most S3-compatible stores need.'),
};

export type InputFormat = 'arrow' | 'csv' | 'parquet';

export const INPUT_FORMATS: ReadonlyArray<readonly [RegExp, InputFormat]> = [
  [/\.csv$/i, 'csv'],
  [/\.(arrow|arrows|ipc|feather)$/i, 'arrow'],
  [/\.parquet$/i, 'parquet'],
];

/** The format a file name says, or null (a folder, or a file of no known kind). */
export function inputFormatOf(path: string): InputFormat | null {
  return INPUT_FORMATS.find(([re]) => re.test(path))?.[1] ?? null;
}

const COLUMN_LIST_RE = /^[^,\s]+(,[^,\s]+)*$/;

const publishOptions = z.object({
  // Which products and datasets exist is the catalog's at --source (contract 13): checked when publishing.
  ...datasetOptions,
  input: pathOption().describe(
    'The recomputed rows: an Arrow IPC file or stream (.arrow, .arrows, .ipc, .feather), a CSV file with a header row (.csv), a Parquet file (.parquet), or a folder of them (read in name order), with the columns of the dataset.',
  ),
  rebuild: booleanOption()
    .default(false)
    .describe(
      'A full rebuild (PIT-3): rewrite str_ingested_at of the current version of every input key whose values are unchanged to the publish time, in place.',
    ),
  replace: booleanOption()
    .default(false)
    .describe(
      'Publish the input rows as they are, every version they hold, as the whole new generation. Roll back with --replace --input <an older snapshots/NNNNNNNN.arrow of the dataset>.',
    ),
  seriesKey: z
    .string()
    .regex(COLUMN_LIST_RE, 'must be column names separated by commas')
    .optional()
    .describe("Series-key columns of a first publish (e.g. country or geography,region_type). Default: the input Arrow file's, else none."),
  partBytes: z
    .string()
    .default('512MiB')
    .transform((text, ctx) => {
      const m = /^(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|KB|MB|GB)?$/.exec(text);
      const bytes = m === null ? NaN : Math.floor(Number(m[1]) * { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, KB: 1e3, MB: 1e6, GB: 1e9 }[m[2] ?? 'B']!);
      if (!(bytes >= 1)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${text}" is not a size (e.g. 512MiB, 2GiB, 1000000)` });
        return z.NEVER;
      }
      return bytes;
    })
    .describe('The most bytes of one object of the generation written (contract 14): the output is cut into parts between two series, never inside one.'),
  s3EmulateConditions: booleanOption()
    .default(false)
    .describe(
      'For an S3-compatible store that ignores If-Match/If-None-Match on PUT (s3rver, older MinIO): compare etags just before each write instead. That narrows a race between publishers, it does not close it.',
    ),
});

export interface PublishConfig {
  readonly source: string;
  readonly productId: string;
  readonly dataset: string;
  /** format null: a folder (or a file of no known kind, refused when it is read) */
  readonly input: { readonly path: string; readonly format: InputFormat | null };
  readonly rebuild: boolean;
  readonly replace: boolean;
  readonly seriesKey: readonly string[] | null;
  readonly partBytes: number;
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean; readonly conditionalWrites: 'enforced' | 'unsupported' };
}

export const publishConfigSchema = publishOptions
  .superRefine((o, ctx) => {
    // Which datasets exist is the source's catalog's to say (contract 13): publish reads it.
    if (o.rebuild && o.replace) ctx.addIssue({ code: 'custom', path: ['rebuild'], message: 'cannot be combined with --replace' });
    if (o.seriesKey !== undefined && new Set(o.seriesKey.split(',')).size !== o.seriesKey.split(',').length) {
      ctx.addIssue({ code: 'custom', path: ['seriesKey'], message: 'names a column twice' });
    }
  })
  .transform((o): PublishConfig => ({
    source: o.source,
    productId: o.product,
    dataset: o.dataset,
    input: { path: o.input, format: inputFormatOf(o.input) },
    rebuild: o.rebuild,
    replace: o.replace,
    seriesKey: o.seriesKey === undefined ? null : o.seriesKey.split(','),
    partBytes: o.partBytes,
    s3: {
      ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }),
      forcePathStyle: o.s3ForcePathStyle,
      conditionalWrites: o.s3EmulateConditions ? 'unsupported' : 'enforced',
    },
  }));

export const PUBLISH_OPTIONS: readonly OptionSpec[] = optionSpecs(publishOptions);

/** Reads the config of `pitcache publish` from its arguments (after the word) and the environment. */
export function parsePublishConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: PublishConfig } | { ok: false; message: string } {
  const result = parseOptions({ command: 'publish', specs: PUBLISH_OPTIONS, schema: publishConfigSchema }, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache publish --help)` };
  return { ok: true, config: result.config };
}
