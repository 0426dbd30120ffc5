/**
 * Contract 2 and 12 across refreshes from S3: every page of a cursor chain comes from the
 * generation the chain started on. Superseded generations are retained under the memory
 * budget (least recently used first); once the chain's generation is released, its next
 * page loads it again from history/; only when that is gone is it 400 cursor_expired.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { expectError } from './support/fixtures.js';
import type { Reply } from './support/harness.js';
import { GRID_ID, T0, expectedValues, publish, serve, startS3World, type S3World, type Served } from './support/s3-harness.js';

const PAGE = '/pemi/grid_stress?latest=false&limit=7';
const worlds: S3World[] = [];
let running: Served | null = null;

afterEach(async () => {
  await running?.close();
  running = null;
});
afterAll(async () => {
  for (const w of worlds) await w.close();
});

/** A fresh bucket prefix with generation 1, and a server on it. */
async function fresh(retainBytes = 2 ** 30): Promise<{ world: S3World; s: Served }> {
  const world = await startS3World(`cursors-${worlds.length}`);
  worlds.push(world);
  await publish(world.publisher, 1);
  running = await serve(world.openSource(), { clock: new ManualClock(T0), retainMemory: { kind: 'bytes', bytes: retainBytes } });
  return { world, s: running };
}

/** A page without what differs between two identical requests. */
function comparable(r: Reply): unknown {
  expect(r.status, r.text).toBe(200);
  const { record_id: _id, ...metadata } = r.body.metadata as Record<string, unknown>;
  return { ...r.body, metadata };
}

const next = (s: Served, page: Reply): Promise<Reply> => s.get(`${PAGE}&cursor=${encodeURIComponent(page.body.next_cursor as string)}`);

/** Every page of a chain, from its first page on. */
async function rest(s: Served, first: Reply): Promise<Reply[]> {
  const pages = [first];
  while (pages.at(-1)!.body.has_more === true) pages.push(await next(s, pages.at(-1)!));
  return pages;
}

async function swapIn(world: S3World, s: Served, g: number): Promise<void> {
  await publish(world.publisher, g);
  const r = await s.refresh();
  expect(r.body.changed, r.text).toEqual([GRID_ID]);
}

describe('cursor chains across a refresh', () => {
  it('a chain started on generation 1 continues on generation 1 after generation 2 is swapped in, page for page', async () => {
    const { world, s } = await fresh();
    const unrefreshed = await rest(s, await s.get(PAGE));
    expect(unrefreshed).toHaveLength(3);
    expect(unrefreshed.flatMap((p) => (p.body.data as Array<{ value: number }>).map((r) => r.value))).toEqual(expectedValues(1));

    const first = await s.get(PAGE);
    await swapIn(world, s, 2);
    // New chains read generation 2...
    expect((await s.get(PAGE)).body.metadata.generation).toBe(2);
    // ...the old chain finishes on generation 1, identical to the chain that saw no refresh.
    const chain = await rest(s, first);
    expect(chain.map(comparable)).toEqual(unrefreshed.map(comparable));
    expect(await s.status()).toMatchObject({ generation: 2, retained_generations: [1] });
  });

  it('with no room to retain a superseded generation, the next page of its chain loads it from history/; without its history, 400 cursor_expired', async () => {
    const { world, s } = await fresh(1);
    const first = await s.get(PAGE);
    const unrefreshed = await rest(s, first);
    await swapIn(world, s, 2);
    expect(await s.status()).toMatchObject({ generation: 2, retained_generations: [] });
    const reloaded = await rest(s, first);
    expect(reloaded.map(comparable)).toEqual(unrefreshed.map(comparable));
    // Loaded, answered, and released again at once: nothing of it stays.
    expect(await s.status()).toMatchObject({ generation: 2, retained_generations: [] });
    await world.remove('pemi/grid_stress/history/00000001.json');
    expectError(await next(s, first), 400, 'cursor_expired', 'cursor');
    // A chain on the current generation is unaffected.
    expect(await rest(s, await s.get(PAGE))).toHaveLength(3);
  });

  it('retained generations are bounded by bytes: the least recently used one is dropped first', async () => {
    // Learn what one generation weighs, then allow one and a half of it.
    const probe = await fresh();
    const bytes = (await probe.s.status())['bytes'] as number;
    expect(bytes).toBeGreaterThan(0);
    await running!.close();
    running = null;

    const { world, s } = await fresh(Math.floor(bytes * 1.5));
    const onFirst = await s.get(PAGE);
    await swapIn(world, s, 2);
    const onSecond = await s.get(PAGE);
    const secondUnrefreshed = await rest(s, onSecond);
    await swapIn(world, s, 3);
    expect(await s.status()).toMatchObject({ generation: 3, retained_generations: [2] });
    expect((await rest(s, onSecond)).map(comparable)).toEqual(secondUnrefreshed.map(comparable));
    // Generation 1 was released; its chain goes on from history/.
    const page = await next(s, onFirst);
    expect(page.body.metadata.generation).toBe(1);
    expect(page.body.data.map((r: { value: number }) => r.value)).toEqual(expectedValues(1).slice(7, 14));
  });
});
