import { describe, expect, it } from 'vitest';
import { Shutdown, type ShutdownHooks } from '../src/lifecycle/shutdown.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from './support/s3-harness.js';

function world() {
  const events: string[] = [];
  const logs: Array<[string, Record<string, unknown>]> = [];
  let idleResolve: () => void = () => {};
  const clock = new ManualClock(0);
  const timers = new ManualTimers(clock);
  const hooks: ShutdownHooks = {
    markNotReady: () => events.push(`not-ready@${clock.now()}`),
    closeListeners: async () => {
      events.push(`close@${clock.now()}`);
    },
    idle: () => new Promise<void>((r) => (idleResolve = r)),
    exit: (code) => events.push(`exit(${code})@${clock.now()}`),
    log: (event, fields) => logs.push([event, fields]),
  };
  return { events, logs, clock, timers, hooks, finishInFlight: () => idleResolve() };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('shutdown on SIGTERM', () => {
  it('readiness fails at once, listeners close after the drain, the process exits 0 once in-flight requests finish', async () => {
    const w = world();
    const s = new Shutdown(w.hooks, w.timers, 15_000, 30_000);
    s.signal('SIGTERM');
    expect(w.events).toEqual(['not-ready@0']);
    expect(s.state).toBe('draining');
    w.timers.fire(); // the drain ends
    await flush();
    expect(w.events).toEqual(['not-ready@0', 'close@15000']);
    expect(s.state).toBe('closing');
    w.finishInFlight();
    await flush();
    expect(w.events).toEqual(['not-ready@0', 'close@15000', 'exit(0)@15000']);
    expect(s.state).toBe('exited');
    expect(w.logs).toEqual([
      ['draining', { signal: 'SIGTERM', drain_seconds: 15 }],
      ['closing listeners', {}],
    ]);
  });

  it('exits 0 at the grace bound when a request never finishes', async () => {
    const w = world();
    const s = new Shutdown(w.hooks, w.timers, 1_000, 5_000);
    s.signal('SIGTERM');
    w.timers.fire();
    await flush();
    w.timers.fire(); // the grace bound
    await flush();
    expect(w.events).toEqual(['not-ready@0', 'close@1000', 'exit(0)@6000']);
    expect(w.logs.at(-1)).toEqual(['in-flight requests outlived the grace period', { grace_seconds: 5 }]);
  });

  it('a second signal exits at once, and only once', async () => {
    const w = world();
    const s = new Shutdown(w.hooks, w.timers, 15_000, 30_000);
    s.signal('SIGTERM');
    s.signal('SIGINT');
    expect(w.events).toEqual(['not-ready@0', 'exit(0)@0']);
    expect(w.logs.at(-1)).toEqual(['second signal: exiting now', { signal: 'SIGINT', phase: 'draining' }]);
    w.timers.fire(); // the drain timer still fires: nothing more happens
    await flush();
    s.signal('SIGTERM');
    expect(w.events).toEqual(['not-ready@0', 'exit(0)@0']);
  });
});
