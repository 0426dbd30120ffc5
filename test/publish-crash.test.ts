/**
 * Crash safety of `pitcache publish` with real processes (docs/snapshots.md#publishing):
 * the CLI runs as its own process and is killed with SIGKILL at each step of a publish,
 * reached deterministically (a slow folder: test/support/halt-fs.ts stops the process at a
 * named file operation; a slow S3: test/support/upload-halt-proxy.ts stops its upload at a
 * named PUT). After each kill:
 * - every manifest at the source (manifest.json and history/) names objects that are there
 *   whole, with the sha256 and rows it says;
 * - a real server refreshing from the source keeps serving the previous generation;
 * - the next publish (other rows: another recomputation) succeeds and is served.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishCommand } from '../src/cli/publish-command.js';
import { MemoryOutput } from '../src/publish/output.js';
import { LocalSource } from '../src/source/local-source.js';
import type { PrunableSource } from '../src/source/snapshot-source.js';
import { S3Source } from '../src/source/s3-source.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { countArrowRows, writeGeneration } from '../src/snapshot/write-generation.js';
import { HALTED } from './support/halt-fs.js';
import { expectedValues, gridSpec, gridValues, refreshReport, serve, startS3World, type S3World, type Served } from './support/s3-harness.js';
import { testS3Client } from './support/s3rver.js';
import { UploadHaltProxy } from './support/upload-halt-proxy.js';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const HALT_FS = fileURLToPath(new URL('./support/halt-fs.ts', import.meta.url));
const DATASET = 'pemi/grid_stress';
/** dates per generation: 4 zones x 60 dates, about 9 KB of Arrow; --part-bytes 4KiB cuts it into parts */
const DATES = 60;
const PART_BYTES = '4KiB';
const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

