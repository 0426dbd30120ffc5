import { describe, expect, it } from 'vitest';
import type { OutputColumn } from '../src/format/page-view.js';
import { ownedMeta, type PageMeta } from '../src/format/resolved-page.js';
import { InstantMicros } from '../src/format/resolved-page.js';
import { PageScratch } from '../src/pipeline/page-scratch.js';
import type { BoolColumn, Date32Column, FloatColumn } from '../src/store/column.js';

const date = (name: string): Date32Column => ({ kind: 'date32', name, validity: null, values: new Int32Array(4) });
const bool = (name: string): BoolColumn => ({ kind: 'bool', name, validity: null, values: new Uint8Array(4) });
const float = (name: string): FloatColumn => ({ kind: 'float', name, validity: null, values: new Float64Array(4) });
const stored = (names: string[]): OutputColumn[] => names.map((n) => ({ column: float(n), at: 'row' }));

describe("PageScratch (a serving thread's resolved page, refilled per request)", () => {
  it('withPrefixAndSuffix: the computed first column, the stored ones, the computed last one; the same list while every part is the same object', () => {
    const scratch = new PageScratch();
    const decision = date('decision_date');
    const floor = bool('floor_applied');
    const layout = stored(['date', 'value']);
    const first = scratch.withPrefixAndSuffix(decision, layout, floor);
    expect(first.map((c) => [c.column.name, c.at])).toEqual([
      ['decision_date', 'position'],
      ['date', 'row'],
      ['value', 'row'],
      ['floor_applied', 'position'],
    ]);
    expect(scratch.withPrefixAndSuffix(decision, layout, floor)).toBe(first);
    // A grown resolver column, or another layout (a projection, a newer generation): a new list.
    const grown = scratch.withPrefixAndSuffix(date('decision_date'), layout, floor);
    expect(grown).not.toBe(first);
    expect(grown).toEqual(first.map((c, i) => (i === 0 ? { ...c, column: grown[0]!.column } : c)));
    const regrown = scratch.withPrefixAndSuffix(grown[0]!.column, layout, bool('floor_applied'));
    expect(regrown).not.toBe(grown);
    const projected = stored(['date']);
    expect(scratch.withPrefixAndSuffix(grown[0]!.column, projected, floor).map((c) => c.column.name)).toEqual(['decision_date', 'date', 'floor_applied']);
  });

  it('withSuffix: the stored columns, then the two computed ones; the same list while all three parts are the same objects', () => {
    const scratch = new PageScratch();
    const from = date('visible_from');
    const to = date('visible_to');
    const layout = stored(['date', 'value']);
    const first = scratch.withSuffix(layout, from, to);
    expect(first.map((c) => [c.column.name, c.at])).toEqual([
      ['date', 'row'],
      ['value', 'row'],
      ['visible_from', 'position'],
      ['visible_to', 'position'],
    ]);
    expect(scratch.withSuffix(layout, from, to)).toBe(first);
    // One part other than the last call's at a time: each alone makes a new list.
    const others: [OutputColumn[], Date32Column, Date32Column][] = [
      [layout, date('visible_from'), to],
      [layout, from, date('visible_to')],
      [stored(['date', 'value']), from, to],
    ];
    for (const [s, a, b] of others) {
      const last = scratch.withSuffix(layout, from, to);
      const next = scratch.withSuffix(s, a, b);
      expect(next).not.toBe(last);
      expect(next.map((c) => c.column)).toEqual([...s.map((c) => c.column), a, b]);
    }
  });
});

describe('ownedMeta (a meta that is kept: the response cache, an answer finished off the thread)', () => {
  it('copies every field and the values, with instants of its own, so refilling the scratch leaves it as it was', () => {
    const scratch = new PageScratch();
    const meta = scratch.meta;
    const values = scratch.rowsValues;
    Object.assign(meta, {
      productId: 'gbsi_eu',
      count: 3,
      totalCount: 40,
      nextCursor: 'abc',
      generation: 7,
      dataLatestDate: 20_000,
      maxObservedUs: 1_700_000_000_000_000,
      asOfUs: 1_700_000_100_000_000,
      floorApplied: true,
      extensionKeys: ['generation', 'as_of', 'vintage_floor', 'floor_applied'],
      extensionValues: values,
    } satisfies PageMeta);
    scratch.asOf.us = 1_700_000_100_000_000;
    values.splice(0, 4, 7, scratch.asOf, '2026-01-13', true);
    const owned = ownedMeta(meta);
    const before = structuredClone({ ...owned, extensionValues: owned.extensionValues.map((v) => (v instanceof InstantMicros ? { us: v.us } : v)) });

    Object.assign(meta, {
      productId: 'x',
      count: 0,
      totalCount: 0,
      nextCursor: null,
      generation: 8,
      dataLatestDate: null,
      maxObservedUs: null,
      asOfUs: null,
      floorApplied: false,
    });
    scratch.asOf.us = 0;
    values.splice(0, 4, 8, null, 'y', false);

    expect({ ...owned, extensionValues: owned.extensionValues.map((v) => (v instanceof InstantMicros ? { us: v.us } : v)) }).toEqual(before);
    expect(owned.extensionValues[1]).toBeInstanceOf(InstantMicros);
    expect(before).toMatchObject({ productId: 'gbsi_eu', count: 3, totalCount: 40, nextCursor: 'abc', generation: 7, asOfUs: 1_700_000_100_000_000 });
    expect(before.extensionValues).toEqual([7, { us: 1_700_000_100_000_000 }, '2026-01-13', true]);
  });
});
