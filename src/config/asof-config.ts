import { z } from 'zod';
import type { Catalog, ProductSpec } from '../catalog/catalog.js';
import { ApiError } from '../errors.js';
import { parseQuery } from '../query/parse-query.js';
import { MAX_LIMIT } from '../query/query.js';
import { parseDate, parseRfc3339 } from '../time/instant.js';
import type { OptionSpec } from './option-table.js';
import { flagSpecs, optionSpecs } from './option-table.js';
import { booleanOption, enumOption } from './option-types.js';
import { parseOptions } from './parse-options.js';
import { datasetOptions } from './publish-config.js';

/**
 * The options of `pitcache asof`: the API's query parameters as flags (`as_of` is
 * `--as-of`, a filter `bidding_zone` is `--bidding-zone`). They become the query string
 * the server would get, and the server's own parser checks it, so the two channels accept
 * and refuse the same queries (spec section 1, rule 5).
 *
 * Which filters exist is the catalog's at --source (contract 13), known only once it is
 * read: the command line is parsed first (any flag the table lacks is taken as a filter),
 * then asofQuery checks the product, dataset and filters against the catalog in force.
 */
const flagOf = (param: string): string => `--${param.replace(/_/g, '-')}`;

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
  format: enumOption(['json', 'csv', 'arrow'] as const)
    .default('json')
    .describe(
      'json: one JSON array of every row, as the API renders them. csv: a header of the column names, then one line per row. arrow: one Arrow IPC stream of every row, typed as stored.',
    ),
});

type AsofOptions = z.infer<typeof asofOptions>;

/** A filter flag as given: `--bidding-zone DE,FR` is the filter bidding_zone. */
export interface FilterFlag {
  readonly flag: string;
  readonly param: string;
  readonly value: string;
}

export interface AsofConfig {
  readonly source: string;
  readonly productId: string;
  readonly dataset: string;
  /** the query parameters of the flags other than filters, in a fixed order, as [param, value, flag] */
  readonly params: ReadonlyArray<readonly [string, string, string]>;
  /** the filter flags, in the order given (checked against the catalog by asofQuery) */
  readonly filters: readonly FilterFlag[];
  readonly format: 'json' | 'csv' | 'arrow';
  readonly s3: { readonly endpoint?: string; readonly forcePathStyle: boolean };
}

/** Query parameter -> option key, for the parameters the flags set. */
const PARAM_KEYS: ReadonlyArray<readonly [string, keyof AsofOptions]> = [
  ['latest', 'latest'],
  ['date_from', 'dateFrom'],
  ['date_to', 'dateTo'],
  ['as_of', 'asOf'],
];

export const asofConfigSchema = asofOptions.transform((o): Omit<AsofConfig, 'filters'> => ({
  source: o.source,
  productId: o.product,
  dataset: o.dataset,
  params: PARAM_KEYS.filter(([, key]) => o[key] !== undefined).map(([param, key]) => [param, String(o[key]), flagOf(param)] as const),
  format: o.format,
  s3: { ...(o.s3Endpoint === undefined ? {} : { endpoint: o.s3Endpoint }), forcePathStyle: o.s3ForcePathStyle },
}));

export const ASOF_OPTIONS: readonly OptionSpec[] = optionSpecs(asofOptions);

/** A filter flag's name: lowercase words joined by `-` (the param's `_`). */
const FILTER_FLAG = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * Takes the filter flags out of argv: every `--name value` or `--name=value` whose name is
 * no option of the table (nor `--no-` one) is the filter `name` with `-` read as `_`.
 * What the table's options are is left to the tokenizer, as for every command.
 */
