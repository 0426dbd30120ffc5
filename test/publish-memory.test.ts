/**
 * `pitcache publish` in bounded memory (contract 14): "its peak memory stays within the
 * current generation's columns + the new generation's columns + one batch per input being
 * read". Each publish runs as a child process of its own, and its peak resident memory
 * (VmHWM) must stay under a cap made of exactly those terms, columns counted as
 * their Arrow bytes (the bytes of the generations' objects, as the README sizes memory), plus
 * stated constants for the runtime:
 * - the same process printing `--help` (node, the code, the JS heap it starts with);
 * - its JS heap, capped at HEAP_MIB (--max-old-space-size);
 * - the part being written, held twice (its columns, then its bytes): 2 x --part-bytes;
 * - buffers dropped and not yet freed, at most DROPPED_BYTES (src/publish/collect-garbage.ts).
 * The input (2,000,000 rows, 121 MiB of Arrow) is large enough that what a publish held beside
 * its columns before (the sort's scratch over every row, the columns joined a second time, the
 * part kept between parts) put it over this cap on every input of a first publish
 * (bench/RESULTS.md, "Publish in bounded memory"). The three inputs publish the same
 * generation, object for object. Some minutes: it runs when PITCACHE_MEMORY_TEST=1, as
 * `npm run test:memory` (a stage of .ci/run), not in `npm test`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROPPED_BYTES } from '../src/publish/collect-garbage.js';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { writeInputFiles, type InputFiles } from '../bench/publish/input-files.js';

const MEASURED = fileURLToPath(new URL('./support/measured-command.ts', import.meta.url));
const PUBLISH = fileURLToPath(new URL('../src/cli/publish-command.ts', import.meta.url));
const MiB = 2 ** 20;
const HEAP_MIB = 48;
const PART_BYTES = 4 * MiB;
/** rows of one batch of each input: the Arrow file's record batches and the Parquet file's row groups (input-files.ts); CSV batches are smaller */
const BATCH_ROWS = 65_536;

interface Measured {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  readonly maxRssBytes: number;
}

function measured(args: readonly string[]): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MIB}`, '--import', 'tsx', MEASURED, PUBLISH, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = /MEASURED (\{.*\})/.exec(err);
      if (line === null) return reject(new Error(`no measurement (exit ${code}): ${err.slice(-2000)}`));
      // VmHWM, not getrusage's maxRSS: Linux carries maxRSS over exec from the parent forked
      // (the test runner, some hundreds of MiB), VmHWM is the new process's own.
      const m = JSON.parse(line[1]!) as { code: number; vmHwmKiB: number };
      resolve({ code: m.code, out, err: err.slice(0, line.index).trim(), maxRssBytes: m.vmHwmKiB * 1024 });
    });
  });
}

/** The generation at `source`: its objects' sha256 and Arrow bytes. */
async function generation(source: string): Promise<{ shas: string[]; bytes: number }> {
  const folder = join(source, 'pemi', 'grid_stress');
  const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
  const shas: string[] = [];
  let bytes = 0;
  for (const p of partsOf(manifest)) {
    const data = await readFile(join(folder, p.object));
    shas.push(createHash('sha256').update(data).digest('hex'));
    bytes += data.byteLength;
  }
  return { shas, bytes };
}

describe.runIf(process.env['PITCACHE_MEMORY_TEST'] === '1')('publish in bounded memory: peak RSS of a publish within contract 14 bound', () => {
  let tmp: string;
  let files: InputFiles;
  let runtime: number;
  let batchBytes: number;

  /** contract 14's bound, columns as Arrow bytes, and the runtime's constants (the file's comment) */
  const cap = (current: number, next: number, inputs: number): number =>
    runtime + HEAP_MIB * MiB + current + next + inputs * batchBytes + 2 * PART_BYTES + DROPPED_BYTES;
  const over = (r: Measured, bound: number): string =>
    `peak ${Math.round(r.maxRssBytes / MiB)} MiB, cap ${Math.round(bound / MiB)} MiB (runtime ${Math.round(runtime / MiB)} MiB)`;

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'pitcache-publish-memory-'));
    files = await writeInputFiles(tmp, 2000, 1000, 36);
    batchBytes = Math.ceil(((await stat(files.arrow)).size / files.rows) * BATCH_ROWS);
    const help = await measured(['--help']);
    expect(help.code).toBe(0);
    runtime = help.maxRssBytes;
  }, 300_000);
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const publishArgs = (source: string, input: string, ...extra: string[]): string[] => [
    '--source',
    source,
    '--product',
    'pemi',
    '--dataset',
    'grid_stress',
    '--input',
    input,
    '--part-bytes',
    '4MiB',
    ...extra,
  ];

  const firstPublish = async (format: 'csv' | 'arrow' | 'parquet'): Promise<string[]> => {
    const source = join(tmp, `out-${format}`);
    const r = await measured(publishArgs(source, files[format], '--series-key', 'bidding_zone', '--replace'));
    expect(r.err, format).toBe('');
    expect(r.code, format).toBe(0);
    expect(r.out).toContain(`generation 1: ${files.rows} rows`);
    const made = await generation(source);
    const bound = cap(0, made.bytes, 1);
    expect(r.maxRssBytes, `${format}: ${over(r, bound)}`).toBeLessThan(bound);
    return made.shas;
  };

  it('an Arrow file: the new generation and one batch', async () => {
    expect((await firstPublish('arrow')).length).toBeGreaterThan(2);
  }, 300_000);

  it('a Parquet file: the new generation and one row group, the same objects as from Arrow', async () => {
    expect(await firstPublish('parquet')).toEqual((await generation(join(tmp, 'out-arrow'))).shas);
  }, 300_000);

  it('a CSV file: the new generation and one batch, the same objects as from Arrow', async () => {
    expect(await firstPublish('csv')).toEqual((await generation(join(tmp, 'out-arrow'))).shas);
  }, 600_000);

  it('a recomputation on top of the stored generation: the current generation, the next one and one batch', async () => {
    const source = join(tmp, 'out-csv');
    const current = await generation(source);
    const r = await measured(publishArgs(source, files.arrow));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/no changes: pemi\/grid_stress stays at generation 1/);
    // Nothing changes, so the next generation would be the current one again.
    const bound = cap(current.bytes, current.bytes, 1);
    expect(r.maxRssBytes, over(r, bound)).toBeLessThan(bound);
  }, 300_000);
});
