import type { OptionRow, OptionSpec } from '../config/option-table.js';
import { ASOF_OPTIONS } from '../config/asof-config.js';
import { CATALOG_OPTIONS } from '../config/catalog-config.js';
import { PRUNE_OPTIONS } from '../config/prune-config.js';
import { PUBLISH_OPTIONS } from '../config/publish-config.js';
import { SERVE_OPTIONS } from '../config/serve-config.js';

/**
 * `--help` texts, written from the option schemas' descriptions so help never disagrees
 * with what the parser accepts. Also the Markdown table of options for the README.
 */

export interface CommandHelp {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** A paragraph under the usage line. */
  readonly about: string;
  readonly options: readonly OptionSpec[];
}

/** Every command of the bin; `publish` and `asof` add themselves here. */
export const COMMANDS: readonly CommandHelp[] = [
  {
    name: 'serve',
    summary: 'Run the HTTP API over the snapshots of a source.',
    about:
      'Serves GET /{product_id}/{dataset_name} over the Arrow snapshots found at --source, authenticating callers with the keys file --keys. Try it with --demo: no S3 and no other set-up. Signals: SIGTERM or SIGINT drains (see --drain-seconds) then exits 0, a second one exits at once; SIGHUP reloads the keys file, which is also polled every --refresh-interval.',
    options: SERVE_OPTIONS,
  },
  {
    name: 'publish',
    summary: 'Publish recomputed rows of a dataset as its next snapshot generation.',
    about:
      "Compares each input row with its key's current stored version and appends it only when a value differs (spec section 3); a publish that changes nothing writes nothing. The object is written first, then the manifest with a conditional write, so two publishers never silently overwrite each other. Prints one summary line.",
    options: PUBLISH_OPTIONS,
  },
  {
    name: 'asof',
    summary: 'Rebuild an API answer from the stored files (the file channel).',
    about:
      "Answers the query the flags describe from the snapshot files of --source with the server's own code (same checks, PIT-4 ordering, rendering) and writes every row of the answer to stdout: the rows of the API's data arrays over its whole cursor chain. The product, its datasets and filters are the catalog's at --source (pitcache catalog --source prints it); each filter is a flag named after it, _ written -: a filter bidding_zone is --bidding-zone DE or --bidding-zone DE,FR (any of them).",
    options: ASOF_OPTIONS,
  },
  {
    name: 'prune',
    summary: "Remove old generations' objects and history manifests from a source.",
    about:
      'Removes, for each dataset, the generations older than the newest --keep N and/or whose history manifest was created longer ago than --older-than (given both, a generation goes only when both say so): its history/NNNNNNNN.json first, then its object. Never the live generation (the one manifest.json names), an object a kept generation references, or a generation above the live one (a publish under way). A removed generation can no longer be asked for with generation=N or continued by a cursor (400 generation_unavailable, cursor_expired). --dry-run lists instead.',
    options: PRUNE_OPTIONS,
  },
  {
    name: 'catalog',
    summary: 'Print or set the catalog (products, datasets, filters, floors) of a source.',
    about:
      "Prints the catalog in force at --source: its catalog.json, or the built-in catalog when it has none (--builtin prints that one). With --set FILE, validates the file (every refusal names the product, dataset or field and why) and writes it as the source's catalog.json, only if that is still the one read: two writers cannot overwrite each other. Servers apply it within one --refresh-interval, without a restart (contract 13).",
    options: CATALOG_OPTIONS,
  },
];

const WIDTH = 80;
const INDENT = 2;
const COLUMN = 30;

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const token of argv) {
    if (token === '--') return false;
    if (token === '--help' || token === '-h') return true;
  }
  return false;
}

export function rootUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 3;
  return [
    'pitcache: point-in-time market signal API over Arrow snapshots',
    '',
    'Usage:',
    '  pitcache <command> [options]',
    '  pitcache <command> --help',
    '',
    'Commands:',
    ...COMMANDS.map((c) => '  ' + c.name.padEnd(width) + c.summary),
    '',
    'Start here: pitcache serve --demo',
    '',
  ].join('\n');
}

export function commandUsage(command: CommandHelp): string {
  const lines = [`Usage: pitcache ${command.name} [options]`, '', ...wrap(command.about, WIDTH), '', 'Options:'];
  for (const spec of command.options) {
    const label = spec.kind === 'boolean' ? `--[no-]${spec.flag.slice(2)}` : `${spec.flag} ${spec.placeholder ?? ''}`;
    const notes = [`env ${spec.env}`, ...(spec.default === undefined ? [] : [`default ${spec.default}`])].join(', ');
    lines.push(...column(label, [...wrap(spec.description, WIDTH - COLUMN), notes]));
  }
  lines.push(...column('-h, --help', ['Show this help.']));
  lines.push(
    '',
    ...wrap(
      'Every option can also be set by its environment variable; a flag wins over its variable. Booleans take --x, --no-x or --x=true|false|1|0 (variables: true, false, 1 or 0).',
      WIDTH,
    ),
    '',
  );
  return lines.join('\n');
}

export function serveUsage(): string {
  return commandUsage(COMMANDS[0]!);
}

/** The README's configuration table. */
export function optionsMarkdownTable(rows: readonly OptionRow[]): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const code = (text: string): string => '`' + text + '`';
  return [
    '| flag | environment variable | default | description |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${code(r.flag)} | ${code(r.env)} | ${r.default === undefined ? '' : code(r.default)} | ${cell(r.description)} |`),
    '',
  ].join('\n');
}

/** A label in the left column and its text lines in the right one. */
function column(label: string, text: readonly string[]): string[] {
  const pad = ' '.repeat(COLUMN);
  const head = ' '.repeat(INDENT) + label;
  const [first = '', ...rest] = text;
  const out = head.length < COLUMN ? [head.padEnd(COLUMN) + first] : [head, pad + first];
  return [...out, ...rest.map((line) => pad + line)];
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
