import { z } from 'zod';
import { parseBudget, parseDuration, type Budget } from '../generations/retention-budget.js';
import { parseStoreLocation } from '../source/location.js';

/**
 * Value types of command-line options. Each reads the raw text of a flag or an environment
 * variable (or the typed default) and says what is wrong in a phrase that follows
 * "--flag: ", so every message reads the same.
 */

const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false };
const BOOLEAN_MESSAGE = 'must be true, false, 1 or 0';

/** true/false/1/0 in any case. `--x` and `--no-x` arrive here as 'true' and 'false'. */
export function booleanOption(): z.ZodEffects<z.ZodBoolean, boolean, unknown> {
  return z.preprocess(
    (v) => (typeof v === 'string' ? (BOOLEAN_TEXT[v.toLowerCase()] ?? v) : v),
    z.boolean({ invalid_type_error: BOOLEAN_MESSAGE, required_error: BOOLEAN_MESSAGE }),
  );
}

/** A decimal integer in [min, max]; no sign, no hex, no blanks. */
export function integerOption(min: number, max: number): z.ZodEffects<z.ZodNumber, number, unknown> {
  const message = `must be an integer from ${min} to ${max}`;
  return z.preprocess(
    (v) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v),
    z.number({ invalid_type_error: message, required_error: message }).int(message).min(min, message).max(max, message),
  );
}

export function enumOption<const T extends readonly [string, ...string[]]>(values: T): z.ZodEnum<z.Writeable<T>> {
  const message = `must be one of ${values.join(', ')}`;
  return z.enum(values, { errorMap: () => ({ message }) });
}

/** A non-empty word without blanks: a host name, an address. */
export function wordOption(): z.ZodString {
  return z.string({ required_error: 'is required' }).regex(/^\S+$/, 'must be a non-empty word without blanks');
}

/** A non-empty filesystem path. */
export function pathOption(): z.ZodString {
  return z
    .string({ required_error: 'is required' })
    .min(1, 'must not be empty')
    .regex(/^[^\0]*$/, 'must not contain a NUL character');
}

/** `s3://bucket/prefix`, `file:///abs/dir` or a path; kept as the operator wrote it. */
export function locationOption(): z.ZodEffects<z.ZodString, string, string> {
  return z.string({ required_error: 'is required' }).superRefine((text, ctx) => {
    const location = parseStoreLocation(text);
    if (typeof location === 'string') ctx.addIssue({ code: z.ZodIssueCode.custom, message: location });
  });
}

/** `--retain-memory`: bytes (`2GiB`, `512MiB`, `1000000`) or a percentage of the live generations' bytes (`25%`). */
export function budgetOption(): z.ZodEffects<z.ZodString, Budget, string> {
  return z.string({ required_error: 'is required' }).transform((text, ctx) => {
    try {
      return parseBudget(text);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: withoutFlag((e as Error).message) });
      return z.NEVER;
    }
  });
}

/** A positive duration: `10m`, `90s`, `1h`, `2d`, or ms as a bare number. */
export function durationOption(): z.ZodEffects<z.ZodString, number, string> {
  return z.string({ required_error: 'is required' }).transform((text, ctx) => {
    let ms: number;
    try {
      ms = parseDuration(text, 'duration');
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: withoutFlag((e as Error).message) });
      return z.NEVER;
    }
    if (ms <= 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be a positive duration (e.g. 10m, 90s, 1h)' });
      return z.NEVER;
    }
    return ms;
  });
}

/** The parsers name their flag; the option layer names it again ("--flag: "), so it goes. */
function withoutFlag(message: string): string {
  return message.replace(/^[-\w]+: /, '');
}
