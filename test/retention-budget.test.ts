import { describe, expect, it } from 'vitest';
import { resolveServeOptions } from '../src/config/serve-options.js';
import { parseBudget, parseDuration, RetentionBudget } from '../src/generations/retention-budget.js';

const ids = (es: Array<{ dataset: string; generation: number }>) => es.map((e) => `${e.dataset}#${e.generation}`);

describe('retention budget across datasets', () => {
  it('keeps superseded generations of every dataset under one byte budget, least recently used released first', () => {
    const b = new RetentionBudget({ kind: 'bytes', bytes: 100 }, 600_000);
    expect(b.retire('a/x', 1, 40, 0)).toEqual([]);
    expect(b.retire('b/y', 1, 40, 1)).toEqual([]);
    expect(b.touch('a/x', 1, 2)).toBe(true); // a/x#1 is now the most recent
    expect(ids(b.retire('a/x', 2, 40, 3))).toEqual(['b/y#1']);
    expect(b.stats().heldBytes).toBe(80);
    expect(b.has('a/x', 1) && b.has('a/x', 2)).toBe(true);
  });

  it('a generation larger than the whole budget is released at once, without evicting what fits', () => {
    const b = new RetentionBudget({ kind: 'bytes', bytes: 100 }, 600_000);
    b.retire('a/x', 1, 30, 0);
    const out = b.retire('b/y', 7, 500, 1);
    expect(ids(out)).toEqual(['b/y#7']);
    expect(b.stats().heldBytes).toBe(30);
    expect(b.has('a/x', 1)).toBe(true);
  });

  it('a percentage budget follows the live bytes, and shrinking live data releases at once', () => {
    const b = new RetentionBudget({ kind: 'percent', percent: 50 }, 600_000);
    expect(b.setLiveBytes(1000)).toEqual([]);
    expect(b.limit()).toBe(500);
    b.retire('a/x', 1, 300, 0);
    b.retire('a/x', 2, 200, 1);
    expect(ids(b.setLiveBytes(600))).toEqual(['a/x#1']); // limit 300
    expect(b.stats()).toMatchObject({ budgetBytes: 300, heldBytes: 200, liveBytes: 600 });
  });

  it('a percentage never falls below the largest live generation: one dataset keeps its superseded generation', () => {
    const floor = new RetentionBudget(resolveServeOptions().retainMemory, 600_000);
    floor.setLiveBytes(1000, 1000); // one dataset: 25% of it could never hold its previous generation
    expect(floor.limit()).toBe(1000);
    expect(floor.retire('a/x', 1, 1000, 0)).toEqual([]);
    floor.setLiveBytes(10_000, 1000); // nine datasets: 25% is more than the largest
    expect(floor.limit()).toBe(2500);
    floor.setLiveBytes(10_000, 2501); // one dataset of them larger than 25% of all
    expect(floor.limit()).toBe(2501);
    // Bytes are taken as given.
    const given = new RetentionBudget({ kind: 'bytes', bytes: 250 }, 600_000);
    given.setLiveBytes(1000, 1000);
    expect(given.limit()).toBe(250);
  });

  it('releases generations no cursor touched for the idle time, keeps touched ones', () => {
    const b = new RetentionBudget({ kind: 'bytes', bytes: 1e9 }, 600_000);
    b.retire('a/x', 1, 10, 0);
    b.retire('a/x', 2, 10, 0);
    b.touch('a/x', 2, 500_000);
    expect(b.sweep(599_999)).toEqual([]);
    expect(ids(b.sweep(600_000))).toEqual(['a/x#1']);
    expect(ids(b.sweep(1_100_000))).toEqual(['a/x#2']);
    expect(b.touch('a/x', 2, 1_100_001)).toBe(false);
  });

  it('retiring the same generation again replaces it (its bytes count once)', () => {
    const b = new RetentionBudget({ kind: 'bytes', bytes: 100 }, 600_000);
    b.retire('a/x', 1, 60, 0);
    expect(b.retire('a/x', 1, 60, 5)).toEqual([]);
    expect(b.stats()).toEqual({ budgetBytes: 100, heldBytes: 60, liveBytes: 0, entries: [{ dataset: 'a/x', generation: 1, bytes: 60, lastUsedMs: 5 }] });
    b.forget('a/x', 99); // not retained: nothing changes
    expect(b.stats().heldBytes).toBe(60);
  });

  it('defaults: 25% of the live bytes, released after 10 minutes idle', () => {
    expect(resolveServeOptions().retainMemory).toEqual({ kind: 'percent', percent: 25 });
    expect(resolveServeOptions().cursorIdleMs).toBe(600_000);
  });

  it('forget: a generation that became live again no longer counts', () => {
    const b = new RetentionBudget({ kind: 'bytes', bytes: 100 }, 600_000);
    b.retire('a/x', 1, 60, 0);
    b.forget('a/x', 1);
    expect(b.stats().heldBytes).toBe(0);
    expect(b.retire('a/x', 2, 100, 1)).toEqual([]);
  });
});

describe('--retain-memory and --cursor-idle', () => {
  it('sizes and percentages', () => {
    expect(parseBudget('2GiB')).toEqual({ kind: 'bytes', bytes: 2 ** 31 });
    expect(parseBudget('512MiB')).toEqual({ kind: 'bytes', bytes: 512 * 2 ** 20 });
    expect(parseBudget('1.5GB')).toEqual({ kind: 'bytes', bytes: 1.5e9 });
    expect(parseBudget('1000')).toEqual({ kind: 'bytes', bytes: 1000 });
    expect(parseBudget('0')).toEqual({ kind: 'bytes', bytes: 0 });
    expect(parseBudget('25%')).toEqual({ kind: 'percent', percent: 25 });
    expect(parseBudget('2.25%')).toEqual({ kind: 'percent', percent: 2.25 });
    expect(parseBudget('1000%')).toEqual({ kind: 'percent', percent: 1000 });
    expect(parseBudget('1.25GiB')).toEqual({ kind: 'bytes', bytes: 1.25 * 2 ** 30 });
  });

  it('refuses what is not a size, with the flag and an example', () => {
    for (const bad of ['', 'lots', '2 GiB', '-1', '5%%', '2gib', '1e9', 'x25%', '1.%', 'x2GiB', '2.GiB'])
      expect(() => parseBudget(bad)).toThrow(/--retain-memory: .* is not a size/);
    expect(() => parseBudget('5000%')).toThrow(/more than 1000%/);
  });

  it('durations', () => {
    expect(parseDuration('10m', '--cursor-idle')).toBe(600_000);
    expect(parseDuration('90s', '--cursor-idle')).toBe(90_000);
    expect(parseDuration('1h', '--cursor-idle')).toBe(3_600_000);
    expect(parseDuration('250', '--cursor-idle')).toBe(250);
    expect(parseDuration('1.25h', '--cursor-idle')).toBe(4_500_000);
    for (const bad of ['x10m', '1.m', '10mm']) expect(() => parseDuration(bad, '--cursor-idle')).toThrow(/not a duration/);
    expect(() => parseDuration('10 minutes', '--cursor-idle')).toThrow(/--cursor-idle: "10 minutes" is not a duration/);
  });
});
