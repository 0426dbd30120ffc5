/**
 * `pitcache catalog` (contract 13): prints the catalog in force at a source or the
 * built-in one, validates and writes catalog.json with a conditional write, with its exit
 * codes; `pitcache publish` into a dataset the catalog lacks says how to add it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogCommand } from '../src/cli/catalog-command.js';
import { publishCommand } from '../src/cli/publish-command.js';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { Catalog } from '../src/catalog/catalog.js';
import { catalogFromJson } from '../src/catalog/catalog-document.js';
import { writeCatalog, CatalogConflictError } from '../src/catalog/catalog-source.js';
import { MemoryOutput } from '../src/publish/output.js';
import { LocalSource } from '../src/source/local-source.js';
import { ManualClock } from '../src/time/clock.js';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-catalog-cli-'));
  store = join(dir, 'store');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await catalogCommand(argv, {}, io);
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

const ACME = {
  format: 'pitcache-catalog/1',
  products: [
    {
      id: 'acme',
      name: 'Acme',
      floor: '2026-02-01',
      filters: [{ param: 'site', allowed: ['north', 'south'] }],
      datasets: [{ name: 'sites', description: 'per site' }],
    },
  ],
};

describe('pitcache catalog', () => {
  it('--builtin prints the built-in catalog as catalog.json, which reads back as the same catalog', async () => {
    const r = await run(['--builtin']);
    expect(r.code).toBe(0);
    const parsed = catalogFromJson(JSON.parse(r.out));
    expect(parsed.products).toEqual(BUILTIN_CATALOG.products);
    expect(JSON.parse(r.out).format).toBe('pitcache-catalog/1');
  });

  it('--source without catalog.json prints the built-in catalog; --set writes a file, then --source prints it', async () => {
    expect((await run(['--source', store])).out).toBe((await run(['--builtin'])).out);
    const file = join(dir, 'acme.json');
    await writeFile(file, JSON.stringify(ACME));
    const set = await run(['--source', store, '--set', file]);
    expect(set).toEqual({ code: 0, out: `catalog.json written to ${store}: 1 product, 1 dataset\n`, err: '' });
    const printed = await run(['--source', store]);
    expect(JSON.parse(printed.out)).toEqual(ACME);
    expect(JSON.parse(await readFile(join(store, 'catalog.json'), 'utf8'))).toEqual(ACME);
  });

  it('exit 2: a bad command line, or a file to set that is not a valid catalog (naming what and why); nothing is written', async () => {
    const before = await readFile(join(store, 'catalog.json'), 'utf8');
    expect((await run([])).code).toBe(2);
    expect((await run(['--builtin', '--source', store])).code).toBe(2);
    expect((await run(['--source', store, 'extra'])).code).toBe(2);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...ACME, products: [{ ...ACME.products[0], filters: [{ param: 'limit', allowed: null }] }] }));
    const r = await run(['--source', store, '--set', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^pitcache catalog: .*bad\.json: catalog\.json is invalid: product "acme" \(products\[0\]\), filter "limit" \(filters\[0\]\): "limit" is a query parameter/,
    );
    await writeFile(bad, 'not json');
    expect((await run(['--source', store, '--set', bad])).err).toMatch(/not JSON/);
    expect((await run(['--source', store, '--set', join(dir, 'absent.json')])).code).toBe(2);
    expect(await readFile(join(store, 'catalog.json'), 'utf8')).toBe(before);
  });

  it('exit 1: the catalog.json at the source is invalid (printing it), or the source cannot be read', async () => {
    const broken = join(dir, 'broken');
    const source = new LocalSource(broken);
    await source.writeObject('catalog.json', new TextEncoder().encode('{"format": "pitcache-catalog/1", "products": [{"id": "x"}]}'));
    const r = await run(['--source', broken]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/catalog\.json is invalid: product "x" \(products\[0\]\), field name: Required/);
  });

  it('two writers cannot overwrite each other: a write conditional on what was read fails once another landed', async () => {
    const source = new LocalSource(join(dir, 'race'));
    const one = new Catalog([{ id: 'one', name: 'One', floor: null, filters: [], datasets: [{ name: 'a', description: '' }] }]);
    const two = new Catalog([{ id: 'two', name: 'Two', floor: null, filters: [], datasets: [{ name: 'b', description: '' }] }]);
    // Both read "no catalog.json"; the first writes; the second is refused.
    await writeCatalog(source, one, null);
    await expect(writeCatalog(source, two, null)).rejects.toBeInstanceOf(CatalogConflictError);
    const text = await readFile(join(dir, 'race', 'catalog.json'), 'utf8');
    expect(JSON.parse(text).products[0].id).toBe('one');
  });

  it('pitcache publish into a dataset the catalog lacks fails (exit 1) saying how to add it', async () => {
    const csv = join(dir, 'rows.csv');
    await writeFile(
      csv,
      'date,str_effective_at,str_observed_at,str_ingested_at,model_version,site,v\n2026-04-01,2026-04-01,2026-04-01T06:00:00Z,2026-04-01T06:00:00Z,1.0,north,1\n',
    );
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    const code = await publishCommand(
      ['--source', store, '--product', 'acme', '--dataset', 'more', '--input', csv, '--series-key', 'site'],
      {},
      io,
      new ManualClock(Date.UTC(2026, 4, 1)),
    );
    expect(code).toBe(1);
    expect(io.stderr.text()).toMatch(
      /acme\/more is not a dataset of the catalog in force at .* \(acme's datasets: sites\); add it first: pitcache catalog --source <source> > catalog\.json, add \{"name": "more"/,
    );
    const ok = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
    expect(
      await publishCommand(
        ['--source', store, '--product', 'acme', '--dataset', 'sites', '--input', csv, '--series-key', 'site'],
        {},
        ok,
        new ManualClock(Date.UTC(2026, 4, 1)),
      ),
    ).toBe(0);
    expect(ok.stdout.text()).toMatch(/^published acme\/sites generation 1/);
  });
});
