import { ROW_SLOT_BYTES } from '../../src/format/arenas/row-arena.js';
import type { Column } from '../../src/store/column.js';
import { buildStringDictionary } from '../../src/store/string-dictionary.js';
import { rng } from './rng.js';

export const ROWS = 500;

/**
 * Columns of a test table: the same seed gives the same values (as two threads see one
 * generation), another seed other values in the same shape (as a new generation looks).
 * With longEvery > 0, every longEvery-th row has a label longer than a row cache slot.
 */
export function rowTable(seed: number, longEvery = 0): Column[] {
  const r = rng(seed);
  const words = ['a', 'bb', 'ü"x', 'x'.repeat(ROW_SLOT_BYTES)];
  return [
    { kind: 'date32', name: 'date', validity: null, values: Int32Array.from({ length: ROWS }, (_, i) => 19000 + i) },
    {
      kind: 'timestamp',
      name: 'str_observed_at',
      unit: 'us',
      validity: null,
      values: Float64Array.from({ length: ROWS }, () => 1.7e15 + Math.floor(r() * 1e13)),
    },
    { kind: 'float', name: 'value', validity: null, values: Float64Array.from({ length: ROWS }, () => Math.round((r() - 0.5) * 1e5) / 100 + seed) },
    {
      kind: 'string',
      name: 'label',
      validity: null,
      codes: Int32Array.from({ length: ROWS }, (_, i) => (longEvery > 0 && i % longEvery === 0 ? 3 : i % 3)),
      dict: buildStringDictionary(words),
    },
  ];
}

/** Walk-forward windows of 40 rows stepping by one, then random row lists with repeats. */
export function rowRequests(seed: number): Int32Array[] {
  const r = rng(seed);
  const out: Int32Array[] = [];
  for (let d = 0; d < 60; d++) out.push(Int32Array.from({ length: 40 }, (_, i) => 100 + d + i));
  for (let n = 0; n < 60; n++) out.push(Int32Array.from({ length: 1 + Math.floor(r() * 50) }, () => Math.floor(r() * ROWS)));
  return out;
}
