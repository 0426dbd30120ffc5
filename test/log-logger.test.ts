import { describe, expect, it } from 'vitest';
import { createLogger, formatLine, silentLogger } from '../src/log/logger.js';
import { ManualClock } from '../src/time/clock.js';

const T0 = Date.UTC(2026, 2, 2, 12, 30, 45, 123);

function capture() {
  const chunks: string[] = [];
  return {
    sink: { write: (c: string) => chunks.push(c) },
    chunks,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== ''),
  };
}

describe('logger', () => {
  it('writes one JSON object per line with the injected clock time, the level, the message and the fields', () => {
    const out = capture();
    const clock = new ManualClock(T0);
    const log = createLogger({ sink: out.sink, clock, level: 'info' });
    log.info('listening', { port: 8080, host: '127.0.0.1' });
    clock.advance(1000);
    log.warn('slow');
    expect(out.chunks.every((c) => c.endsWith('\n') && c.indexOf('\n') === c.length - 1)).toBe(true);
    expect(out.lines().map((l) => JSON.parse(l))).toEqual([
      { t: '2026-03-02T12:30:45.123Z', level: 'info', msg: 'listening', port: 8080, host: '127.0.0.1' },
      { t: '2026-03-02T12:30:46.123Z', level: 'warn', msg: 'slow' },
    ]);
    expect(out.lines()[0]!.startsWith('{"t":"2026-03-02T12:30:45.123Z","level":"info","msg":"listening"')).toBe(true);
  });

  it('drops lines below the minimum level and says which levels are enabled', () => {
    const out = capture();
    const log = createLogger({ sink: out.sink, clock: new ManualClock(T0), level: 'warn' });
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(out.lines().map((l) => JSON.parse(l).level)).toEqual(['warn', 'error']);
    expect([log.isEnabled('debug'), log.isEnabled('info'), log.isEnabled('warn'), log.isEnabled('error')]).toEqual([false, false, true, true]);
  });

  it('shares one no-op function for every disabled level', () => {
    const log = createLogger({ sink: capture().sink, clock: new ManualClock(T0), level: 'error' });
    expect(log.debug).toBe(log.info);
    expect(log.info).toBe(log.warn);
    expect(log.error).not.toBe(log.warn);
  });

  it('adds a child logger fields to every line, and a call field wins over a bound one', () => {
    const out = capture();
    const log = createLogger({ sink: out.sink, clock: new ManualClock(T0), level: 'debug' }).child({ component: 'loader', dataset: 'a/b' });
    log.debug('loaded', { dataset: 'pemi/grid_stress', rows: 3 });
    expect(JSON.parse(out.lines()[0]!)).toEqual({
      t: '2026-03-02T12:30:45.123Z',
      level: 'debug',
      msg: 'loaded',
      component: 'loader',
      dataset: 'pemi/grid_stress',
      rows: 3,
    });
  });

  it('never lets a field replace t, level or msg', () => {
    const line = formatLine(T0, 'info', 'real', {}, { t: 'fake', level: 'error', msg: 'fake', x: 1 });
    expect(JSON.parse(line)).toEqual({ t: '2026-03-02T12:30:45.123Z', level: 'info', msg: 'real', x: 1 });
  });

  it('serializes errors, bigints and multi-line text without breaking the line', () => {
    const err = Object.assign(new Error('boom\nsecond line'), { code: 'ENOENT' });
    const line = formatLine(T0, 'error', 'failed', {}, { err, big: 2n ** 64n });
    expect(line).not.toContain('\n');
    const parsed = JSON.parse(line);
    expect(parsed.err).toMatchObject({ name: 'Error', message: 'boom\nsecond line', code: 'ENOENT' });
    expect(typeof parsed.err.stack).toBe('string');
    expect(parsed.big).toBe('18446744073709551616');
  });

  it('still writes a valid line when a field is cyclic', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const parsed = JSON.parse(formatLine(T0, 'warn', 'odd', {}, { cyclic }));
    expect(parsed).toMatchObject({ t: '2026-03-02T12:30:45.123Z', level: 'warn', msg: 'odd' });
    expect(parsed.log_error).toContain('not serializable');
  });

  it('the silent logger has every level disabled, children included', () => {
    expect(silentLogger.isEnabled('error')).toBe(false);
    expect(silentLogger.child({ a: 1 })).toBe(silentLogger);
  });
});
