/**
 * Direct probes of one replica (bypassing the balancer) and the attribution of answers to
 * replicas through their access logs.
 */
import { get } from './api-client.js';
import type { Replica } from './replica.js';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `path` on `replica` until it answers `want` (status, or a 200 of that generation); resolves with the ms it took. */
export async function until(replica: Replica, path: string, key: string, want: { status: number } | { generation: number }, boundMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const a = await get(replica.url, path, key);
    if ('status' in want ? a.status === want.status : a.status === 200 && a.generation === want.generation) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`${replica.name}: ${path} still answers ${a.status} (generation ${a.generation}) after ${boundMs} ms`);
    await pause(20);
  }
}

/** Which replica logged each record id: replica name, or null when none did. */
export function answeredBy(replicas: readonly Replica[], recordId: string): string | null {
  const who = replicas.filter((r) => r.answered(recordId));
  if (who.length > 1) throw new Error(`record id ${recordId} is in the logs of ${who.map((r) => r.name).join(' and ')}`);
  return who[0]?.name ?? null;
}

/** Distinct replicas that answered the pages of one chain (unknown ids count as '?'). */
export function replicasOf(replicas: readonly Replica[], recordIds: readonly string[]): Set<string> {
  return new Set(recordIds.map((id) => answeredBy(replicas, id) ?? '?'));
}

/** Access-log lines are written in batches (at most a second apart): wait for the last batch. */
export const accessLogsFlushed = (): Promise<void> => pause(1500);
