/**
 * The body size the ceiling (issue 11.1) must serve for a workload: the mean answer size of
 * pitcache's own answers to that workload's paths, sampled once before the timed run, so the
 * ceiling moves exactly as many bytes per request as pitcache does.
 */
export async function meanAnswerBytes(baseUrl: string, paths: readonly string[], headers: Record<string, string>, sample = 200): Promise<number> {
  if (paths.length === 0) throw new Error('ceiling: no paths to sample');
  const n = Math.min(sample, paths.length);
  // Evenly spread over the workload, not its head: page walks grow and shrink along the list.
  const step = paths.length / n;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const r = await fetch(baseUrl + paths[Math.floor(i * step)]!, { headers: { 'accept-encoding': 'identity', ...headers } });
    if (r.status !== 200) throw new Error(`ceiling: ${paths[Math.floor(i * step)]!} answered ${r.status}`);
    total += (await r.arrayBuffer()).byteLength;
  }
  return Math.round(total / n);
}

/** The two figures every pitcache workload row shows against its ceiling. */
export function shareOfCeiling(
  pitcache: { requests: number; seconds: number; p99Ms: number },
  ceiling: { requests: number; seconds: number; p99Ms: number },
): { reqShare: number; p99Ratio: number } {
  return {
    reqShare: pitcache.requests / pitcache.seconds / (ceiling.requests / ceiling.seconds),
    p99Ratio: pitcache.p99Ms / ceiling.p99Ms,
  };
}
