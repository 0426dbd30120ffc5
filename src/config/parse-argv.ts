/**
 * The argv tokenizer shared by every command. It knows only which flags exist and whether
 * each takes a value; what the values mean is the business of the command's zod schema.
 * Problems are returned as data so a command can report the first one on one line (and a
 * test can look at all of them) instead of unwinding through exceptions.
 */

export interface FlagSpec {
  /** A boolean flag is set by `--x`, `--no-x`, `--x=value` or `--x true|false`. */
  readonly kind: 'boolean' | 'value';
  /** When true, every occurrence is kept; otherwise a second one is a problem. */
  readonly repeatable?: boolean;
  /** One-letter alias used after a single dash, e.g. `h` for `-h`. */
  readonly short?: string;
}

/** Keyed by the flag name without its dashes: `log-level`, not `--log-level`. */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export type ArgvProblem =
  | { readonly kind: 'unknown_flag'; readonly token: string }
  | { readonly kind: 'duplicate_flag'; readonly flag: string }
  | { readonly kind: 'missing_value'; readonly flag: string }
  | { readonly kind: 'not_negatable'; readonly flag: string }
  | { readonly kind: 'negation_with_value'; readonly flag: string };

export interface ParsedArgv {
  /** Flag name (no dashes) to its values in order; a bare boolean flag reads `'true'`, `--no-x` reads `'false'`. */
  readonly flags: ReadonlyMap<string, readonly string[]>;
  readonly positionals: readonly string[];
  readonly problems: readonly ArgvProblem[];
}

// Only these words are taken as the value of a bare boolean flag: anything else after it
// is a positional, so `--demo data/` never swallows a path.
const BOOLEAN_WORDS = new Set(['true', 'false']);

export function parseArgv(argv: readonly string[], specs: FlagSpecs): ParsedArgv {
  const flags = new Map<string, string[]>();
  const positionals: string[] = [];
  const problems: ArgvProblem[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short !== undefined) byShort.set(spec.short, name);

  const record = (name: string, value: string): void => {
    const values = flags.get(name);
    if (values === undefined) {
      flags.set(name, [value]);
    } else if (specs[name]?.repeatable === true) {
      values.push(value);
    } else {
      problems.push({ kind: 'duplicate_flag', flag: name });
    }
  };

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith('-') || token === '-') {
      positionals.push(token);
      continue;
    }

    let name: string;
    let inline: string | undefined;
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      name = eq === -1 ? token.slice(2) : token.slice(2, eq);
      inline = eq === -1 ? undefined : token.slice(eq + 1);
    } else {
      const long = token.length === 2 ? byShort.get(token.slice(1)) : undefined;
      if (long === undefined) {
        problems.push({ kind: 'unknown_flag', token });
        continue;
      }
      name = long;
    }

    let spec = specs[name];
    let negated = false;
    if (spec === undefined && name.startsWith('no-')) {
      const positive = name.slice(3);
      const positiveSpec = specs[positive];
      if (positiveSpec !== undefined) {
        if (positiveSpec.kind !== 'boolean') {
          problems.push({ kind: 'not_negatable', flag: positive });
          continue;
        }
        if (inline !== undefined) {
          problems.push({ kind: 'negation_with_value', flag: positive });
          continue;
        }
        spec = positiveSpec;
        name = positive;
        negated = true;
      }
    }
    if (spec === undefined || name === '') {
      problems.push({ kind: 'unknown_flag', token: inline === undefined ? token : token.slice(0, token.indexOf('=')) });
      continue;
    }

    if (spec.kind === 'boolean') {
      if (negated) {
        record(name, 'false');
      } else if (inline !== undefined) {
        record(name, inline);
      } else {
        const next = argv[i + 1];
        if (next !== undefined && BOOLEAN_WORDS.has(next.toLowerCase())) {
          record(name, next);
          i++;
        } else {
          record(name, 'true');
        }
      }
      continue;
    }

    if (inline !== undefined) {
      record(name, inline);
      continue;
    }
    const next = argv[i + 1];
    // `--source --keys k` is a forgotten value, not a source named "--keys"; a value that
    // really starts with `--` can still be given as `--source=--x`.
    if (next === undefined || (next.startsWith('--') && next.length > 2)) {
      problems.push({ kind: 'missing_value', flag: name });
      continue;
    }
    record(name, next);
    i++;
  }
  return { flags, positionals, problems };
}

/** One line for the operator; the flag is written as they would type it. */
export function describeArgvProblem(problem: ArgvProblem): string {
  switch (problem.kind) {
    case 'unknown_flag':
      return `unknown option ${problem.token}`;
    case 'duplicate_flag':
      return `--${problem.flag} is given more than once`;
    case 'missing_value':
      return `--${problem.flag} needs a value`;
    case 'not_negatable':
      return `--no-${problem.flag} is not an option: --${problem.flag} takes a value`;
    case 'negation_with_value':
      return `--no-${problem.flag} takes no value`;
  }
}