function splitFilterFlags(argv: readonly string[]): { rest: string[]; filters: FilterFlag[]; problem: string | null } {
  const known = flagSpecs(ASOF_OPTIONS);
  const rest: string[] = [];
  const filters: FilterFlag[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = token.indexOf('=');
    const name = token.startsWith('--') ? token.slice(2, eq === -1 ? undefined : eq) : '';
    const spec = known[name] ?? (name.startsWith('no-') ? known[name.slice(3)] : undefined);
    if (name === '' || spec !== undefined || name === 'help') {
      rest.push(token);
      const next = argv[i + 1];
      if (spec?.kind === 'value' && eq === -1 && next !== undefined && !next.startsWith('--')) rest.push(argv[++i]!);
      continue;
    }
    const flag = `--${name}`;
    if (!FILTER_FLAG.test(name)) return { rest, filters, problem: `unknown option ${flag}` };
    let value = eq === -1 ? undefined : token.slice(eq + 1);
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) return { rest, filters, problem: `${flag} needs a value` };
      value = next;
      i++;
    }
    if (filters.some((f) => f.flag === flag)) return { rest, filters, problem: `${flag} is given more than once` };
    filters.push({ flag, param: name.replace(/-/g, '_'), value });
  }
  return { rest, filters, problem: null };
}

/** Reads the config of `pitcache asof` from its arguments (after the word) and the environment. */
export function parseAsofConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: AsofConfig } | { ok: false; message: string } {
  const split = splitFilterFlags(argv);
  if (split.problem !== null) return { ok: false, message: `${split.problem} (see pitcache asof --help)` };
  const result = parseOptions({ command: 'asof', specs: ASOF_OPTIONS, schema: asofConfigSchema }, split.rest, env);
  if (!result.ok) return result;
  const extra = result.positionals[0];
  if (extra !== undefined) return { ok: false, message: `unexpected argument ${JSON.stringify(extra)} (see pitcache asof --help)` };
  return { ok: true, config: { ...result.config, filters: split.filters } };
}

/**
 * The question of a config in the terms of the catalog in force at its source: the product,
 * and the query string the API would get (with the largest page), checked by the server's
 * own parser; or the one line that says which flag is wrong and why.
 */
export function asofQuery(config: AsofConfig, catalog: Catalog): { ok: true; product: ProductSpec; rawQuery: string } | { ok: false; message: string } {
  const got = (value: string): string => `, got ${JSON.stringify(value)}`;
  const product = catalog.product(config.productId);
  if (product === undefined) {
    const ids = catalog.products.map((p) => p.id);
    return {
      ok: false,
      message: `--product: is not a product of the catalog at the source (${ids.length === 0 ? 'it has none' : `its products: ${ids.join(', ')}`})${got(config.productId)}`,
    };
  }
  if (!product.datasets.some((d) => d.name === config.dataset)) {
    return {
      ok: false,
      message: `--dataset: is not a dataset of ${product.id} (its datasets: ${product.datasets.map((d) => d.name).join(', ')})${got(config.dataset)}`,
    };
  }
  for (const f of config.filters) {
    if (product.filters.some((own) => own.param === f.param)) continue;
    // A flag that is no product's filter is no option at all.
    if (!catalog.products.some((p) => p.filters.some((own) => own.param === f.param)))
      return { ok: false, message: `unknown option ${f.flag} (see pitcache asof --help)` };
    const own = product.filters.map((o) => flagOf(o.param));
    return {
      ok: false,
      message: `${f.flag}: is not a filter of ${product.id} (${own.length === 0 ? 'it has none' : `its filters: ${own.join(', ')}`})${got(f.value)}`,
    };
  }
  const given: ReadonlyArray<readonly [string, string, string]> = [...config.params, ...config.filters.map((f) => [f.param, f.value, f.flag] as const)];
  const rawQuery = [...given.map(([param, value]) => `${param}=${encodeURIComponent(value)}`), `limit=${MAX_LIMIT}`].join('&');
  try {
    parseQuery(rawQuery, product, config.dataset);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    // The server's message names the parameter; the line names the flag.
    const at = given.find(([param]) => param === e.param);
    return { ok: false, message: at === undefined ? e.message : `${at[2]}: ${e.message}${got(at[1])}` };
  }
  return { ok: true, product, rawQuery };
}
