import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import type { ConditionalRead, DatasetRef, SnapshotSource, WriteCondition, WriteResult } from '../src/source/snapshot-source.js';
import { decodeArrowTable } from '../src/publish/arrow-input.js';
import { PublishConflictError } from '../src/publish/commit-generation.js';
import { readArrowSchema } from '../src/publish/dataset-schema.js';
import { publish, type PublishRequest, type PublishResult } from '../src/publish/publish.js';
import { cellValue } from '../src/publish/version-table.js';
import { buildArrowSnapshot, type ColumnSpec } from '../src/snapshot/arrow-writer.js';
import { parseManifest, type Manifest } from '../src/snapshot/manifest.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { formatDate, formatIsoMicros, parseRfc3339 } from '../src/time/instant.js';

const D = (s: string): number => Math.round(Date.parse(s + 'T00:00:00Z') / 86_400_000);
const US = (s: string): number => parseRfc3339(s)!;
const REF = { productId: 'glmi', dataset: 'marginality' } as const;

interface Row {
  date: string;
  basin: string;
  obs: string;
  ing: string;
  value: number | null;
  note?: string | null;
}

/** Recomputed rows of glmi/marginality as an Arrow input (dictionary basin, a nullable note). */
function arrowRows(rows: readonly Row[]): Uint8Array {
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: rows.map((r) => D(r.date)) },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: rows.map((r) => (D(r.date) + 1) * 86_400_000_000) },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: rows.map((r) => US(r.obs)) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: rows.map((r) => US(r.ing)) },
    { name: 'model_version', type: 'utf8', values: rows.map(() => '1.0') },
    { name: 'basin', type: 'dict-utf8', values: rows.map((r) => r.basin) },
    { name: 'value', type: 'float64', values: rows.map((r) => r.value) },
    { name: 'note', type: 'utf8', values: rows.map((r) => r.note ?? null) },
  ];
  return buildArrowSnapshot({ columns, seriesKey: ['basin'], metadata: { 'x.owner': 'desk' } });
}

const BASE: Row[] = [
  { date: '2026-04-01', basin: 'atlantic', obs: '2026-04-02T06:00:00Z', ing: '2026-04-02T07:00:00Z', value: 1.5, note: 'a,b' },
  { date: '2026-04-01', basin: 'pacific', obs: '2026-04-02T06:00:00Z', ing: '2026-04-02T07:00:00Z', value: NaN },
  { date: '2026-04-02', basin: 'atlantic', obs: '2026-04-03T06:00:00Z', ing: '2026-04-03T07:00:00Z', value: 2.5 },
  { date: '2026-04-02', basin: 'pacific', obs: '2026-04-03T06:00:00Z', ing: '2026-04-03T07:00:00Z', value: null, note: '' },
];

/** The same values recomputed later: new observed/ingested stamps, identical values. */
const RERUN: Row[] = BASE.map((r) => ({ ...r, obs: '2026-04-10T06:00:00Z', ing: '2026-04-10T07:00:00Z' }));

let dir: string;
let source: LocalSource;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-publish-'));
  source = new LocalSource(dir);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function run(input: PublishRequest['input'], extra: Partial<PublishRequest> = {}, at = '2026-05-01T00:00:00Z'): Promise<PublishResult> {
  return publish({ source, ...REF, input, rebuild: false, replace: false, seriesKey: null, publishedAtUs: US(at), ...extra });
}
const arrow = (rows: readonly Row[]): PublishRequest['input'] => ({ format: 'arrow', bytes: arrowRows(rows) });

async function manifest(src: SnapshotSource = source): Promise<Manifest> {
  const r = await src.readIfChanged('glmi/marginality/manifest.json', null);
  if (r.status !== 'ok') throw new Error('no manifest');
  return parseManifest(r.bytes);
}

/**
 * Every stored row as plain values (dates and instants as text), in snapshot order: the
 * server's order, series (basin) by key bytes, then date, str_observed_at, str_ingested_at.
 */
