import { describe, expect, it } from 'vitest';
import { Shutdown, type ShutdownHooks } from '../src/lifecycle/shutdown.js';
import { ServeSignals, type Stoppable } from '../src/lifecycle/signals.js';
import { silentLogger } from '../src/log/logger.js';
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

describe('the serve process signals (ServeSignals)', () => {
  function process() {
    const listeners = new Map<string, () => void>();
    const events: string[] = [];
    const exits: number[] = [];
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const server: Stoppable = {
      drain: () => void events.push(`drain@${clock.now()}`),
      stopListening: async () => void events.push(`stop-listening@${clock.now()}`),
      idle: async () => void events.push('idle'),
      close: async () => void events.push('close'),
    };
    const signals = new ServeSignals(
      (signal, listener) => listeners.set(signal, listener),
      (code) => exits.push(code),
    );
    let reloads = 0;
    const serve = (reload: boolean) =>
      signals.serve({
        server,
        drainMs: 5_000,
        graceMs: 10_000,
        closeMs: 5_000,
        reloadKeys: reload ? async () => void reloads++ : null,
        log: silentLogger,
        timers,
        exitNow: (code) => exits.push(code),
      });
    return { send: (s: string) => listeners.get(s)!(), listeners, events, exits, timers, serve, reloads: () => reloads };
  }

  it('listens before the server runs; a SIGTERM during start-up drains once it runs, then the serve promise gives 0', async () => {
    const p = process();
    expect([...p.listeners.keys()].sort()).toEqual(['SIGHUP', 'SIGINT', 'SIGTERM']);
    p.send('SIGTERM');
    expect(p.events).toEqual([]);
    const done = p.serve(true);
    expect(p.events).toEqual(['drain@0']);
    p.timers.fire();
    expect(await done).toBe(0);
    expect(p.events).toEqual(['drain@0', 'stop-listening@5000', 'idle', 'close']);
    expect(p.exits).toEqual([]);
  });

  it('a second stop signal during start-up leaves at once', () => {
    const p = process();
    p.send('SIGHUP');
    p.send('SIGINT');
    expect(p.exits).toEqual([]);
    p.send('SIGTERM');
    expect(p.exits).toEqual([0]);
  });

  it('a second signal once serving closes the server, then leaves at once (the serve promise never settles)', async () => {
    const p = process();
    let settled = false;
    void p.serve(true).then(() => (settled = true));
    p.send('SIGTERM');
    p.send('SIGTERM');
    await flush();
    expect(p.events).toEqual(['drain@0', 'close']);
    expect(p.exits).toEqual([0]);
    expect(settled).toBe(false);
  });

  it('SIGHUP reloads the keys file, early or not; without one it is only logged', async () => {
    const p = process();
    p.send('SIGHUP');
    void p.serve(true);
    expect(p.reloads()).toBe(1);
    p.send('SIGHUP');
    expect(p.reloads()).toBe(2);
    expect(p.events).toEqual([]);
    const q = process();
    void q.serve(false);
    q.send('SIGHUP');
    expect(q.events).toEqual([]);
    expect(q.exits).toEqual([]);
  });
});
