import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { counter, gauge, type CustomMetric } from './custom-metric.js';

/** GC kinds as Node reports them (perf_hooks NODE_PERFORMANCE_GC_*), in label order. */
export const GC_KINDS = ['scavenge', 'mark_compact', 'incremental', 'weak_callbacks'] as const;
export type GcKind = (typeof GC_KINDS)[number];

const KIND_INDEX = new Map<number, number>([
  [constants.NODE_PERFORMANCE_GC_MINOR, 0],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 1],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 2],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 3],
]);

/** GCs between two reads of the profiler: bounds what it buffers when nobody scrapes. */
const FOLD_EVERY = 64;

interface ProfiledGc {
  readonly beforeGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
  readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
}

/**
 * Garbage collection of one thread's V8 heap: collections and pause time by kind (a
 * PerformanceObserver on 'gc' entries: exact and cheap), and the bytes the thread
 * allocated. V8 (Node 20) keeps no allocation counter, so allocation is summed from the
 * heap's used size before each collection minus after the previous one (v8.GCProfiler
 * records both), plus the growth since the last collection. The profiler is read every
 * FOLD_EVERY collections and at each scrape, so what it buffers stays small.
 *
 * These are the numbers behind a tail of full pauses (bench/RESULTS.md "The p99 tail"):
 * operators see mark-compacts per second and allocation per request from /metrics.
 */
export class GcMetrics {
  private readonly count = new Float64Array(GC_KINDS.length);
  /** seconds */
  private readonly pause = new Float64Array(GC_KINDS.length);
  private allocated = 0;
  /** used heap bytes when the current profiler window started, or after its last collection */
  private lastUsed = 0;
  private seen = 0;
  private readonly profiler = new GCProfiler();
  private readonly observer: PerformanceObserver;
  private closed = false;

  constructor(
    /** label of this thread */
    private readonly thread: string,
  ) {
    this.observer = new PerformanceObserver((list) => this.observe(list.getEntries()));
    this.observer.observe({ entryTypes: ['gc'] });
    this.startWindow();
  }

  /** Totals so far (collections and pause seconds by kind, allocated bytes). */
  totals(): { readonly count: Readonly<Record<GcKind, number>>; readonly pauseSeconds: Readonly<Record<GcKind, number>>; readonly allocatedBytes: number } {
    this.fold();
    const count = {} as Record<GcKind, number>;
    const pauseSeconds = {} as Record<GcKind, number>;
    GC_KINDS.forEach((k, i) => {
      count[k] = this.count[i]!;
      pauseSeconds[k] = this.pause[i]!;
    });
    return { count, pauseSeconds, allocatedBytes: this.allocated };
  }

  collectors(): CustomMetric[] {
    const thread = this.thread;
    const byKind = (values: Float64Array) => GC_KINDS.map((kind, i) => ({ labels: { thread, kind }, value: values[i]! }));
    return [
      counter('pitcache_gc_total', 'Garbage collections of a serving thread by kind (scavenge, mark_compact, incremental, weak_callbacks).', () => {
        this.fold();
        return byKind(this.count);
      }),
      counter('pitcache_gc_pause_seconds_total', 'Time a serving thread was paused by garbage collection, by kind.', () => byKind(this.pause)),
      counter('pitcache_heap_allocated_bytes_total', "Bytes allocated on a serving thread's V8 heap.", () => {
        this.fold();
        return [{ labels: { thread }, value: this.allocated }];
      }),
      gauge(
        'pitcache_heap_external_bytes',
        'Memory of a serving thread outside its V8 heap (ArrayBuffers and the like); its growth starts full collections.',
        () => [{ labels: { thread }, value: getHeapStatistics().external_memory }],
      ),
    ];
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.observer.disconnect();
    this.profiler.stop();
  }

  private observe(entries: PerformanceEntry[]): void {
    for (const e of entries) {
      const i = KIND_INDEX.get((e as PerformanceEntry & { readonly detail?: { readonly kind?: number } }).detail?.kind ?? -1);
      if (i === undefined) continue;
      this.count[i]! += 1;
      this.pause[i]! += e.duration / 1000;
    }
    this.seen += entries.length;
    if (this.seen >= FOLD_EVERY) this.fold();
  }

  /** Adds up what the profiler recorded since the window began, then starts a new window. */
  private fold(): void {
    if (this.closed) return;
    const usedNow = getHeapStatistics().used_heap_size;
    const data = this.profiler.stop() as { statistics: ProfiledGc[] } | undefined;
    let last = this.lastUsed;
    for (const s of data?.statistics ?? []) {
      this.allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - last);
      last = s.afterGC.heapStatistics.usedHeapSize;
    }
    this.allocated += Math.max(0, usedNow - last);
    this.seen = 0;
    this.startWindow();
  }

  private startWindow(): void {
    this.profiler.start();
    // After start: what reading the last window allocated is not counted as the thread's.
    this.lastUsed = getHeapStatistics().used_heap_size;
  }
}