async function storedRows(): Promise<Array<Record<string, unknown>>> {
  const m = await manifest();
  const table = decodeArrowTable(await source.readObject(`glmi/marginality/${m.object}`), []);
  return Array.from({ length: table.rows }, (_, r) =>
    Object.fromEntries(
      table.schema.columns.map((def, c) => {
        const v = cellValue(table.columns[c]!, r);
        const text = v === null ? null : def.type === 'date32' ? formatDate(v as number) : def.type === 'timestamp' ? formatIsoMicros(v as number) : v;
        return [def.name, text];
      }),
    ),
  );
}

describe('publish: versions (spec section 3)', () => {
  it('a first publish stores every row as generation 1, keeping the input schema and metadata', async () => {
    const r = await run(arrow(BASE));
    expect(r).toMatchObject({ status: 'published', added: 4, newKeys: 4, rewritten: 0, previousGeneration: null });
    const m = await manifest();
    expect(m).toMatchObject({ generation: 1, rows: 4, object: 'snapshots/00000001.arrow', created_at: '2026-05-01T00:00:00.000Z' });
    const schema = readArrowSchema(await source.readObject(`glmi/marginality/${m.object}`));
    expect(schema.columns.map((c) => `${c.name}:${c.type}`)).toEqual([
      'date:date32',
      'str_effective_at:timestamp',
      'str_observed_at:timestamp',
      'str_ingested_at:timestamp',
      'model_version:utf8',
      'basin:dict-utf8',
      'value:float64',
      'note:utf8',
    ]);
    expect(schema.seriesKey).toEqual(['basin']);
    expect(schema.metadata.get('x.owner')).toBe('desk');
  });

  it('an identical recomputation adds nothing and writes no generation (NaN equals NaN, null equals null, "" is kept)', async () => {
    await run(arrow(BASE));
    const r = await run(arrow(RERUN), {}, '2026-05-02T00:00:00Z');
    expect(r).toEqual({ status: 'unchanged', generation: 1, rows: 4 });
    expect((await manifest()).generation).toBe(1);
    expect(await readdir(join(dir, 'glmi/marginality/snapshots'))).toEqual(['00000001.arrow']);
    expect((await storedRows()).map((x) => x.note)).toEqual(['a,b', null, null, '']);
  });

  it('a changed value appends exactly one version with its observed as given; the old version stays', async () => {
    await run(arrow(BASE));
    const revised = RERUN.map((row) => (row.date === '2026-04-02' && row.basin === 'atlantic' ? { ...row, value: 2.75 } : row));
    const r = await run(arrow(revised));
    expect(r).toMatchObject({ status: 'published', added: 1, newKeys: 0, rewritten: 0, shadowed: 0 });
    const rows = await storedRows();
    expect(rows.map((x) => [x.date, x.basin, x.value])).toEqual([
      ['2026-04-01', 'atlantic', 1.5],
      ['2026-04-02', 'atlantic', 2.5],
      ['2026-04-02', 'atlantic', 2.75],
      ['2026-04-01', 'pacific', NaN],
      ['2026-04-02', 'pacific', null],
    ]);
    expect(rows[2]).toMatchObject({
      date: '2026-04-02',
      basin: 'atlantic',
      value: 2.75,
      str_observed_at: '2026-04-10T06:00:00.000000Z',
      str_ingested_at: '2026-04-10T07:00:00.000000Z',
    });
    expect((await manifest()).generation).toBe(2);
  });

  it('compares with the CURRENT version: reverting to an older value is a revision, repeating the current one is not', async () => {
    await run(arrow(BASE));
    const at = (value: number, obs: string): Row[] => [{ ...BASE[0]!, value, obs, ing: obs }];
    await run(arrow(at(9, '2026-04-05T00:00:00Z')));
    expect(await run(arrow(at(9, '2026-04-06T00:00:00Z')))).toMatchObject({ status: 'unchanged', generation: 2 });
    expect(await run(arrow(at(1.5, '2026-04-07T00:00:00Z')))).toMatchObject({ status: 'published', added: 1 });
    expect((await storedRows()).filter((x) => x.basin === 'atlantic' && x.date === '2026-04-01').map((x) => x.value)).toEqual([1.5, 9, 1.5]);
  });

  it('a new key gets its first version; keys absent from the input are left alone', async () => {
    await run(arrow(BASE));
    const r = await run(arrow([{ date: '2026-04-03', basin: 'middle_east', obs: '2026-04-04T06:00:00Z', ing: '2026-04-04T07:00:00Z', value: 4 }]));
    expect(r).toMatchObject({ status: 'published', added: 1, newKeys: 1 });
    expect((await storedRows()).map((x) => [x.basin, x.date])).toEqual([
      ['atlantic', '2026-04-01'],
      ['atlantic', '2026-04-02'],
      ['middle_east', '2026-04-03'],
      ['pacific', '2026-04-01'],
      ['pacific', '2026-04-02'],
    ]);
  });

  it('--rebuild rewrites str_ingested_at of the unchanged current versions in place, and nothing else', async () => {
    await run(arrow(BASE));
    await run(arrow([{ ...BASE[0]!, value: 1.75, obs: '2026-04-04T06:00:00Z', ing: '2026-04-04T07:00:00Z' }]));
    // A rebuild over three keys: atlantic 04-01 (two versions) unchanged, pacific 04-01
    // unchanged, atlantic 04-02 revised. pacific 04-02 is not in the input.
    const input = [{ ...RERUN[0]!, value: 1.75 }, RERUN[1]!, { ...RERUN[2]!, value: 3 }];
    const r = await run(arrow(input), { rebuild: true }, '2026-05-03T12:00:00.123456Z');
    expect(r).toMatchObject({ status: 'published', added: 1, rewritten: 2 });
    const rows = await storedRows();
    expect(rows.map((x) => [x.date, x.basin, x.value, x.str_ingested_at])).toEqual([
      ['2026-04-01', 'atlantic', 1.5, '2026-04-02T07:00:00.000000Z'],
      ['2026-04-01', 'atlantic', 1.75, '2026-05-03T12:00:00.123456Z'],
      ['2026-04-02', 'atlantic', 2.5, '2026-04-03T07:00:00.000000Z'],
      ['2026-04-02', 'atlantic', 3, '2026-04-10T07:00:00.000000Z'],
      ['2026-04-01', 'pacific', NaN, '2026-05-03T12:00:00.123456Z'],
      ['2026-04-02', 'pacific', null, '2026-04-03T07:00:00.000000Z'],
    ]);
    // str_observed_at is never touched by a rebuild (PIT-2).
    expect(rows[4]!.str_observed_at).toBe('2026-04-02T06:00:00.000000Z');
  });

  it('--rebuild floors the publish time to the column unit', async () => {
    const ms = arrowRows(BASE.slice(0, 1));
    const table = decodeArrowTable(ms, []);
    // Same rows with str_ingested_at in milliseconds.
    const columns: ColumnSpec[] = table.schema.columns.map((def, c) => {
      const values = Array.from({ length: table.rows }, (_, r) => cellValue(table.columns[c]!, r));
      if (def.type === 'timestamp')
        return {
          name: def.name,
          type: 'timestamp',
          unit: def.name === 'str_ingested_at' ? 'ms' : 'us',
          values: values.map((v) => (def.name === 'str_ingested_at' ? (v as number) / 1000 : (v as number))),
        };
      return { name: def.name, type: def.type, values } as ColumnSpec;
    });
    await run({ format: 'arrow', bytes: buildArrowSnapshot({ columns, seriesKey: ['basin'] }) });
    await run(arrow(RERUN.slice(0, 1)), { rebuild: true }, '2026-05-03T12:00:00.123456Z');
    const rows = await storedRows();
    expect(rows.map((x) => x.str_ingested_at)).toEqual(['2026-05-03T12:00:00.123000Z']);
  });

  it('generations only go up, one per publish that changes something', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await run(arrow([{ ...BASE[0]!, value: i, obs: `2026-04-0${i + 2}T00:00:00Z`, ing: `2026-04-0${i + 2}T00:00:00Z` }]));
      if (r.status !== 'published') throw new Error('expected a publish');
      seen.push(r.manifest.generation);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(await readdir(join(dir, 'glmi/marginality/snapshots'))).toEqual(['00000001.arrow', '00000002.arrow', '00000003.arrow', '00000004.arrow']);
  });

  it('--replace publishes an older generation as the next one (a rollback)', async () => {
    await run(arrow(BASE));
    await run(arrow([{ ...RERUN[0]!, value: 99 }]));
    const before = await storedRows();
    const old = await source.readObject('glmi/marginality/snapshots/00000001.arrow');
    const r = await run({ format: 'arrow', bytes: old }, { replace: true });
    expect(r).toMatchObject({ status: 'published', mode: 'replace', previousGeneration: 2 });
    expect((await manifest()).generation).toBe(3);
    const after = await storedRows();
    expect(after).toHaveLength(4);
    expect(after.map((x) => x.value)).toEqual([1.5, 2.5, NaN, null]);
    expect(before).toHaveLength(5);
  });

  it('refuses an input holding one key twice unless it is a --replace', async () => {
    await expect(run(arrow([BASE[0]!, { ...BASE[0]!, value: 3 }]))).rejects.toThrow(/date 2026-04-01, basin="atlantic" twice.*--replace/);
    await expect(run(arrow([BASE[0]!, { ...BASE[0]!, value: 3, obs: '2026-04-09T00:00:00Z' }]), { replace: true })).resolves.toMatchObject({
      status: 'published',
    });
  });

  it('refuses a series key without the product filter column, and an input with other columns', async () => {
    const csv =
      'date,str_effective_at,str_observed_at,str_ingested_at,model_version,basin,value\n2026-04-01,2026-04-02,2026-04-02T06:00:00Z,2026-04-02T07:00:00Z,1.0,atlantic,1\n';
    await expect(run({ format: 'csv', text: csv })).rejects.toThrow(/glmi filters on "basin"/);
    await run(arrow(BASE));
    await expect(run({ format: 'csv', text: csv })).rejects.toThrow(/lacks column\(s\) note/);
  });
});

