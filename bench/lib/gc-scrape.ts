/** The GC counters of a pitcache server (GET /metrics, summed over its serving threads), and their change over a run. */
import type { GcOverRun } from '../alternatives/types.js';

export interface GcCounters {
  readonly allocatedBytes: number;
  readonly scavenges: number;
  readonly markCompacts: number;
  readonly pauseSeconds: number;
  readonly markCompactPauseSeconds: number;
}

/** Sum of every sample of `name` whose labels contain `where` (e.g. `kind="mark_compact"`). */
function sum(text: string, name: string, where = ''): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') || !line.includes(where)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** The server's counters now, or null when it has none (an older build, or no admin key). */
export async function scrapeGc(baseUrl: string, adminKey: string): Promise<GcCounters | null> {
  const r = await fetch(`${baseUrl}/metrics`, { headers: { 'x-api-key': adminKey } });
  const text = await r.text();
  if (r.status !== 200 || !text.includes('pitcache_gc_total{')) return null;
  return {
    allocatedBytes: sum(text, 'pitcache_heap_allocated_bytes_total'),
    scavenges: sum(text, 'pitcache_gc_total', 'kind="scavenge"'),
    markCompacts: sum(text, 'pitcache_gc_total', 'kind="mark_compact"'),
    pauseSeconds: sum(text, 'pitcache_gc_pause_seconds_total'),
    markCompactPauseSeconds: sum(text, 'pitcache_gc_pause_seconds_total', 'kind="mark_compact"'),
  };
}

export function gcOver(before: GcCounters, after: GcCounters): GcOverRun {
  return {
    allocatedBytes: after.allocatedBytes - before.allocatedBytes,
    scavenges: after.scavenges - before.scavenges,
    markCompacts: after.markCompacts - before.markCompacts,
    pauseMs: (after.pauseSeconds - before.pauseSeconds) * 1000,
    markCompactPauseMs: (after.markCompactPauseSeconds - before.markCompactPauseSeconds) * 1000,
  };
}
