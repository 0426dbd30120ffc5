import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { prometheusText } from '../src/metrics/aggregate.js';
import { GC_KINDS, GcMetrics } from '../src/metrics/gc-metrics.js';
import { ServingMetrics } from '../src/threads/serving-metrics.js';
import { promtoolCheck } from './support/prom-text.js';

// A full collection on demand: --expose-gc set now reaches a fresh context's global.
setFlagsFromString('--expose-gc');
const fullGc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/** PerformanceObserver delivers 'gc' entries after the collection, on a later turn. */
const entriesDelivered = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Allocates `arrays` JS arrays of 10,000 elements (80 KB of heap each) and drops them. */
function allocate(arrays: number): number {
  let keep: unknown[] = [];
  let n = 0;
  for (let i = 0; i < arrays; i++) {
    const a = new Array<number>(10_000).fill(i);
    n += a.length;
    keep.push(a);
    if (keep.length > 50) keep = [];
  }
  return n;
}

describe('garbage collection metrics of a serving thread', () => {
  it('count collections by kind with their pause, and the bytes the thread allocated', async () => {
    const m = new GcMetrics('0');
    try {
      const before = m.totals();
      expect(allocate(1000)).toBe(10_000_000);
      fullGc();
      fullGc();
      await entriesDelivered();
      const after = m.totals();
      // 1,000 arrays of 10,000 8-byte elements: at least 80 MB; little else runs meanwhile.
      const allocated = after.allocatedBytes - before.allocatedBytes;
      expect(allocated).toBeGreaterThanOrEqual(80e6);
      expect(allocated).toBeLessThan(160e6);
      expect(after.count.scavenge).toBeGreaterThan(before.count.scavenge);
      expect(after.count.mark_compact - before.count.mark_compact).toBeGreaterThanOrEqual(2);
      expect(after.pauseSeconds.mark_compact).toBeGreaterThan(before.pauseSeconds.mark_compact);
      expect(after.pauseSeconds.scavenge).toBeGreaterThan(0);
      // An idle stretch allocates next to nothing: the counter does not drift on its own.
      const idle = m.totals().allocatedBytes;
      expect(m.totals().allocatedBytes - idle).toBeLessThan(64 * 1024);
    } finally {
      m.close();
    }
  });

  it('are exposed per thread in the Prometheus text, next to the request metrics, and promtool accepts it', async () => {
    const a = new ServingMetrics(['pemi/grid_stress'], '0');
    const b = new ServingMetrics(['pemi/grid_stress'], '1');
    try {
      allocate(200);
      fullGc();
      await entriesDelivered();
      const text = await prometheusText([await a.snapshot(), await b.snapshot()]);
      for (const thread of ['0', '1']) {
        for (const kind of GC_KINDS) {
          expect(sample(text, `pitcache_gc_total{thread="${thread}",kind="${kind}"}`), kind).toBeGreaterThanOrEqual(0);
          expect(sample(text, `pitcache_gc_pause_seconds_total{thread="${thread}",kind="${kind}"}`), kind).toBeGreaterThanOrEqual(0);
        }
        expect(sample(text, `pitcache_gc_total{thread="${thread}",kind="mark_compact"}`)).toBeGreaterThanOrEqual(1);
        expect(sample(text, `pitcache_heap_allocated_bytes_total{thread="${thread}"}`)).toBeGreaterThanOrEqual(16e6);
        expect(sample(text, `pitcache_heap_external_bytes{thread="${thread}"}`)).toBeGreaterThan(0);
      }
      expect(text).toContain('pitcache_requests_total');
      expect(promtoolCheck(text)).toBe('');
    } finally {
      a.close();
      b.close();
    }
  });
});
