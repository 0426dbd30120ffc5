/**
 * What a SIGTERM does, in order (Kubernetes sends it when a pod is deleted or rolled):
 *
 * 1. `/readyz` turns 503 at once: the balancer's next health check takes the replica out of
 *    rotation. Requests keep being answered meanwhile, because the balancer still sends
 *    some until it notices.
 * 2. After `drainMs` the listeners close: no new connections.
 * 3. Requests already in flight finish (at most `graceMs` more), then the process exits 0.
 *
 * A second signal exits at once (an operator who means it). Everything that acts on the
 * world is injected, so the sequence is tested on a manual clock.
 */
export interface ShutdownHooks {
  /** readiness -> 503 (idempotent) */
  markNotReady(): void;
  /** stop accepting connections; resolves when the listeners are closed */
  closeListeners(): Promise<void>;
  /** resolves when no request is in flight (an async handler, a large body still draining) */
  idle(): Promise<void>;
  /** leave the process */
  exit(code: number): void;
  log(event: string, fields: Record<string, unknown>): void;
}

export interface ShutdownTimers {
  setTimeout(callback: () => void, ms: number): unknown;
}

export type ShutdownPhase = 'serving' | 'draining' | 'closing' | 'exited';

export class Shutdown {
  private phase: ShutdownPhase = 'serving';

  constructor(
    private readonly hooks: ShutdownHooks,
    private readonly timers: ShutdownTimers,
    /** how long requests keep being answered after readiness fails */
    private readonly drainMs: number,
    /** bound on waiting for in-flight requests after the listeners close */
    private readonly graceMs: number,
  ) {}

  get state(): ShutdownPhase {
    return this.phase;
  }

  /** A SIGTERM or SIGINT (or SIGTERM again). */
  signal(name: string): void {
    if (this.phase !== 'serving') {
      this.hooks.log('second signal: exiting now', { signal: name, phase: this.phase });
      this.exit(0);
      return;
    }
    this.phase = 'draining';
    this.hooks.markNotReady();
    this.hooks.log('draining', { signal: name, drain_seconds: this.drainMs / 1000 });
    this.timers.setTimeout(() => void this.close(), this.drainMs);
  }

  private async close(): Promise<void> {
    if (this.phase !== 'draining') return;
    this.phase = 'closing';
    this.hooks.log('closing listeners', {});
    let timedOut = false;
    const bound = new Promise<void>((resolve) =>
      this.timers.setTimeout(() => {
        timedOut = true;
        resolve();
      }, this.graceMs),
    );
    await Promise.race([this.hooks.closeListeners().then(() => this.hooks.idle()), bound]);
    if (timedOut) this.hooks.log('in-flight requests outlived the grace period', { grace_seconds: this.graceMs / 1000 });
    this.exit(0);
  }

  private exit(code: number): void {
    if (this.phase === 'exited') return;
    this.phase = 'exited';
    this.hooks.exit(code);
  }
}
