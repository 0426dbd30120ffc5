import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asofCommand } from '../src/cli/asof-command.js';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { asofQuery, parseAsofConfig } from '../src/config/asof-config.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { LocalSource } from '../src/source/local-source.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
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
        params: [
          ['latest', 'false', '--latest'],
          ['as_of', '2026-03-01T10:00:00+01:00', '--as-of'],
        ],
        filters: [{ flag: '--basin', param: 'basin', value: 'atlantic,pacific' }],
        format: 'csv',
        s3: { forcePathStyle: false },
      },
    });
    const q = asofQuery((r as { config: Parameters<typeof asofQuery>[0] }).config, BUILTIN_CATALOG);
    expect(q).toMatchObject({ ok: true, rawQuery: 'latest=false&as_of=2026-03-01T10%3A00%3A00%2B01%3A00&basin=atlantic%2Cpacific&limit=10000' });
    expect((q as { product: { id: string } }).product.id).toBe('glmi');
  });

  it.each([
    [['--basin'], '--basin needs a value'],
    [['--basin', '--as-of', '2026-03-01'], '--basin needs a value'],
    [['--basin', 'a', '--basin=b'], '--basin is given more than once'],
    [['--Basin', 'a'], 'unknown option --Basin'],
  ])('a filter flag %j without a value, twice or not a name exits 2 before the source is read', async (extra, message) => {
    const r = await cli([...GLMI.map((a) => (a === 'x' ? '/nonexistent/never-read' : a)), ...extra]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`pitcache asof: ${message} (see pitcache asof --help)\n`);
  });

  it('prints help on stdout and exits 0', async () => {
    const r = await cli(['-h']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: pitcache asof [options]');
    // filters are the catalog's at --source: named by the rule, with an example
    expect(r.out).toContain('--bidding-zone DE');
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

  // Contract 13: the catalog at --source names the products, datasets and filters.
  describe('with a catalog.json at the source', () => {
    let dir: string;
    const ROWS: PitRow[] = [
      { key: { site: 'north', band: 'low' }, date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-02T06:00:00Z', tag: 'nl1', value: 1 },
      { key: { site: 'north', band: 'low' }, date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-05T06:00:00Z', tag: 'nl2', value: 2 },
      { key: { site: 'north', band: 'high' }, date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-02T06:00:00Z', tag: 'nh1', value: 3 },
      { key: { site: 'south', band: 'low' }, date: '2026-03-03', eff: '2026-03-03', obs: '2026-03-03T06:00:00Z', tag: 'sl1', value: 4 },
    ];
    const CATALOG = {
      format: 'pitcache-catalog/1',
      products: [
        {
          id: 'acme',
          name: 'Acme',
          floor: null,
          filters: [
            { param: 'site', allowed: null },
            { param: 'band', allowed: ['low', 'high'] },
          ],
          datasets: [{ name: 'grid_load', description: '' }],
        },
        { id: 'solo', name: 'Solo', floor: null, filters: [{ param: 'station_id', allowed: null }], datasets: [{ name: 'one', description: '' }] },
      ],
    };
    const ACME = ['--product', 'acme', '--dataset', 'grid_load'];
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'pitcache-asof-catalog-'));
      await writeFile(join(dir, 'catalog.json'), JSON.stringify(CATALOG));
      const bytes = buildArrowSnapshot(pitSnapshot(['site', 'band'], ROWS));
      await writeGeneration(new LocalSource(dir), { productId: 'acme', dataset: 'grid_load' }, bytes, 1, '2026-11-01T00:00:00Z');
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    const tags = (out: string): string[] => (JSON.parse(out) as Array<{ tag: string }>).map((r) => r.tag);

    it('answers for a dataset of that catalog, its filters as flags', async () => {
      const all = await cli(['--source', dir, ...ACME, '--no-latest']);
      expect(all.err).toBe('');
      expect(all.code).toBe(0);
      expect(tags(all.out).sort()).toEqual(['nh1', 'nl2', 'sl1']);
      const some = await cli(['--source', dir, ...ACME, '--site', 'north', '--band=low', '--as-of', '2026-03-03']);
      expect(some.code).toBe(0);
      expect(tags(some.out)).toEqual(['nl1']);
    });

    it.each([
      [['--product', 'glmi', '--dataset', 'marginality'], '--product: is not a product of the catalog at the source (its products: acme, solo), got "glmi"'],
      [['--product', 'acme', '--dataset', 'marginality'], '--dataset: is not a dataset of acme (its datasets: grid_load), got "marginality"'],
      [[...ACME, '--station-id', 'x'], '--station-id: is not a filter of acme (its filters: --site, --band), got "x"'],
      [[...ACME, '--basin', 'atlantic'], 'unknown option --basin (see pitcache asof --help)'],
      [[...ACME, '--band', 'mid'], '--band: band must be one of low, high, got "mid"'],
    ])('refuses %j with exit 2, in the words of that catalog', async (argv, message) => {
      const r = await cli(['--source', dir, ...argv]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`pitcache asof: ${message}\n`);
      expect(r.out).toBe('');
    });

    it('exits 1 when the catalog at the source is invalid', async () => {
      const bad = await mkdtemp(join(tmpdir(), 'pitcache-asof-bad-'));
      try {
        await writeFile(join(bad, 'catalog.json'), '{"format": "pitcache-catalog/1", "products": [{"id": "Bad"}]}');
        const r = await cli(['--source', bad, ...ACME]);
        expect(r.code).toBe(1);
        expect(r.err).toMatch(/^pitcache asof: catalog.json is invalid: product "Bad"/);
      } finally {
        await rm(bad, { recursive: true, force: true });
      }
    });
  });
});
