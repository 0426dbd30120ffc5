import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/clock.js';

/**
 * A structured logger: one JSON object per line, `{"t","level","msg",...fields}`.
 *
 * It writes to stderr by default. Stdout is kept for what a command produces (the
 * `asof` and `publish` commands print results there), so logs never corrupt output that is
 * piped on; service managers and containers collect stderr just the same.
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Readonly<Record<string, unknown>>;

/** Anything with a `write(string)`: process.stderr, a file stream, or an array in a test. */
export interface LogSink {
  write(chunk: string): unknown;
}

export type LogMethod = (msg: string, fields?: LogFields) => void;

export interface Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
  isEnabled(level: LogLevel): boolean;
  /** A logger that adds `fields` to every line (e.g. `{component: 'loader'}`). */
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  readonly level?: LogLevel;
  readonly sink?: LogSink;
  readonly clock?: Clock;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };
// The envelope is written first and a field may not overwrite it.
const RESERVED = new Set(['t', 'level', 'msg']);

const noop: LogMethod = () => {};

export function createLogger(options: LoggerOptions = {}): Logger {
  return new JsonLogger(options.level ?? 'info', options.sink ?? process.stderr, options.clock ?? systemClock, {});
}

/** A logger that drops everything; for tests and tools that want silence. */
export const silentLogger: Logger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  isEnabled: () => false,
  child: () => silentLogger,
};

class JsonLogger implements Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;

  constructor(
    private readonly level: LogLevel,
    private readonly sink: LogSink,
    private readonly clock: Clock,
    private readonly bound: LogFields,
  ) {
    // A disabled level is the shared no-op: a debug call on a hot path costs a call, not
    // an object walk. (Arguments are still evaluated by the caller; guard costly ones
    // with isEnabled.)
    this.debug = this.method('debug');
    this.info = this.method('info');
    this.warn = this.method('warn');
    this.error = this.method('error');
  }

  isEnabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.level];
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.level, this.sink, this.clock, { ...this.bound, ...fields });
  }

  private method(level: LogLevel): LogMethod {
    if (!this.isEnabled(level)) return noop;
    return (msg, fields) => this.sink.write(formatLine(this.clock.now(), level, msg, this.bound, fields) + '\n');
  }
}

/** Exported for the tests and for anything that must format a line without a logger. */
export function formatLine(nowMs: number, level: LogLevel, msg: string, bound: LogFields, fields: LogFields | undefined): string {
  const record: Record<string, unknown> = { t: new Date(nowMs).toISOString(), level, msg };
  for (const source of [bound, fields]) {
    if (source === undefined) continue;
    for (const key of Object.keys(source)) if (!RESERVED.has(key)) record[key] = source[key];
  }
  try {
    return JSON.stringify(record, replacer);
  } catch (e) {
    // A cyclic field must not lose the line or throw into the caller.
    return JSON.stringify({ t: record.t, level, msg, log_error: `fields not serializable: ${(e as Error).message}` });
  }
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    const code = (value as NodeJS.ErrnoException).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }), stack: value.stack };
  }
  return value;
}
