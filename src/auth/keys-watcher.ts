import type { ConditionalRead } from '../source/snapshot-source.js';
import { parseKeysFile, type KeysConfig } from './keys-file.js';

/** What a check did: for logs, metrics and tests. */
export type KeysCheck = 'unchanged' | 'applied' | 'refused' | 'missing' | 'unreachable';

export interface KeysWatcherOptions {
  /** a conditional read of the keys file: its source's readIfChanged (etag from the last good read) */
  readonly read: (etag: string | null) => Promise<ConditionalRead>;
  /** the file as the operator named it, for messages */
  readonly origin: string;
  /** installs a new key set on every serving thread */
  readonly apply: (keys: KeysConfig) => void;
  readonly timers: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
  /** polling period; 0 = only on demand (SIGHUP) */
  readonly intervalMs: number;
  readonly log: (level: 'info' | 'warn' | 'error', event: string, fields: Record<string, unknown>) => void;
}

/**
 * Reloads the keys file when it changes, polled like the manifests (a conditional read:
 * an unchanged file costs no transfer, on S3 a 304) and on demand (SIGHUP). A revoked key
 * is therefore refused within one interval. A file that does not parse or validate is
 * refused and logged, and the keys in force stay: a bad edit never locks every client out.
 * A file that disappears keeps the keys in force too (deleting the file is not a way to
 * revoke everything; an empty `keys` list is).
 */
export class KeysWatcher {
  private etag: string | null;
  private timer: unknown = null;
  private running: Promise<KeysCheck> | null = null;
  private stopped = false;

  constructor(
    private readonly opts: KeysWatcherOptions,
    /** etag of the file read at start-up */
    initialEtag: string | null,
  ) {
    this.etag = initialEtag;
  }

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.opts.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Checks now (SIGHUP, or the poll). Concurrent calls share one read. */
  check(): Promise<KeysCheck> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped || this.opts.intervalMs <= 0) return;
    this.timer = this.opts.timers.setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.opts.intervalMs);
  }

  private async checkOnce(): Promise<KeysCheck> {
    const { origin, log } = this.opts;
    let r: ConditionalRead;
    try {
      r = await this.opts.read(this.etag);
    } catch (e) {
      log('warn', 'keys file unreachable; keeping the keys in force', { keys: origin, error: String(e) });
      return 'unreachable';
    }
    if (r.status === 'unchanged') return 'unchanged';
    if (r.status === 'missing') {
      log('warn', 'keys file is missing; keeping the keys in force', { keys: origin });
      return 'missing';
    }
    let keys: KeysConfig;
    try {
      keys = parseKeysFile(Buffer.from(r.bytes).toString('utf8'), origin);
    } catch (e) {
      // Not remembered as seen: the same bad file is refused (and logged) again until fixed.
      log('error', 'new keys file refused; keeping the keys in force', { keys: origin, error: e instanceof Error ? e.message : String(e) });
      return 'refused';
    }
    this.etag = r.etag;
    this.opts.apply(keys);
    log('info', 'keys reloaded', { keys: origin, count: keys.keys.length });
    return 'applied';
  }
}
