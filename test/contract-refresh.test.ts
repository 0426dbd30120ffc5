/**
 * Contract 2 (a cursor chain stays on its generation; cursor_expired) and contract 6 (a bad
 * new snapshot never replaces the one being served). New generations are published into the
 * harness's source folder and picked up with the loader's refresh.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, tagsOf, type PitRow } from './support/fixtures.js';

const REF = { productId: 'pemi', dataset: 'grid_stress' };
const PATH = '/pemi/grid_stress';
const DATES = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04', '2026-04-05'];
const ZONES = ['DE', 'FR'];

/** Generation `g`: 2 zones x 5 dates, each row tagged with its generation. */
function generation(g: number): PitRow[] {
  return DATES.flatMap((date) =>
    ZONES.map((z): PitRow => ({ key: { bidding_zone: z }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `g${g}/${date}/${z}` })),
  );
}
/** The unpaged latest=false answer of generation g: date ascending, then DE before FR. */
const all = (g: number) => DATES.flatMap((d) => ZONES.map((z) => `g${g}/${d}/${z}`));

async function publish(h: Harness, g: number): Promise<void> {
  await writeGeneration(h.source, REF, buildArrowSnapshot(pitSnapshot(['bidding_zone'], generation(g))), g, '2026-11-02T00:00:00Z');
}

async function refresh(h: Harness): Promise<void> {
  await h.server.loader.refreshNow();
}

describe('contract 2/6: refresh while serving', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startInProcessHarness({ datasets: [{ ...REF, spec: pitSnapshot(['bidding_zone'], generation(1)) }] });
  });
  afterAll(() => h.close());

  it('contract 2: every page of a cursor chain comes from the generation it started on, even after a refresh', async () => {
    const first = await h.get(`${PATH}?latest=false&limit=3`);
    expect(tagsOf(first)).toEqual(all(1).slice(0, 3));
    await publish(h, 2);
    await refresh(h);
    expect(tagsOf(await h.get(`${PATH}?latest=false&limit=3`))).toEqual(all(2).slice(0, 3));

    const tags = tagsOf(first);
    let cursor = first.body.next_cursor as string | undefined;
    while (cursor !== undefined) {
      const page = await h.get(`${PATH}?latest=false&limit=3&cursor=${encodeURIComponent(cursor)}`);
      tags.push(...tagsOf(page));
      expect(page.body.metadata.total_count).toBe(10);
      cursor = page.body.next_cursor as string | undefined;
    }
    expect(tags).toEqual(all(1));
  });

  it('contract 6: a new snapshot refused at load leaves the served generation in place', async () => {
    const before = tagsOf(await h.get(`${PATH}?latest=false&limit=100`));
    expect(before).toEqual(all(2));
    // Generation 3: a manifest whose sha256 does not match its object.
    const bytes = buildArrowSnapshot(pitSnapshot(['bidding_zone'], generation(3)));
    const manifest = await writeGeneration(h.source, REF, bytes, 3, '2026-11-03T00:00:00Z');
    await h.source.writeObject('pemi/grid_stress/manifest.json', new TextEncoder().encode(JSON.stringify({ ...manifest, sha256: '0'.repeat(64) })));
    await refresh(h);
    expect(tagsOf(await h.get(`${PATH}?latest=false&limit=100`))).toEqual(all(2));
    // Generation 4: a snapshot that breaks the column table (no str_observed_at).
    const spec = pitSnapshot(['bidding_zone'], generation(4));
    await writeGeneration(
      h.source,
      REF,
      buildArrowSnapshot({ ...spec, columns: spec.columns.filter((c) => c.name !== 'str_observed_at') }),
      4,
      '2026-11-04T00:00:00Z',
    );
    await refresh(h);
    expect(tagsOf(await h.get(`${PATH}?latest=false&limit=100`))).toEqual(all(2));
    expect((await h.get('/readyz', null)).status).toBe(200);
  });
});

describe('contract 2/12: cursor_expired', () => {
  let h: Harness;

  beforeAll(async () => {
    // No room to keep a superseded generation: a refresh drops the old one at once.
    h = await startInProcessHarness({
      datasets: [{ ...REF, spec: pitSnapshot(['bidding_zone'], generation(1)) }],
      server: { retainMemory: { kind: 'bytes', bytes: 0 } },
    });
  });
  afterAll(() => h.close());

  it('a released generation is loaded again from history/ for its cursor; once its history is gone, 400 cursor_expired', async () => {
    const first = await h.get(`${PATH}?latest=false&limit=3`);
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    await publish(h, 2);
    await refresh(h);
    const again = await h.get(`${PATH}?latest=false&limit=3&cursor=${cursor}`);
    expect(again.status).toBe(200);
    expect(again.body.metadata.generation).toBe(1);
    expect(tagsOf(again)).toEqual(all(1).slice(3, 6));
    // Released again at once (the budget is 0): without its history manifest it cannot come back.
    await rm(join(h.dir, 'pemi/grid_stress/history/00000001.json'));
    expectError(await h.get(`${PATH}?latest=false&limit=3&cursor=${cursor}`), 400, 'cursor_expired', 'cursor');
  });
});
