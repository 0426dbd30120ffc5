import { z } from 'zod';
import type { FlagSpecs } from './parse-argv.js';

/**
 * A command's options are the fields of one zod object: the field `logLevel` is the flag
 * `--log-level` and the variable `PITCACHE_LOG_LEVEL`, its `.describe()` text is its help,
 * its `.default()` is its default. Help, the README table, the argv tokenizer and the
 * validation all read this one description, so they cannot drift apart.
 */
export interface OptionSpec {
  /** The schema field, camelCase. */
  readonly key: string;
  /** `--log-level`. */
  readonly flag: string;
  /** `PITCACHE_LOG_LEVEL`. */
  readonly env: string;
  readonly kind: 'boolean' | 'value';
  /** How the value is written in help: `<port>`, `<debug|info|warn|error>`; null for booleans. */
  readonly placeholder: string | null;
  /** The default as it would be typed, or undefined when there is none. */
  readonly default: string | undefined;
  readonly description: string;
}

/** A row of the README's configuration table and of `--help`. */
export interface OptionRow {
  readonly flag: string;
  readonly env: string;
  readonly default: string | undefined;
  readonly description: string;
}

export const ENV_PREFIX = 'PITCACHE_';

/** Reads the option table of a command's schema. Throws on an undescribed field: a programming error. */
export function optionSpecs(options: z.AnyZodObject, envPrefix: string = ENV_PREFIX): OptionSpec[] {
  return Object.entries(options.shape as z.ZodRawShape).map(([key, field]) => {
    const { base, description, defaultValue } = unwrap(field);
    if (description === undefined) throw new Error(`option ${key} has no description`);
    const kebab = key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
    const kind = base instanceof z.ZodBoolean ? 'boolean' : 'value';
    return {
      key,
      flag: '--' + kebab,
      env: envPrefix + kebab.replace(/-/g, '_').toUpperCase(),
      kind,
      placeholder: kind === 'boolean' ? null : base instanceof z.ZodEnum ? `<${(base.options as string[]).join('|')}>` : `<${kebab}>`,
      default: defaultValue === undefined ? undefined : String(defaultValue),
      description,
    };
  });
}

export function optionRows(specs: readonly OptionSpec[]): OptionRow[] {
  return specs.map(({ flag, env, default: def, description }) => ({ flag, env, default: def, description }));
}

/** What the argv tokenizer needs to know of the options. */
export function flagSpecs(specs: readonly OptionSpec[]): FlagSpecs {
  return Object.fromEntries(specs.map((s) => [s.flag.slice(2), { kind: s.kind }]));
}

/** Looks through defaults, optionals and effects to the type that reads the value. */
function unwrap(field: z.ZodTypeAny): { base: z.ZodTypeAny; description: string | undefined; defaultValue: unknown } {
  let node = field;
  let description: string | undefined;
  let defaultValue: unknown;
  for (;;) {
    description ??= node.description;
    if (node instanceof z.ZodDefault) {
      defaultValue ??= (node._def as z.ZodDefaultDef).defaultValue();
      node = (node._def as z.ZodDefaultDef).innerType;
    } else if (node instanceof z.ZodOptional) {
      node = node.unwrap() as z.ZodTypeAny;
    } else if (node instanceof z.ZodEffects) {
      node = node.innerType() as z.ZodTypeAny;
    } else {
      return { base: node, description, defaultValue };
    }
  }
}