interface Publisher {
  /** resolves once the process stopped at its halt point; rejects when it ended first */
  readonly halted: Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(): void;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-publish-crash-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Attempt `k`'s input: generation k's rows of the grid (values k*1000 + i), as an Arrow file. */
async function inputOf(k: number): Promise<string> {
  const path = join(dir, `input-${k}.arrow`);
  await writeFile(path, buildArrowSnapshot(gridSpec(k, DATES)));
  return path;
}

/** `pitcache publish` as its own process, stopped at its halt point: `haltFs` (halt-fs.ts) or `haltedBy` (a slow S3). */
function startPublisher(args: readonly string[], env: NodeJS.ProcessEnv, haltFs: object | null, haltedBy: Promise<string> | null): Publisher {
  const preload = haltFs === null ? [] : ['--import', HALT_FS];
  const child = spawn(process.execPath, ['--import', 'tsx', ...preload, MAIN, 'publish', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, PITCACHE_TEST_HALT_FS: haltFs === null ? '' : JSON.stringify(haltFs) },
  });
  let stdout = '';
  let stderr = '';
  let onLine: ((line: string) => void) | null = null;
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
    const line = stderr.split('\n').find((l) => l.startsWith(HALTED));
    if (line !== undefined) onLine?.(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const ended = exited.then((e): never => {
    throw new Error(`the publisher ended (${e.code ?? e.signal}) before its halt point: ${e.stdout} ${e.stderr}`);
  });
  const halted = Promise.race([haltedBy ?? new Promise<string>((resolve) => (onLine = resolve)), ended]);
  return { halted, exited, kill: () => child.kill('SIGKILL') };
}

/** Every manifest at the source names objects that are there whole: sha256 and rows as it says. */
async function checkManifests(source: PrunableSource): Promise<string[]> {
  const folder = `${DATASET}/`;
  const manifests = (await source.listObjects(folder)).map((o) => o.path).filter((p) => p.endsWith('/manifest.json') || /\/history\/\d+\.json$/.test(p));
  const seen: string[] = [];
  for (const path of manifests) {
    const m = parseManifest(await source.readObject(path));
    for (const part of partsOf(m)) {
      const bytes = await source.readObject(folder + part.object);
      expect(createHash('sha256').update(bytes).digest('hex'), `${path} names ${part.object}`).toBe(part.sha256);
      expect(countArrowRows(bytes), `${path}: rows of ${part.object}`).toBe(part.rows);
    }
    seen.push(`${path.slice(folder.length)} -> ${partsOf(m).length} object(s)`);
  }
  expect(manifests).toContain(`${folder}manifest.json`);
  return seen;
}

interface Point {
  readonly name: string;
  /** the folder's halt (halt-fs.ts) */
  readonly fs: { op: 'writeFile' | 'rename'; path: string; half?: boolean };
  /** the S3 halt (upload-halt-proxy.ts); null: no such point on S3 */
  readonly s3: { path: RegExp; half: boolean } | null;
  readonly parts?: boolean;
}

const POINTS: readonly Point[] = [
  {
    name: 'while writing the object (half of its bytes written)',
    fs: { op: 'writeFile', path: '/snapshots/\\d{8}\\.arrow\\.tmp-', half: true },
    s3: { path: /\/snapshots\/\d{8}\.arrow$/, half: true },
  },
  {
    name: 'while writing part 2 of a generation of parts (part 1 whole)',
    fs: { op: 'writeFile', path: '/snapshots/\\d{8}/00001\\.arrow\\.tmp-', half: true },
    s3: { path: /\/snapshots\/\d{8}\/00001\.arrow$/, half: true },
    parts: true,
  },
  {
    name: 'between the object and the history manifest',
    fs: { op: 'writeFile', path: '/history/\\d{8}\\.json\\.tmp-' },
    s3: { path: /\/history\/\d{8}\.json$/, half: false },
  },
  {
    name: 'between the history manifest and manifest.json',
    fs: { op: 'writeFile', path: '/manifest\\.json\\.tmp-' },
    s3: { path: /\/manifest\.json$/, half: false },
  },
  {
    name: "holding manifest.json's lock, its new bytes written aside, before the rename",
    fs: { op: 'rename', path: '/manifest\\.json$' },
    s3: null,
  },
];

interface Target {
  readonly location: string;
  /** the source as the checks read it (straight to the store) */
  readonly source: PrunableSource;
  readonly server: Served;
  /** publish arguments after --source */
  readonly args: readonly string[];
  /** the killed publisher's environment */
  readonly env: NodeJS.ProcessEnv;
  /** arms an S3 halt (null for the folder) */
  readonly armS3: ((at: { path: RegExp; half: boolean }) => Promise<string>) | null;
}

/**
 * For each point: kill a publish there, check the source and the server, publish again.
 * Attempt numbers give each input its own rows (k*1000 + i), so the next publish after a
 * kill is always other bytes than the killed one (a new recomputation, not a retry).
 */
async function crashEveryPoint(t: Target): Promise<string[]> {
  const report: string[] = [];
  let live = 1;
  let liveValues = expectedValues(1, DATES);
  let attempt = 1;
  expect(await gridValues(t.server)).toEqual(liveValues);
  for (const point of POINTS) {
    if (t.armS3 !== null && point.s3 === null) continue;
    const parts = point.parts === true ? ['--part-bytes', PART_BYTES] : [];
    const base = ['--source', t.location, '--product', 'pemi', '--dataset', 'grid_stress', '--replace', ...parts, ...t.args];

    const killedInput = await inputOf(++attempt);
    const haltedBy = t.armS3 === null ? null : t.armS3(point.s3!);
    const p = startPublisher([...base, '--input', killedInput], t.env, t.armS3 === null ? point.fs : null, haltedBy);
    const where = await p.halted;
    p.kill();
    const end = await p.exited;
    expect(end.signal, `${point.name}: ${end.stderr}`).toBe('SIGKILL');

    const after = await checkManifests(t.source);
    const stay = await refreshReport(t.server);
    expect(stay, point.name).toMatchObject({ outcome: 'unchanged', generation_after: live });
    expect(await gridValues(t.server), point.name).toEqual(liveValues);

    // The next publish (in this process: what is tested here is the source it finds).
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    const code = await publishCommand([...base, '--input', await inputOf(++attempt)], {}, io);
    expect(code, `${point.name}: the next publish: ${io.stderr.text()}`).toBe(0);
    expect(io.stdout.text()).toContain(`published ${DATASET} generation ${live + 1}`);
    const nextManifests = await checkManifests(t.source);
    expect(await refreshReport(t.server), point.name).toMatchObject({ outcome: 'loaded', generation_after: live + 1 });
    live++;
    liveValues = expectedValues(attempt, DATES);
    expect(await gridValues(t.server), point.name).toEqual(liveValues);
    if (point.parts === true) {
      const m = parseManifest(await t.source.readObject(`${DATASET}/manifest.json`));
      expect(partsOf(m).length, 'the parts point publishes parts').toBeGreaterThan(2);
    }
    report.push(
      `${point.name}: stopped at ${where.replace(HALTED, '').trim()}; manifests after the kill ${after.length}, after the next publish ${nextManifests.length}`,
    );
  }
  return report;
}

describe('pitcache publish killed with SIGKILL at each step', () => {
  it('on a folder source: no manifest names a missing or partial object, the server keeps the previous generation, the next publish succeeds', async () => {
    const root = join(dir, 'folder');
    const source = new LocalSource(root);
    await writeGeneration(source, { productId: 'pemi', dataset: 'grid_stress' }, buildArrowSnapshot(gridSpec(1, DATES)), 1, '2026-11-01T00:00:00Z');
    const server = await serve(source);
    try {
      const report = await crashEveryPoint({ location: root, source, server, args: [], env: {}, armS3: null });
      expect(report).toHaveLength(POINTS.length);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('on S3 (s3rver): the same at every step of the uploads', async () => {
    for (const [k, v] of Object.entries(S3_ENV)) vi.stubEnv(k, v);
    const world: S3World = await startS3World('crash');
    const proxy = await UploadHaltProxy.start(Number(new URL(world.s3.endpoint).port));
    const direct = new S3Source(world.location, { client: testS3Client(world.s3.endpoint) });
    try {
      await writeGeneration(world.publisher, { productId: 'pemi', dataset: 'grid_stress' }, buildArrowSnapshot(gridSpec(1, DATES)), 1, '2026-11-01T00:00:00Z');
      const server = await serve(world.openSource());
      try {
        const report = await crashEveryPoint({
          location: world.location,
          source: direct,
          server,
          args: ['--s3-endpoint', proxy.endpoint, '--s3-force-path-style', '--s3-emulate-conditions'],
          env: S3_ENV,
          armS3: (at) => proxy.arm(at),
        });
        expect(report).toHaveLength(POINTS.filter((p) => p.s3 !== null).length);
      } finally {
        await server.close();
      }
    } finally {
      await proxy.close();
      await world.close();
      vi.unstubAllEnvs();
    }
  }, 180_000);
});