describe('publish: two publishers never silently overwrite each other', () => {
  it('refuses to write the manifest when it changed between the read and the write', async () => {
    await run(arrow(BASE));
    const other = arrowRows([{ ...BASE[0]!, value: 7 }]);
    const attempt = run(arrow([{ ...RERUN[0]!, value: 8 }]), {
      beforeManifestWrite: async () => {
        // Another tool publishes generation 7 unconditionally in between.
        await writeGeneration(source, REF, other, 7, '2026-05-01T00:00:00Z');
      },
    });
    await expect(attempt).rejects.toThrow(PublishConflictError);
    await expect(attempt).rejects.toThrow(/changed since this publish read it/);
    expect((await manifest()).generation).toBe(7);
  });

  it('a generation object another publisher wrote first is never replaced: the later one writes its own, and the manifest lets one win', async () => {
    await run(arrow(BASE));
    let inner: Promise<PublishResult> | null = null;
    const outer = run(arrow([{ ...RERUN[0]!, value: 8 }]), {
      beforeManifestWrite: async () => {
        // outer's object and history are written: inner finds snapshots/00000002.arrow taken
        inner = run(arrow([{ ...RERUN[0]!, value: 9 }]));
        await inner.catch(() => undefined);
      },
    });
    await expect(outer).rejects.toThrow(/changed since this publish read it/);
    const won = await inner!;
    expect(won).toMatchObject({ status: 'published', manifest: { generation: 2, object: expect.stringMatching(/^snapshots\/00000002-[0-9a-f]{16}\.arrow$/) } });
    expect((await storedRows()).filter((x) => x.basin === 'atlantic' && x.date === '2026-04-01').map((x) => x.value)).toEqual([1.5, 9]);
    // outer's object is still whole (nothing replaced it); history/ holds the manifest that won
    const outerObject = await source.readObject('glmi/marginality/snapshots/00000002.arrow');
    expect(decodeArrowTable(outerObject, []).rows).toBe(5);
    const live = await source.readIfChanged('glmi/marginality/manifest.json', null);
    expect(Buffer.from(await source.readObject('glmi/marginality/history/00000002.json')).equals(Buffer.from((live as { bytes: Uint8Array }).bytes))).toBe(
      true,
    );
  });

  it('history/ ends holding the manifest that won, whichever publisher wrote it last', async () => {
    await run(arrow(BASE));
    let inner: Promise<PublishResult> | null = null;
    // inner runs whole between outer's expectation of the manifest and outer's history write:
    // outer then replaces history/00000002.json with its own before losing the manifest
    let once = true;
    const spy = new Proxy(source, {
      get(target, prop, receiver) {
        if (prop !== 'writeObject') return Reflect.get(target, prop, receiver) as unknown;
        return async (path: string, bytes: Uint8Array, condition?: WriteCondition) => {
          if (once && path.endsWith('history/00000002.json')) {
            once = false;
            inner = run(arrow([{ ...RERUN[0]!, value: 9 }]));
            await inner;
          }
          return target.writeObject(path, bytes, condition);
        };
      },
    });
    const outer = publish({
      source: spy,
      ...REF,
      input: arrow([{ ...RERUN[0]!, value: 8 }]),
      rebuild: false,
      replace: false,
      seriesKey: null,
      publishedAtUs: US('2026-05-01T00:00:00Z'),
    });
    await expect(outer).rejects.toThrow(/changed since this publish read it/);
    expect(await inner!).toMatchObject({ status: 'published', manifest: { generation: 2 } });
    const live = await source.readIfChanged('glmi/marginality/manifest.json', null);
    expect(Buffer.from(await source.readObject('glmi/marginality/history/00000002.json')).toString()).toBe(
      Buffer.from((live as { bytes: Uint8Array }).bytes).toString(),
    );
  });

  it('two publishers racing on one folder: every publish that succeeded is served, the other fails loudly', async () => {
    await run(arrow(BASE));
    const results = await Promise.allSettled([run(arrow([{ ...RERUN[0]!, value: 11 }])), run(arrow([{ ...RERUN[2]!, value: 22 }]))]);
    const values = (await storedRows()).map((x) => x.value);
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') expect(values).toContain(i === 0 ? 11 : 22);
      else expect(r.reason).toBeInstanceOf(PublishConflictError);
    }
    expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('on a store that ignores conditions, re-reads the manifest after writing and fails loudly when it is not ours', async () => {
    await run(arrow(BASE));
    const lax = new IgnoresConditions(source);
    const r = await publish({
      source: lax,
      ...REF,
      input: arrow([{ ...RERUN[0]!, value: 5 }]),
      rebuild: false,
      replace: false,
      seriesKey: null,
      publishedAtUs: US('2026-05-01T00:00:00Z'),
    });
    expect(r).toMatchObject({ status: 'published', enforced: false });

    lax.afterManifestWrite = () => writeGeneration(source, REF, arrowRows(BASE), 9, '2026-05-01T00:00:00Z').then(() => undefined);
    const lost = publish({
      source: lax,
      ...REF,
      input: arrow([{ ...RERUN[0]!, value: 6 }]),
      rebuild: false,
      replace: false,
      seriesKey: null,
      publishedAtUs: US('2026-05-01T00:00:00Z'),
    });
    await expect(lost).rejects.toThrow(/overwritten by another publisher.*generation 9/);
  });
});

/** An S3-compatible store that ignores conditional headers: writes always land, `enforced` is false. */
class IgnoresConditions implements SnapshotSource {
  readonly description = 'lax store';
  afterManifestWrite: (() => Promise<void>) | null = null;
  constructor(private readonly inner: LocalSource) {}
  listDatasets(): Promise<DatasetRef[]> {
    return this.inner.listDatasets();
  }
  readIfChanged(path: string, etag: string | null): Promise<ConditionalRead> {
    return this.inner.readIfChanged(path, etag);
  }
  readObject(path: string): Promise<Uint8Array> {
    return this.inner.readObject(path);
  }
  async writeObject(path: string, bytes: Uint8Array, _condition?: WriteCondition): Promise<WriteResult> {
    const r = await this.inner.writeObject(path, bytes);
    if (path.endsWith('manifest.json')) await this.afterManifestWrite?.();
    return { etag: r.etag, enforced: false };
  }
}
