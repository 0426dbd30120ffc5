import { describe, expect, it } from 'vitest';
import type { AccessRecord } from '../src/log/access-log.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { AccessLog } from '../src/log/access-log.js';
import { ManualClock } from '../src/time/clock.js';

const T0 = Date.UTC(2026, 2, 2, 12, 0, 0, 0);

function setup(flushBytes = 64 * 1024) {
  const writes: string[] = [];
  const clock = new ManualClock(T0);
  const timers = new ManualTimers(clock);
  const log = new AccessLog({ sink: { write: (c: string) => writes.push(c) }, clock, timers, flushBytes, flushIntervalMs: 500 });
  return { writes, timers, clock, log };
}

const record = (n: number, over: Partial<AccessRecord> = {}): AccessRecord => ({
  recordId: `req_${String(n).padStart(16, '0')}`,
  method: 'GET',
  path: '/pemi/grid_stress',
  status: 200,
  keyId: 'farm-a',
  bytes: 1234,
  durMs: 0.4567,
  ...over,
});

const lines = (writes: string[]) =>
  writes
    .join('')
    .split('\n')
    .filter((l) => l !== '');

describe('access log', () => {
  it('writes nothing per request until flush(), then all lines in one write', () => {
    const { writes, log } = setup();
    for (let i = 0; i < 100; i++) log.write(record(i));
    expect(writes).toEqual([]);
    log.flush();
    expect(writes).toHaveLength(1);
    expect(lines(writes)).toHaveLength(100);
    log.flush();
    expect(writes).toHaveLength(1);
  });

  it('writes one line per request with exactly the access fields, from the injected clock', () => {
    const { writes, log, clock } = setup();
    clock.advance(1.9);
    log.write(record(1));
    log.write(record(2, { method: 'HEAD', path: '/x"y\n', status: 401, keyId: null, bytes: 0, durMs: Number.NaN }));
    log.flush();
    expect(lines(writes).map((l) => JSON.parse(l))).toEqual([
      {
        t: '2026-03-02T12:00:00.001Z',
        level: 'info',
        msg: 'request',
        record_id: 'req_0000000000000001',
        method: 'GET',
        path: '/pemi/grid_stress',
        status: 200,
        key_id: 'farm-a',
        bytes: 1234,
        dur_ms: 0.457,
      },
      {
        t: '2026-03-02T12:00:00.001Z',
        level: 'info',
        msg: 'request',
        record_id: 'req_0000000000000002',
        method: 'HEAD',
        path: '/x"y\n',
        status: 401,
        key_id: null,
        bytes: 0,
        dur_ms: null,
      },
    ]);
  });

  it('writes when the buffer passes the size threshold', () => {
    const { writes, log } = setup(1000);
    let n = 0;
    while (writes.length === 0) log.write(record(n++));
    const written = writes[0]!;
    expect(written.length).toBeGreaterThanOrEqual(1000);
    expect(written.length - written.split('\n').at(-2)!.length - 1).toBeLessThan(1000);
    expect(lines(writes)).toHaveLength(n);
  });

  it('arms one timer for the first buffered line and writes when it fires', () => {
    const { writes, log, timers } = setup();
    log.write(record(1));
    log.write(record(2));
    expect(timers.size).toBe(1);
    expect(timers.requested).toEqual([500]);
    expect(writes).toEqual([]);
    timers.advance(499);
    expect(writes).toEqual([]);
    timers.advance(1);
    expect(lines(writes)).toHaveLength(2);
    log.write(record(3));
    expect(timers.size).toBe(1);
  });

  it('disarms the timer when a flush empties the buffer', () => {
    const { log, timers } = setup();
    log.write(record(1));
    log.flush();
    expect(timers.size).toBe(0);
  });

  it('flushes on close and writes later records unbatched', () => {
    const { writes, log, timers } = setup();
    log.write(record(1));
    log.close();
    expect(lines(writes)).toHaveLength(1);
    expect(timers.size).toBe(0);
    log.write(record(2));
    expect(writes).toHaveLength(2);
    expect(timers.size).toBe(0);
  });

  it('keeps only a bounded prefix of a huge path', () => {
    const { writes, log } = setup();
    log.write(record(1, { path: '/' + 'a'.repeat(100_000) }));
    log.flush();
    expect(JSON.parse(lines(writes)[0]!).path).toHaveLength(2048);
  });
});
