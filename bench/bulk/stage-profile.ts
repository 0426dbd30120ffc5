/**
 * Where the resolve stage's CPU goes, from a V8 CPU profile (node:inspector) of the timed
 * requests: self time of every function, grouped by what it does in a bulk page. Only the
 * resolver's own files are grouped (the other stages are timed one by one around their
 * calls: bulk-stages.ts); what else the profile saw is left out.
 */
import { Session } from 'node:inspector/promises';

export const RESOLVE_PARTS = ['selection', 'merge', 'cursor', 'total', 'order build', 'resolver other'] as const;
export type ResolvePart = (typeof RESOLVE_PARTS)[number];

/**
 * Functions of query/ and store/ by part. `readOrdered` both reads the (date, series)
 * order and picks each key's row under T (PIT-4): it is selection/resolution, the order
 * being precomputed; `merge` is what still merges at request time (latest's date order,
 * the sweep and heap of a few series).
 */
const PART_OF: Readonly<Record<string, ResolvePart>> = {
  readOrdered: 'selection',
  skipHidden: 'selection',
  resolveKey: 'selection',
  latestPage: 'selection',
  selectSeries: 'selection',
  lastVisibleKey: 'selection',
  rightmostAtMost: 'selection',
  lowerBoundDate: 'selection',
  orderLatest: 'merge',
  sweep: 'merge',
  heapMerge: 'merge',
  decodeCursor: 'cursor',
  encodeCursor: 'cursor',
  orderedRange: 'cursor',
  dayPosition: 'cursor',
  positionAfter: 'cursor',
  keyOfRow: 'cursor',
  countOrdered: 'total',
  countVisible: 'total',
  countSeries: 'total',
  buildDateOrder: 'order build',
  buildLastVisible: 'order build',
};

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export class StageProfiler {
  private readonly session = new Session();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 100 });
    await this.session.post('Profiler.start');
  }

  /** Self µs per part of the resolver's files (query/, store/, key-merge) since start. */
  async stop(): Promise<Record<ResolvePart, number>> {
    const { profile } = (await this.session.post('Profiler.stop')) as unknown as { profile: Profile };
    this.session.disconnect();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const out = Object.fromEntries(RESOLVE_PARTS.map((p) => [p, 0])) as Record<ResolvePart, number>;
    for (let i = 0; i < profile.samples.length; i++) {
      const n = byId.get(profile.samples[i]!);
      if (n === undefined) continue;
      const { functionName, url } = n.callFrame;
      const part = PART_OF[functionName] ?? (/\/src\/(query|store)\//.test(url) ? 'resolver other' : null);
      if (part !== null) out[part] += profile.timeDeltas[i] ?? 0;
    }
    return out;
  }
}
