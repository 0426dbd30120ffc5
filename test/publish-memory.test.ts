/**
 * `pitcache publish` in bounded memory (contract 14): an input of some tens of MB (300,000
 * rows; 39 MB of CSV, 19 MB of Arrow, 8 MB of Parquet) is published by a child process
 * whose JS heap is capped at 48 MiB: the whole-input publish this replaced ran out of heap
 * on each of the three (bench/RESULTS.md, "Publish in bounded memory"). The three publish
 * the same generation, object for object; a recomputation on top of it reads the stored
 * generation and the input under the same cap; and the resident memory each adds to the
 * process (its peak RSS over that of the same process printing --help) stays within the
 * generation's columns plus the heap and a batch.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { writeInputFiles, type InputFiles } from '../bench/publish/input-files.js';

const MEASURED = fileURLToPath(new URL('./support/measured-command.ts', import.meta.url));
const PUBLISH = fileURLToPath(new URL('../src/cli/publish-command.ts', import.meta.url));
const HEAP_MIB = 48;
const MiB = 2 ** 20;

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
      const m = JSON.parse(line[1]!) as { code: number; maxRssKiB: number };
      resolve({ code: m.code, out, err: err.slice(0, line.index).trim(), maxRssBytes: m.maxRssKiB * 1024 });
    });
  });
}

async function objects(source: string): Promise<string[]> {
  const folder = join(source, 'pemi', 'grid_stress');
  const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
  const out: string[] = [];
  for (const p of partsOf(manifest))
    out.push(
      createHash('sha256')
        .update(await readFile(join(folder, p.object)))
        .digest('hex'),
    );
  return out;
}

describe('publish in bounded memory (a child process, JS heap capped at 48 MiB)', () => {
  let tmp: string;
  let files: InputFiles;
  let baseline: number;
  let arrowBytes: number;

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'pitcache-publish-memory-'));
    files = await writeInputFiles(tmp, 2000, 150, 36);
    arrowBytes = (await stat(files.arrow)).size;
    const help = await measured(['--help']);
    expect(help.code).toBe(0);
    baseline = help.maxRssBytes;
  }, 120_000);
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

  it('CSV, Arrow and Parquet inputs publish the same generation, each within its columns, the heap and a batch', async () => {
    const got: string[][] = [];
    for (const input of [files.csv, files.arrow, files.parquet]) {
      const source = join(tmp, `out-${input.split('.').at(-1)!}`);
      const r = await measured(publishArgs(source, input, '--series-key', 'bidding_zone', '--replace'));
      expect(r.err, input).toBe('');
      expect(r.code, input).toBe(0);
      expect(r.out).toContain(`generation 1: ${files.rows} rows`);
      // The new generation's columns (about its Arrow bytes), the capped heap, one batch and a part.
      const added = r.maxRssBytes - baseline;
      expect(added, `${input}: +${Math.round(added / MiB)} MiB over the process alone`).toBeLessThan(arrowBytes + HEAP_MIB * MiB + 48 * MiB);
      got.push(await objects(source));
    }
    expect(got[0]!.length).toBeGreaterThan(2);
    expect(got[1]).toEqual(got[0]);
    expect(got[2]).toEqual(got[0]);
  }, 300_000);

  it('a recomputation on top of the stored generation reads it and the input under the same cap', async () => {
    const source = join(tmp, 'out-csv');
    const r = await measured(publishArgs(source, files.arrow));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/no changes: pemi\/grid_stress stays at generation 1/);
    const added = r.maxRssBytes - baseline;
    expect(added, `+${Math.round(added / MiB)} MiB over the process alone`).toBeLessThan(2 * arrowBytes + HEAP_MIB * MiB + 48 * MiB);
  }, 120_000);
});
