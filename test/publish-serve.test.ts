import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishCommand } from '../src/cli/publish-command.js';
import { MemoryOutput } from '../src/publish/output.js';
import { ManualClock } from '../src/time/clock.js';
import { startHarness, type Harness } from './support/harness.js';

/**
 * Snapshots written by `pitcache publish` (run in-process, as ops would run the bin) load
 * in the real server and answer as the states of spec section 3 say.
 */
const HEADER = 'date,str_effective_at,str_observed_at,str_ingested_at,model_version,basin,value';
const GLMI_1 = [
  HEADER,
  '2026-04-01,2026-04-02,2026-04-02T06:00:00Z,2026-04-02T07:00:00Z,1.0,atlantic,1.5',
  '2026-04-01,2026-04-02,2026-04-02T06:00:00Z,2026-04-02T07:00:00Z,1.0,pacific,7',
];
// The atlantic figure is restated on 04-05; pacific is recomputed identically.
const GLMI_2 = [
  HEADER,
  '2026-04-01,2026-04-02,2026-04-05T06:00:00Z,2026-04-05T07:00:00Z,1.0,atlantic,2.5',
  '2026-04-01,2026-04-02,2026-04-05T06:00:00Z,2026-04-05T07:00:00Z,1.0,pacific,7',
];
const EU_HEADER = 'date,str_effective_at,str_observed_at,str_ingested_at,model_version,country,stress';
const EU_1 = [EU_HEADER, '2026-04-01,2026-04-01T00:00:00Z,2026-04-01T06:00:00Z,2026-04-01T06:00:00Z,1.0,DE,0.5'];
const EU_2 = [EU_HEADER, '2026-04-01,2026-04-01T00:00:00Z,2026-04-03T06:00:00Z,2026-04-03T06:00:00Z,1.0,DE,0.9'];

describe('publish -> serve', () => {
  let h: Harness;
  let inputs: string;
  const printed: string[] = [];

  async function publishCsv(dir: string, product: string, dataset: string, lines: string[], extra: string[] = []): Promise<void> {
    const file = join(inputs, `${product}-${printed.length}.csv`);
    await writeFile(file, lines.join('\r\n') + '\r\n');
    await runPublish(dir, product, dataset, ['--input', file, ...extra]);
  }

  async function runPublish(dir: string, product: string, dataset: string, args: string[]): Promise<void> {
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    const code = await publishCommand(['--source', dir, '--product', product, '--dataset', dataset, ...args], {}, io, new ManualClock(Date.UTC(2026, 4, 1)));
    if (code !== 0) throw new Error(`publish failed (${code}): ${io.stderr.text()}`);
    printed.push(io.stdout.text().trim());
  }

  beforeAll(async () => {
    inputs = await mkdtemp(join(tmpdir(), 'pitcache-inputs-'));
    h = await startHarness({
      datasets: [],
      prepare: async (dir) => {
        await publishCsv(dir, 'glmi', 'marginality', GLMI_1, ['--series-key', 'basin']);
        await publishCsv(dir, 'glmi', 'marginality', GLMI_2);
        await publishCsv(dir, 'glmi', 'marginality', GLMI_2);
        await publishCsv(dir, 'gbsi_eu', 'system_stress', EU_1, ['--series-key', 'country']);
        await publishCsv(dir, 'gbsi_eu', 'system_stress', EU_2);
        // Roll back: the first generation's object, published again as it is.
        await runPublish(dir, 'gbsi_eu', 'system_stress', ['--replace', '--input', join(dir, 'gbsi_eu/system_stress/snapshots/00000001.arrow')]);
      },
    });
  });
  afterAll(async () => {
    await h.close();
    await rm(inputs, { recursive: true, force: true });
  });

  it('printed one summary line per publish', () => {
    expect(printed).toEqual([
      'published glmi/marginality generation 1: 2 rows, 2 versions added (2 new keys), 0 keys rewritten',
      'published glmi/marginality generation 2: 3 rows, 1 version added (0 new keys), 0 keys rewritten',
      'no changes: glmi/marginality stays at generation 2 (3 rows); nothing published',
      'published gbsi_eu/system_stress generation 1: 1 row, 1 version added (1 new key), 0 keys rewritten',
      'published gbsi_eu/system_stress generation 2: 2 rows, 1 version added (0 new keys), 0 keys rewritten',
      "published gbsi_eu/system_stress generation 3: 1 row, the input's rows as they are (replace; was generation 2)",
    ]);
  });

  it('serves the restated value now and the first value to an as_of before the restatement', async () => {
    const now = await h.get('/glmi/marginality');
    expect(now.status).toBe(200);
    expect(now.body.metadata.generation).toBe(2);
    expect(now.body.data.map((r: { basin: string; value: number }) => [r.basin, r.value])).toEqual([
      ['atlantic', 2.5],
      ['pacific', 7],
    ]);
    const before = await h.get('/glmi/marginality?as_of=2026-04-04&basin=atlantic');
    expect(before.body.data.map((r: { value: number; str_observed_at: string }) => [r.value, r.str_observed_at])).toEqual([
      [1.5, '2026-04-02T06:00:00.000000Z'],
    ]);
    const at = await h.get('/glmi/marginality?as_of=2026-04-05T06:00:00Z&basin=atlantic');
    expect(at.body.data.map((r: { value: number }) => r.value)).toEqual([2.5]);
  });

  it('serves the rolled-back generation with the old values', async () => {
    const now = await h.get('/gbsi_eu/system_stress?country=DE');
    expect(now.status).toBe(200);
    expect(now.body.metadata.generation).toBe(3);
    expect(now.body.data.map((r: { stress: number; str_observed_at: string }) => [r.stress, r.str_observed_at])).toEqual([
      [0.5, '2026-04-01T06:00:00.000000Z'],
    ]);
    const all = await h.get('/gbsi_eu/system_stress?latest=false');
    expect(all.body.metadata.total_count).toBe(1);
  });
});
