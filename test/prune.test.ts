/**
 * `pitcache prune` (contract 12 for ops): old generations' history manifests and objects go
 * by count and/or age, on a local folder (through the command) and on S3 (s3rver); the live
 * generation, and a generation above it (a publish under way), never go. A server on the
 * pruned source answers generation=N for what is left and 400 generation_unavailable for
 * what is gone.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { S3Source } from '../src/source/s3-source.js';
import type { PrunableSource } from '../src/source/snapshot-source.js';
import { DatasetSelection } from '../src/catalog/dataset-selection.js';
import { pruneCommand } from '../src/cli/prune-command.js';
import { parsePruneConfig } from '../src/config/prune-config.js';
import { MemoryOutput } from '../src/publish/output.js';
import { prune } from '../src/publish/prune.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { historyPath, objectPath } from '../src/snapshot/manifest.js';
import { generationObjectName, writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { expectError } from './support/fixtures.js';
import { GRID, gridSpec, serve } from './support/s3-harness.js';
import { startS3rver, type TestS3 } from './support/s3rver.js';

/** Generation g created on 2026-11-0g; the clock reads 2026-11-10. */
const NOW = Date.UTC(2026, 10, 10);
const created = (g: number): string => `2026-11-${String(g).padStart(2, '0')}T00:00:00Z`;

async function publishFive(source: PrunableSource): Promise<void> {
  for (let g = 1; g <= 5; g++) await writeGeneration(source, GRID, buildArrowSnapshot(gridSpec(g)), g, created(g));
}

