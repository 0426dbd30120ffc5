import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishCommand } from '../src/cli/publish-command.js';
import { parsePublishConfig } from '../src/config/publish-config.js';
import { MemoryOutput } from '../src/publish/output.js';
import { ManualClock } from '../src/time/clock.js';

let dir: string;
let csv: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-publish-cli-'));
  csv = join(dir, 'rows.csv');
  await writeFile(
    csv,
    'date,str_effective_at,str_observed_at,str_ingested_at,model_version,country,v\n2026-04-01,2026-04-01,2026-04-01T06:00:00Z,2026-04-01T06:00:00Z,1.0,DE,1\n',
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await publishCommand(argv, env, io, new ManualClock(Date.UTC(2026, 4, 1)));
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

/** Valid flags for the usage cases (evaluated when the cases are collected: no temp folder yet). */
const FLAGS = ['--source', 'x', '--product', 'gbsi_eu', '--dataset', 'system_stress', '--input', 'a.csv'];
const OK = (): string[] => ['--source', join(dir, 'store'), '--product', 'gbsi_eu', '--dataset', 'system_stress', '--input', csv];

describe('pitcache publish: command line', () => {
  it.each([
    [['--source', 'x', '--product', 'gbsi_eu', '--dataset', 'system_stress'], /^pitcache publish: --input \/ PITCACHE_INPUT: is required\n$/],
    [[...FLAGS, '--bogus'], /^pitcache publish: unknown option --bogus \(see pitcache publish --help\)\n$/],
    [
      [...FLAGS, '--part-bytes', '12 apples'],
      /^pitcache publish: --part-bytes: "12 apples" is not a size \(e\.g\. 512MiB, 2GiB, 1000000\), got "12 apples"\n$/,
    ],
    [[...FLAGS, '--rebuild', '--replace'], /^pitcache publish: --rebuild: cannot be combined with --replace, got "true"\n$/],
    [[...FLAGS, '--series-key', 'a,,b'], /^pitcache publish: --series-key: must be column names separated by commas, got "a,,b"\n$/],
    [[...FLAGS, 'extra'], /^pitcache publish: unexpected argument "extra"/],
    [
      ['--source', 'ftp://x', '--product', 'glmi', '--dataset', 'marginality', '--input', 'a.csv'],
      /^pitcache publish: --source: has an unsupported scheme ftp:\/\//,
    ],
  ])('exits 2 with one line for %j', async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('reads options from PITCACHE_* variables, flags winning', () => {
    const r = parsePublishConfig(['--dataset', 'system_stress'], {
      PITCACHE_SOURCE: 's3://b/p',
      PITCACHE_PRODUCT: 'gbsi_eu',
      PITCACHE_DATASET: 'x',
      PITCACHE_INPUT: 'a.arrow',
      PITCACHE_REBUILD: '1',
      PITCACHE_S3_EMULATE_CONDITIONS: 'true',
    });
    expect(r).toEqual({
      ok: true,
      config: {
        source: 's3://b/p',
        productId: 'gbsi_eu',
        dataset: 'system_stress',
        input: { path: 'a.arrow', format: 'arrow' },
        rebuild: true,
        replace: false,
        seriesKey: null,
        partBytes: 512 * 2 ** 20,
        s3: { forcePathStyle: false, conditionalWrites: 'unsupported' },
      },
    });
  });

  it('--part-bytes reads a size; an --input file of no known kind exits 1 naming the kinds (a folder is read at run time)', async () => {
    const r = parsePublishConfig([...FLAGS, '--part-bytes', '1.5KiB'], {});
    expect(r.ok && r.config.partBytes).toBe(1536);
    const txt = join(dir, 'rows.txt');
    await writeFile(txt, 'x');
    const bad = await cli(['--source', join(dir, 'store'), '--product', 'glmi', '--dataset', 'marginality', '--input', txt]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(
      /^pitcache publish: --input .*rows\.txt must name a \.arrow \(or \.arrows, \.ipc, \.feather\), \.csv or \.parquet file, or a folder of them\n$/,
    );
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect((await cli(['--source', join(dir, 'store'), '--product', 'glmi', '--dataset', 'marginality', '--input', empty])).err).toMatch(
      /holds no \.arrow, \.csv or \.parquet file/,
    );
  });

  it('prints help on stdout and exits 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: pitcache publish [options]');
    expect(r.out).toContain('--replace');
  });

  it('exits 1 with one line when the publish fails, and 0 with one summary line when it succeeds', async () => {
    const missing = await cli([...OK().slice(0, -1), join(dir, 'absent.csv')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^pitcache publish: cannot read --input .*absent\.csv: ENOENT\n$/);

    const noKey = await cli(OK());
    expect(noKey.code).toBe(1);
    expect(noKey.err).toBe('pitcache publish: gbsi_eu filters on "country", so the series key must include it (it is []; see --series-key)\n');

    const ok = await cli([...OK(), '--series-key', 'country']);
    expect(ok).toEqual({ code: 0, out: 'published gbsi_eu/system_stress generation 1: 1 row, 1 version added (1 new key), 0 keys rewritten\n', err: '' });
    const again = await cli(OK());
    expect(again).toEqual({ code: 0, out: 'no changes: gbsi_eu/system_stress stays at generation 1 (1 row); nothing published\n', err: '' });
  });
});
