import type { KeyRegistry } from '../auth/key-registry.js';
import type { Generation } from '../generations/generation.js';
import { formatDate, formatIsoMillis } from '../time/instant.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';

/** What GET /catalog says of a loaded generation (contract 13), computed once per generation. */
interface LoadedFacts {
  readonly generation: number;
  readonly rows: number;
  readonly series: number;
  readonly date_min: string | null;
  readonly date_max: string | null;
  readonly observed_max: string | null;
}

const facts = new WeakMap<Generation, LoadedFacts>();

function factsOf(g: Generation): LoadedFacts {
  let f = facts.get(g);
  if (f !== undefined) return f;
  const t = g.table;
  // Every row is visible at +Infinity: the greatest date and observation of the whole snapshot.
  const dateMax = t.latestDateByThr.query(Infinity);
  const observedMax = t.maxObservedByThr.query(Infinity);
  f = {
    generation: g.number,
    rows: t.rows,
    series: t.seriesCount,
    date_min: t.rows === 0 ? null : formatDate(t.minDate),
    date_max: dateMax === null ? null : formatDate(dateMax),
    observed_max: observedMax === null ? null : formatIsoMillis(observedMax),
  };
  facts.set(g, f);
  return f;
}

/** One dataset of GET /catalog: the catalog's word on it, then what is loaded (null while nothing is). */
function entryOf(slot: DatasetSlot): object {
  const p = slot.product;
  const g = slot.current;
  const loaded = g === null ? null : factsOf(g);
  return {
    product_id: p.id,
    dataset: slot.dataset,
    product_name: p.name,
    description: p.datasets.find((d) => d.name === slot.dataset)?.description ?? '',
    floor: p.floor,
    filters: p.filters.map((f) => ({ param: f.param, allowed: f.allowed })),
    series_key: g === null ? null : g.table.seriesKey,
    columns: g === null ? null : g.table.fields.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    state: slot.state,
    generation: loaded?.generation ?? null,
    rows: loaded?.rows ?? null,
    series: loaded?.series ?? null,
    date_min: loaded?.date_min ?? null,
    date_max: loaded?.date_max ?? null,
    observed_max: loaded?.observed_max ?? null,
  };
}

/**
 * The body of `GET /catalog` for one key (contract 13): the datasets served here that the
 * key may read, in catalog order. A cold path: JSON.stringify is fine.
 */
export function catalogBody(registry: DatasetRegistry, keys: KeyRegistry, keyIndex: number): Uint8Array {
  const datasets = registry.slots.filter((s) => keys.entitled(keyIndex, s.product.id)).map(entryOf);
  return Buffer.from(JSON.stringify({ datasets }));
}