/** The generations whose history manifest and object are both still there. */
async function generationsLeft(source: PrunableSource): Promise<number[]> {
  const paths = new Set((await source.listObjects('pemi/grid_stress/')).map((o) => o.path));
  const out: number[] = [];
  for (let g = 1; g <= 6; g++) {
    const h = paths.has(historyPath('pemi', 'grid_stress', g));
    const o = paths.has(objectPath('pemi', 'grid_stress', generationObjectName(g)));
    expect(h, `generation ${g}: history and object go together`).toBe(o);
    if (h) out.push(g);
  }
  return out;
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await pruneCommand(argv, {}, io, new ManualClock(NOW));
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

describe('pitcache prune on a local folder', () => {
  let dir: string;
  let source: LocalSource;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-prune-'));
    source = new LocalSource(dir);
    await publishFive(source);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--dry-run lists what --keep 2 would remove and removes nothing', async () => {
    const r = await cli(['--source', dir, '--keep', '2', '--dry-run']);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('would remove pemi/'))).toEqual(
      [1, 2, 3].flatMap((g) => [
        `would remove ${historyPath('pemi', 'grid_stress', g)}`,
        `would remove ${objectPath('pemi', 'grid_stress', generationObjectName(g))}`,
      ]),
    );
    expect(r.out).toMatch(/pemi\/grid_stress: would remove 3 generations \(1, 2, 3\), 6 objects, \d+ bytes; live generation 5 kept\n$/);
    expect(await generationsLeft(source)).toEqual([1, 2, 3, 4, 5]);
  });

  it('--keep 2 keeps the live generation and the one before it; a server answers generation=4 and refuses generation=2', async () => {
    const r = await cli(['--source', dir, '--keep', '2']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('removed pemi/grid_stress/history/00000001.json\n');
    expect(await generationsLeft(source)).toEqual([4, 5]);
    const s = await serve(source, { clock: new ManualClock(NOW) });
    try {
      const four = await s.get('/pemi/grid_stress?latest=false&limit=100&generation=4');
      expect(four.status, four.text).toBe(200);
      expect(four.body.metadata.generation).toBe(4);
      expectError(await s.get('/pemi/grid_stress?generation=2'), 400, 'generation_unavailable', 'generation');
    } finally {
      await s.close();
    }
  });

  it('--older-than removes by the history manifest’s created_at; with --keep, only what both remove', async () => {
    expect((await cli(['--source', dir, '--keep', '4', '--older-than', '7d'])).code).toBe(0);
    // keep 4 spares 2..5; older than 7 days (before 2026-11-03) are 1 and 2: only 1 goes.
    expect(await generationsLeft(source)).toEqual([2, 3, 4, 5]);
    expect((await cli(['--source', dir, '--older-than', '7d'])).code).toBe(0);
    expect(await generationsLeft(source)).toEqual([3, 4, 5]);
  });

  it('never removes the live generation nor a generation above it (a publish under way)', async () => {
    // Generation 6 half-published: object and history written, manifest.json still at 5.
    await source.writeObject(objectPath('pemi', 'grid_stress', generationObjectName(6)), buildArrowSnapshot(gridSpec(6)));
    await source.writeObject(historyPath('pemi', 'grid_stress', 6), await source.readObject(historyPath('pemi', 'grid_stress', 5)));
    const r = await cli(['--source', dir, '--keep', '1', '--older-than', '1ms']);
    expect(r.code, r.err).toBe(0);
    expect(await generationsLeft(source)).toEqual([5, 6]);
    expect(await readdir(join(dir, 'pemi/grid_stress'))).toContain('manifest.json');
  });

  it("removes a pruned generation's objects under their content's own names too (left by a killed or losing publish)", async () => {
    const own = ['snapshots/00000002-0123456789abcdef.arrow', 'snapshots/00000003-fedcba9876543210/00000.arrow'];
    for (const o of own) await source.writeObject(objectPath('pemi', 'grid_stress', o), buildArrowSnapshot(gridSpec(2)));
    expect((await cli(['--source', dir, '--keep', '2'])).code).toBe(0);
    expect(await generationsLeft(source)).toEqual([4, 5]);
    const left = (await source.listObjects('pemi/grid_stress/snapshots/')).map((o) => o.path);
    for (const o of own) expect(left).not.toContain(objectPath('pemi', 'grid_stress', o));
  });

  it('needs --keep or --older-than; refuses bad values with one line', async () => {
    expect(await cli(['--source', dir])).toMatchObject({ code: 2, err: 'pitcache prune: --keep / PITCACHE_KEEP: is required unless --older-than is given\n' });
    expect((await cli(['--source', dir, '--keep', '0'])).err).toMatch(/^pitcache prune: --keep: must be an integer from 1 to 1000000/);
    expect((await cli(['--source', dir, '--older-than', 'soon'])).err).toMatch(/^pitcache prune: --older-than: "soon" is not a duration/);
    // A pattern that names no dataset yet is no error (a catalog at the source may add one: contract 13); it prunes nothing.
    expect((await cli(['--source', dir, '--keep', '1', '--datasets', 'nope/*'])).code).toBe(0);
    expect((await cli(['--source', dir, '--keep', '1', '--datasets', 'bad pattern!'])).code).toBe(2);
    expect(parsePruneConfig(['--source', dir], { PITCACHE_KEEP: '3' })).toMatchObject({ ok: true, config: { keep: 3, olderThanMs: null, dryRun: false } });
    expect(await generationsLeft(source)).toEqual([1, 2, 3, 4, 5]);
  });

  it('--datasets limits what is pruned', async () => {
    await cli(['--source', dir, '--keep', '1', '--datasets', 'gbsi_eu/*']);
    expect(await generationsLeft(source)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('prune on S3 (s3rver)', () => {
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startS3rver();
  });
  afterAll(async () => {
    await s3.close();
  });

  it('removes by --keep and never the live generation', async () => {
    const source = new S3Source(`s3://${s3.bucket}/prune`, { client: s3.client, conditionalWrites: 'unsupported' });
    await publishFive(source);
    const dry = await prune({ source, datasets: DatasetSelection.all(), keep: 3, olderThanMs: null, nowMs: NOW, dryRun: true });
    expect(dry.map((d) => [d.dataset, d.generations])).toEqual([['pemi/grid_stress', [1, 2]]]);
    expect(await generationsLeft(source)).toEqual([1, 2, 3, 4, 5]);
    await prune({ source, datasets: DatasetSelection.all(), keep: 3, olderThanMs: null, nowMs: NOW, dryRun: false });
    expect(await generationsLeft(source)).toEqual([3, 4, 5]);
    await prune({ source, datasets: DatasetSelection.all(), keep: 1, olderThanMs: 1, nowMs: NOW, dryRun: false });
    expect(await generationsLeft(source)).toEqual([5]);
    expect((await source.listObjects('pemi/grid_stress/')).map((o) => o.path)).toContain('pemi/grid_stress/manifest.json');
  });
});
