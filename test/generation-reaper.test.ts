/**
 * The two halves of giving a released generation's memory back (generation-reaper.ts,
 * pack-shared.ts): what a thread drops is collected by the thread itself, with no
 * --expose-gc and no luck, while what is still referenced stays; and a built table travels
 * as one shared buffer holding exactly the arrays it was built with.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fullGc } from '../src/generations/full-gc.js';
import { GenerationReaper, sharedBuffersOf } from '../src/generations/generation-reaper.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { packShared } from '../src/store/pack-shared.js';
import { snapshotToTable } from '../src/store/snapshot-to-table.js';
import { tableFromTransfer, tableToTransfer } from '../src/store/table-transfer.js';
import { realTimers } from '../src/time/timers.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const ROWS: PitRow[] = ['DE', 'FR', 'NL'].flatMap((zone, z) =>
  Array.from({ length: 50 }, (_, d) => ({
    date: new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10),
    eff: new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10),
    obs: `${new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10)}T06:00:00Z`,
    key: { bidding_zone: zone },
    tag: `${zone}${d}`,
    value: z * 100 + d,
  })),
);

function table() {
  const bytes = buildArrowSnapshot(pitSnapshot(['bidding_zone'], ROWS));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return snapshotToTable([bytes], { parts: [{ object: 'x.arrow', sha256, rows: ROWS.length }], filterColumns: ['bidding_zone'], floorUs: 0 });
}

/** Waits (on real time) until `ok` holds, at most `ms`. */
async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return ok();
}

describe('GenerationReaper', () => {
  it('collects the shared buffers a thread dropped, on its own: their bytes count until finalized, then none', async () => {
    const reaper = new GenerationReaper(realTimers);
    let held: { columns: Float64Array[] } | null = {
      columns: [new Float64Array(new SharedArrayBuffer(1 << 20)), new Float64Array(new SharedArrayBuffer(1 << 19))],
    };
    reaper.dropped(held);
    held = null;
    expect(reaper.unreclaimedBytes).toBe((1 << 20) + (1 << 19));
    expect(await until(() => reaper.unreclaimedBytes === 0, 10_000)).toBe(true);
    reaper.stop();
  });

  it('keeps counting what is still referenced (a request in flight), and lets it go once it is not', async () => {
    let collections = 0;
    const reaper = new GenerationReaper(realTimers, () => {
      collections++;
      fullGc();
    });
    let kept: { column: Int32Array } | null = { column: new Int32Array(new SharedArrayBuffer(4096)) };
    reaper.dropped(kept);
    expect(await until(() => collections >= 2, 5_000)).toBe(true);
    // still referenced here: never finalized
    expect(reaper.unreclaimedBytes).toBe(4096);
    expect(kept.column.length).toBe(1024);
    kept = null;
    // the next look (2 s after the second) collects it
    expect(await until(() => reaper.unreclaimedBytes === 0, 10_000)).toBe(true);
    reaper.stop();
  });

  it('a dropped object without shared memory costs no collection', async () => {
    let collections = 0;
    const reaper = new GenerationReaper(realTimers, () => collections++);
    reaper.dropped({ values: ['a', 'b'], plain: new Float64Array(8) });
    await new Promise((r) => setTimeout(r, 100));
    expect(collections).toBe(0);
    expect(reaper.unreclaimedBytes).toBe(0);
  });

  it('finds every shared buffer of a table, once each', () => {
    const t = table();
    const found = sharedBuffersOf(t);
    expect(new Set(found).size).toBe(found.length);
    expect(found).toContain(t.rowThr.buffer);
    expect(found).toContain(t.keyRowStart.buffer);
    for (const c of t.columns) expect(found).toContain(c.kind === 'string' ? c.codes.buffer : c.values.buffer);
  });
});

describe('packShared', () => {
  it('puts every shared array of a table transfer in one buffer, 8-aligned, with the same contents', () => {
    const t = table();
    const transfer = tableToTransfer(t);
    const before = sharedBuffersOf(transfer);
    expect(before.length).toBeGreaterThan(10);
    const packed = packShared(transfer);
    const after = sharedBuffersOf(packed);
    expect(after).toHaveLength(1);
    expect(after[0]!.byteLength).toBeGreaterThanOrEqual(before.reduce((n, b) => n + b.byteLength, 0));
    const back = tableFromTransfer(packed);
    expect(back.rows).toBe(t.rows);
    expect(Array.from(back.rowThr)).toEqual(Array.from(t.rowThr));
    expect(Array.from(back.keyRowStart)).toEqual(Array.from(t.keyRowStart));
    expect(Array.from(back.keyThr)).toEqual(Array.from(t.keyThr));
    back.columns.forEach((c, i) => {
      const o = t.columns[i]!;
      expect(c.name).toBe(o.name);
      if (c.kind === 'string' && o.kind === 'string') {
        expect(Array.from(c.codes)).toEqual(Array.from(o.codes));
        expect(c.dict.values).toEqual(o.dict.values);
        expect(Array.from(c.dict.utf8)).toEqual(Array.from(o.dict.utf8));
      } else if (c.kind !== 'string' && o.kind !== 'string')
        expect(Array.from(c.values as ArrayLike<number>)).toEqual(Array.from(o.values as ArrayLike<number>));
      const view = c.kind === 'string' ? c.codes : c.values;
      expect(view.byteOffset % 8).toBe(0);
    });
    expect(Array.from(back.keyThrTree.arrays[0]!)).toEqual(Array.from(t.keyThrTree.arrays[0]!));
    // the original is untouched (the build's arrays are the worker's to drop)
    expect(sharedBuffersOf(transfer)).toEqual(before);
  });
});
