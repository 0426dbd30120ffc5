import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/clock.js';
import { realTimers, type Timers } from '../time/timers.js';
import type { LogSink } from './logger.js';

/**
 * The access log: one JSON line per request, written in batches so the request path does
 * no syscall of its own. Lines are buffered and written when the buffer passes
 * `flushBytes`, when `flushIntervalMs` has passed since the first buffered line, and on
 * `flush()` / `close()`. The server must call `close()` on shutdown: the timer is unref'd
 * and does not keep the process alive for the last lines.
 *
 * Lines carry the logger's envelope (`t`, `level`, `msg`) so both streams parse alike.
 *
 * Secrets: a record holds a key *id* from the keys file, never the `x-api-key` value. The
 * type has no field that could carry one, and callers must not put a key in `path`.
 */
export interface AccessRecord {
  readonly recordId: string;
  readonly method: string;
  /** The request path (without the query string is recommended; never a header). */
  readonly path: string;
  readonly status: number;
  /** The id of the authenticated key, or null when the request had none that was known. */
  readonly keyId: string | null;
  /** Response body bytes. */
  readonly bytes: number;
  readonly durMs: number;
}

export interface AccessLogOptions {
  readonly sink?: LogSink;
  readonly clock?: Clock;
  readonly timers?: Timers;
  /** Buffered characters that trigger a write; ~64 KiB by default. */
  readonly flushBytes?: number;
  readonly flushIntervalMs?: number;
}

export const DEFAULT_FLUSH_BYTES = 64 * 1024;
export const DEFAULT_FLUSH_INTERVAL_MS = 1000;
// A hostile client may send a very long path; the log keeps a bounded prefix of it.
const MAX_PATH_CHARS = 2048;

export class AccessLog {
  private readonly sink: LogSink;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly flushBytes: number;
  private readonly flushIntervalMs: number;
  private pending: string[] = [];
  // Counted in UTF-16 units: close enough to bytes for a threshold, and free to compute.
  private pendingChars = 0;
  private timer: unknown = null;
  private closed = false;
  // Requests arrive many per millisecond: format the timestamp once per millisecond.
  private lastMs = Number.NaN;
  private lastIso = '';

  constructor(options: AccessLogOptions = {}) {
    this.sink = options.sink ?? process.stderr;
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? realTimers;
    this.flushBytes = options.flushBytes ?? DEFAULT_FLUSH_BYTES;
    this.flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
  }

  write(record: AccessRecord): void {
    const line = this.format(record);
    if (this.closed) {
      // Late requests during shutdown are still logged, just unbatched.
      this.sink.write(line);
      return;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars >= this.flushBytes) {
      this.flush();
    } else if (this.timer === null) {
      this.timer = this.timers.setTimeout(() => {
        this.timer = null;
        this.flush();
      }, this.flushIntervalMs);
    }
  }

  /** Writes every buffered line in one call. */
  flush(): void {
    if (this.timer !== null) {
      this.timers.clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    this.sink.write(chunk);
  }

  /** Flushes and stops batching; later records are written one by one. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private format(r: AccessRecord): string {
    const ms = Math.floor(this.clock.now());
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastIso = new Date(ms).toISOString();
    }
    const path = r.path.length > MAX_PATH_CHARS ? r.path.slice(0, MAX_PATH_CHARS) : r.path;
    return (
      `{"t":"${this.lastIso}","level":"info","msg":"request","record_id":${JSON.stringify(r.recordId)}` +
      `,"method":${JSON.stringify(r.method)},"path":${JSON.stringify(path)},"status":${num(r.status)}` +
      `,"key_id":${r.keyId === null ? 'null' : JSON.stringify(r.keyId)},"bytes":${num(r.bytes)}` +
      `,"dur_ms":${num(Math.round(r.durMs * 1000) / 1000)}}\n`
    );
  }
}

/** JSON has no NaN or Infinity; a broken measurement must not break the line. */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}
