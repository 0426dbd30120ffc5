import { z } from 'zod';
import { PRODUCTS, findProduct } from '../catalog/products.js';
import { ApiError } from '../errors.js';
import { parseQuery } from '../query/parse-query.js';
import { MAX_LIMIT } from '../query/query.js';
import { parseDate, parseRfc3339 } from '../time/instant.js';
import type { OptionSpec } from './option-table.js';
import { optionSpecs } from './option-table.js';
import { booleanOption, enumOption } from './option-types.js';
import { parseOptions } from './parse-options.js';
import { datasetIssue, datasetOptions } from './publish-config.js';

/**
 * The options of `pitcache asof`: the API's query parameters as flags (`as_of` is
 * `--as-of`, a filter `bidding_zone` is `--bidding-zone`). They become the query string
 * the server would get, and the server's own parser checks it, so the two channels accept
 * and refuse the same queries (spec section 1, rule 5).
 */
const camel = (param: string): string => param.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Every filter parameter of any product (contract 3), once. */
const FILTER_PARAMS = [...new Set(PRODUCTS.flatMap((p) => p.filters.map((f) => f.param)))];

const filterOptions = Object.fromEntries(
  FILTER_PARAMS.map((param) => {
    const owners = PRODUCTS.filter((p) => p.filters.some((f) => f.param === param)).map((p) => p.id);
    return [
      camel(param),
      z
        .string()
        .min(1, 'must not be empty')
        .optional()
        .describe(`Filter ${param} of ${owners.join(', ')}: a value or a comma-separated list of values (any of them).`),
    ];
  }),
) as Record<string, z.ZodOptional<z.ZodString>>;

const dateText = (what: string): z.ZodOptional<z.ZodEffects<z.ZodString, string, string>> =>
  z
    .string()
    .refine((t) => parseDate(t) !== null, 'must be a date YYYY-MM-DD')
    .optional()
    .describe(what);

const asofOptions = z.object({
  ...datasetOptions,
  asOf: z
    .string()
    .refine(
      (t) => parseDate(t) !== null || parseRfc3339(t) !== null,
      'must be a date YYYY-MM-DD (the end of that UTC day) or an RFC 3339 timestamp with Z or an offset',
    )
    .optional()
    .describe("Rebuild what was knowable and held at this instant (the API's as_of): YYYY-MM-DD means the end of that UTC day. Unset: every stored version."),
  dateFrom: dateText("Lower bound of date, inclusive (the API's date_from); when given, --latest is ignored."),
  dateTo: dateText("Upper bound of date, inclusive (the API's date_to)."),
  latest: booleanOption().optional().describe("The API's latest: true (its default) gives each series' most recent row, false every row."),
  ...filterOptions,
  format: enumOption(['json', 'csv', 'arrow'] as const)
    .default('json')
    .describe(
      'json: one JSON array of every row, as the API renders them. csv: a header of the column names, then one line per row. arrow: one Arrow IPC stream of every row, typed as stored.',
    ),
});

type AsofOptions = z.infer<typeof asofOptions>;

export interface AsofConfig {
  readonly source: string;
  readonly productId: string;
  readonly dataset: string;
  /** the query string the API would get for the same question, with the largest page */
  readonly rawQuery: string;
  readonly format: 'json' | 'csv' | 'arrow';
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
}

/** Query parameter -> option key, for the parameters the flags set. */
const PARAM_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['latest', 'latest'],
  ['date_from', 'dateFrom'],
  ['date_to', 'dateTo'],
  ['as_of', 'asOf'],
  ...FILTER_PARAMS.map((p) => [p, camel(p)] as const),
];

function rawQueryOf(o: AsofOptions): string {
  const parts: string[] = [];
  for (const [param, key] of PARAM_KEYS) {
    const value = (o as Record<string, unknown>)[key];
    if (value !== undefined) parts.push(`${param}=${encodeURIComponent(String(value))}`);
  }
  parts.push(`limit=${MAX_LIMIT}`);
  return parts.join('&');
}

export const asofConfigSchema = asofOptions
  .superRefine((o, ctx) => {
    const bad = datasetIssue(o.product, o.dataset);
    if (bad !== null) return ctx.addIssue({ code: 'custom', path: ['dataset'], message: bad });
    const product = findProduct(o.product)!;
    for (const param of FILTER_PARAMS) {
      if ((o as Record<string, unknown>)[camel(param)] === undefined || product.filters.some((f) => f.param === param)) continue;
      const own = product.filters.map((f) => f.param.replace(/_/g, '-'));
      const message = `is not a filter of ${product.id} (${own.length === 0 ? 'it has none' : `its filters: --${own.join(', --')}`})`;
      return ctx.addIssue({ code: 'custom', path: [camel(param)], message });
    }
    try {
      parseQuery(rawQueryOf(o), product, o.dataset);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // The server's message names the parameter; the path names the flag.
      const key = PARAM_KEYS.find(([param]) => param === e.param)?.[1];
      ctx.addIssue({ code: 'custom', path: key === undefined ? [] : [key], message: e.message });
    }
  })
  .transform((o): AsofConfig => ({
    source: o.source,
    productId: o.product,
    dataset: o.dataset,
    rawQuery: rawQueryOf(o),
    format: o.format,
    s3: { ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }), forcePathStyle: o.s3ForcePathStyle },
  }));

export const ASOF_OPTIONS: readonly OptionSpec[] = optionSpecs(asofOptions);

/** Reads the config of `pitcache asof` from its arguments (after the word) and the environment. */
export function parseAsofConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: AsofConfig } | { ok: false; message: string } {
  const result = parseOptions({ command: 'asof', specs: ASOF_OPTIONS, schema: asofConfigSchema }, argv, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache asof --help)` };
  return { ok: true, config: result.config };
}
