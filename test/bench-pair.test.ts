/**
 * `npm run bench:pair` (bench/pair/) at a tiny size: two servers of this build from the
 * sources, one small data set, one workload, two one-second rounds. The figures mean
 * nothing here; that the rounds run, alternate, count requests on both sides and give
 * their ratios does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keysFile } from '../bench/data/ensure-data.js';
import { pairedRatios, runPair } from '../bench/pair/pair.js';
import { TWO_ZONES, writeGridStress } from './support/serve-process.js';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

describe('bench:pair', () => {
  it('weighs the rounds by their requests, takes the median p99 ratio and CPU per request summed over the rounds', () => {
    const s = (requests: number, seconds: number, p99Ms: number, cpuSeconds: number) => ({ requests, seconds, p99Ms, errors: 0, cpuSeconds });
    const got = pairedRatios([
      { a: s(1_000, 1, 2, 0.5), b: s(3_000, 1, 1, 0.9) },
      { a: s(4_000, 1, 2, 1), b: s(2_000, 1, 4, 0.8) },
      { a: s(5_000, 2, 2, 2), b: s(5_000, 2, 3, 1.8) },
    ]);
    expect(got.ratio).toBeCloseTo(10_000 / 10_000, 12);
    expect(got.p99Ratio).toBeCloseTo(1.5, 12);
    // A: 3.5 CPU-s over 10,000 requests = 350 µs each; B the same: a ratio of 1
    expect(got.cpuUsPerRequest.a).toBeCloseTo(350, 9);
    expect(got.cpuUsPerRequest.b).toBeCloseTo(350, 9);
    expect(got.cpuRatio).toBeCloseTo(1, 12);
    const cheaper = pairedRatios([{ a: s(1_000, 1, 2, 0.5), b: s(2_000, 1, 2, 0.5) }]);
    expect(cheaper.cpuRatio).toBeCloseTo(0.5, 12);
    expect(cheaper.cpuUsPerRequest).toEqual({ a: 500, b: 250 });
  });

  it('runs two builds in paired rounds over HTTP at a tiny size', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pitcache-bench-pair-'));
    try {
      await writeGridStress(dir, TWO_ZONES);
      await writeFile(join(dir, 'src', 'keys.json'), JSON.stringify(keysFile()));
      const paths = join(dir, 'grid.paths');
      await writeFile(paths, ['/pemi/grid_stress?bidding_zone=DE&latest=false', '/pemi/grid_stress?bidding_zone=FR&as_of=2026-03-05'].join('\n') + '\n');
      const results = await runPair({
        cliA: MAIN,
        cliB: MAIN,
        dataDir: join(dir, 'src'),
        paths: { grid: paths },
        rounds: 2,
        durationSec: 1,
        warmupSec: 1,
        connections: 2,
      });
      expect(results).toHaveLength(1);
      const [r] = results;
      expect(r!.workload).toBe('grid');
      expect(r!.rounds).toHaveLength(2);
      for (const round of r!.rounds) {
        for (const side of [round.a, round.b]) {
          expect(side.requests).toBeGreaterThan(0);
          expect(side.errors, JSON.stringify(side.errorKinds)).toBe(0);
          // the server's own CPU during its slice, read from /proc
          expect(side.cpuSeconds).toBeGreaterThan(0);
        }
      }
      expect(r!.ratio).toBeGreaterThan(0);
      expect(Number.isFinite(r!.p99Ratio)).toBe(true);
      expect(r!.cpuRatio).toBeGreaterThan(0);
      expect(Number.isFinite(r!.cpuRatio)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
