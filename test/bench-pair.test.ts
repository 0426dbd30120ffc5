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
  it('weighs the rounds by their requests and takes the median p99 ratio', () => {
    const s = (requests: number, seconds: number, p99Ms: number) => ({ requests, seconds, p99Ms, errors: 0 });
    const got = pairedRatios([
      { a: s(1_000, 1, 2), b: s(3_000, 1, 1) },
      { a: s(4_000, 1, 2), b: s(2_000, 1, 4) },
      { a: s(5_000, 2, 2), b: s(5_000, 2, 3) },
    ]);
    expect(got.ratio).toBeCloseTo(10_000 / 10_000, 12);
    expect(got.p99Ratio).toBeCloseTo(1.5, 12);
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
          expect(side.errors).toBe(0);
        }
      }
      expect(r!.ratio).toBeGreaterThan(0);
      expect(Number.isFinite(r!.p99Ratio)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
