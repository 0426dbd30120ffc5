import type { z } from 'zod';
import { describeArgvProblem, parseArgv } from './parse-argv.js';
import type { OptionSpec } from './option-table.js';
import { flagSpecs } from './option-table.js';

/**
 * Turns argv and the environment into a command's validated config. Each option's raw text
 * comes from its flag if given, else from its environment variable (an empty variable
 * counts as unset), else the schema's default applies. The first problem becomes the one
 * line the operator sees, and it always names the flag, plus the variable when the bad
 * value came from there.
 */
export type ParseOptionsResult<T> =
  { readonly ok: true; readonly config: T; readonly positionals: readonly string[] } | { readonly ok: false; readonly message: string };

type Origin = { readonly from: 'flag' | 'env'; readonly raw: string } | { readonly from: 'default' };

export interface CommandOptions<T> {
  /** The command as typed, for the hint in messages: `serve`. */
  readonly command: string;
  readonly specs: readonly OptionSpec[];
  /** Takes `Record<key, string | undefined>` and produces the config. */
  readonly schema: z.ZodType<T, z.ZodTypeDef, unknown>;
}

const MAX_SHOWN_VALUE = 80;

export function parseOptions<T>(command: CommandOptions<T>, argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseOptionsResult<T> {
  const parsed = parseArgv(argv, flagSpecs(command.specs));
  const problem = parsed.problems[0];
  if (problem !== undefined) {
    return { ok: false, message: `${describeArgvProblem(problem)} (see pitcache ${command.command} --help)` };
  }

  const raw: Record<string, string | undefined> = {};
  const origins = new Map<string, Origin>();
  for (const spec of command.specs) {
    const fromFlag = parsed.flags.get(spec.flag.slice(2))?.[0];
    const fromEnv = env[spec.env];
    let origin: Origin;
    if (fromFlag !== undefined) origin = { from: 'flag', raw: fromFlag };
    else if (fromEnv !== undefined && fromEnv !== '') origin = { from: 'env', raw: fromEnv };
    else origin = { from: 'default' };
    origins.set(spec.key, origin);
    raw[spec.key] = origin.from === 'default' ? undefined : origin.raw;
  }

  const result = command.schema.safeParse(raw);
  if (result.success) return { ok: true, config: result.data, positionals: parsed.positionals };

  const issue = result.error.issues[0]!;
  const key = issue.path[0];
  const spec = command.specs.find((s) => s.key === key);
  if (spec === undefined) return { ok: false, message: issue.message };
  const origin = origins.get(spec.key) ?? { from: 'default' };
  return { ok: false, message: `${where(spec, origin)}: ${issue.message}${shown(origin)}` };
}

function where(spec: OptionSpec, origin: Origin): string {
  switch (origin.from) {
    case 'flag':
      return spec.flag;
    case 'env':
      return `${spec.env} (${spec.flag})`;
    case 'default':
      return `${spec.flag} / ${spec.env}`;
  }
}

function shown(origin: Origin): string {
  if (origin.from === 'default') return '';
  // A URL's user:password part is a secret: never echo it.
  const raw = origin.raw.replace(/\/\/[^/@\s]*@/g, '//***@');
  const text = raw.length > MAX_SHOWN_VALUE ? raw.slice(0, MAX_SHOWN_VALUE) + '...' : raw;
  // JSON quoting keeps a value with a newline on the one line.
  return `, got ${JSON.stringify(text)}`;
}
