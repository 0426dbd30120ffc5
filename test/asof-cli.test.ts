import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asofCommand } from '../src/cli/asof-command.js';
import { parseAsofConfig } from '../src/config/asof-config.js';
import { MemoryOutput } from '../src/publish/output.js';
import { ManualClock } from '../src/time/clock.js';

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await asofCommand(argv, env, io, new ManualClock(0));
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

const GLMI = ['--source', 'x', '--product', 'glmi', '--dataset', 'marginality'];

describe('pitcache asof: command line', () => {
  it.each([
    [[...GLMI, '--format', 'xml'], /^pitcache asof: --format: must be one of json, csv, arrow, got "xml"\n$/],
    [[...GLMI, '--country', 'DE'], /^pitcache asof: --country: is not a filter of glmi \(its filters: --basin\), got "DE"\n$/],
    [
      ['--source', 'x', '--product', 'gbsi_us', '--dataset', 'system_stress', '--basin', 'atlantic'],
      /^pitcache asof: --basin: is not a filter of gbsi_us \(it has none\)/,
    ],
    [[...GLMI, '--basin', 'atlantic,indian'], /^pitcache asof: --basin: basin must be one of atlantic, pacific, middle_east, got "atlantic,indian"\n$/],
    [[...GLMI, '--as-of', 'yesterday'], /^pitcache asof: --as-of: must be a date YYYY-MM-DD .*, got "yesterday"\n$/],
    [[...GLMI, '--date-from', '2026-02-30'], /^pitcache asof: --date-from: must be a date YYYY-MM-DD, got "2026-02-30"\n$/],
    [
      [...GLMI, '--date-from', '2026-03-02', '--date-to', '2026-03-01'],
      /^pitcache asof: --date-from: date_from must not be after date_to, got "2026-03-02"\n$/,
    ],
    [[...GLMI, '--latest', 'maybe'], /^pitcache asof: unexpected argument "maybe"/],
    [[...GLMI, '--limit', '5'], /^pitcache asof: unknown option --limit/],
    [['--product', 'glmi', '--dataset', 'marginality'], /^pitcache asof: --source \/ PITCACHE_SOURCE: is required\n$/],
  ])('exits 2 with one line for %j', async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('turns the flags into the query string the API would get, with the largest page', () => {
    const r = parseAsofConfig([...GLMI, '--as-of', '2026-03-01T10:00:00+01:00', '--no-latest', '--basin', 'atlantic,pacific', '--format', 'csv'], {});
    expect(r).toEqual({
      ok: true,
      config: {
        source: 'x',
        productId: 'glmi',
        dataset: 'marginality',
        rawQuery: 'latest=false&as_of=2026-03-01T10%3A00%3A00%2B01%3A00&basin=atlantic%2Cpacific&limit=10000',
        format: 'csv',
        s3: { forcePathStyle: false },
      },
    });
  });

  it('prints help on stdout and exits 0', async () => {
    const r = await cli(['-h']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: pitcache asof [options]');
    expect(r.out).toContain('--bidding-zone');
  });

  describe('with a source', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'pitcache-asof-cli-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('exits 1 with one line when the dataset has no manifest', async () => {
      const r = await cli(['--source', dir, '--product', 'glmi', '--dataset', 'marginality']);
      expect(r.code).toBe(1);
      expect(r.err).toBe(`pitcache asof: glmi/marginality has no manifest.json at ${dir}\n`);
    });
  });
});
