import type { Logger } from '../log/logger.js';
import type { Timers } from '../time/timers.js';
import { Shutdown } from './shutdown.js';

/** What the signal handling needs of a running server (start.ts's RunningServer). */
export interface Stoppable {
  drain(): void;
  stopListening(): Promise<void>;
  idle(): Promise<void>;
  close(): Promise<void>;
}

export interface ServeOptions {
  readonly server: Stoppable;
  /** how long /readyz fails while requests are still answered */
  readonly drainMs: number;
  /** bound on requests in flight once the listeners are closed */
  readonly graceMs: number;
  /** bound on closing the server (threads, builders) before leaving, on either path */
  readonly closeMs: number;
  /** SIGHUP: reload the keys file now (null: there is none, the demo keys live in memory) */
  readonly reloadKeys: (() => Promise<unknown>) | null;
  readonly log: Logger;
  readonly timers: Timers;
  /** leaves the process at once (a second signal, once the server is closed): flush what must be flushed, then process.exit */
  readonly exitNow: (code: number) => void;
}

type Listen = (signal: NodeJS.Signals, listener: () => void) => void;

/**
 * The serve process's signals. SIGTERM and SIGINT run the graceful stop (shutdown.ts):
 * readiness fails at once, requests are answered for the drain, the listeners close, the
 * requests in flight finish, and `serve` resolves with the exit code once the server is
 * closed. A second SIGTERM or SIGINT leaves at once. SIGHUP reloads the keys file.
 *
 * Listening starts at construction, before the server starts: a signal that arrived during
 * start-up would otherwise meet the default action (death by signal, and for SIGHUP too).
 * A stop signal during start-up is kept and acted on once the server runs (start-up is
 * bounded by --startup-timeout); a second one leaves at once.
 */
export class ServeSignals {
  private handle: ((signal: NodeJS.Signals) => void) | null = null;
  /** signals that came before the server ran, in order */
  private readonly early: NodeJS.Signals[] = [];

  constructor(
    listen: Listen,
    /** leaves the process at once (a second stop signal during start-up) */
    exitNow: (code: number) => void,
  ) {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      listen(signal, () => {
        if (this.handle !== null) this.handle(signal);
        else if (signal !== 'SIGHUP' && this.early.some((s) => s !== 'SIGHUP')) exitNow(0);
        else this.early.push(signal);
      });
    }
  }

  serve(o: ServeOptions): Promise<number> {
    return new Promise((resolve) => {
      let stops = 0;
      const shutdown = new Shutdown(
        {
          markNotReady: () => o.server.drain(),
          closeListeners: () => o.server.stopListening(),
          idle: () => o.server.idle(),
          exit: (code) => {
            // Serving threads are closed even on a second signal: a thread whose uWS loop is
            // still open when the process exits aborts it (SIGABRT instead of exit 0). Closing
            // takes milliseconds; the bound only matters if something hangs.
            const now = stops > 1;
            const bound = new Promise<void>((done) => void o.timers.setTimeout(done, o.closeMs));
            void Promise.race([o.server.close(), bound]).then(() => (now ? o.exitNow(code) : resolve(code)));
          },
          log: (event, fields) => o.log.info(event, fields),
        },
        o.timers,
        o.drainMs,
        o.graceMs,
      );
      this.handle = (signal) => {
        if (signal !== 'SIGHUP') {
          stops++;
          shutdown.signal(signal);
        } else if (o.reloadKeys === null) {
          o.log.info('SIGHUP: no keys file to reload (demo keys)');
        } else {
          void o.reloadKeys();
        }
      };
      for (const signal of this.early.splice(0)) this.handle(signal);
    });
  }
}
