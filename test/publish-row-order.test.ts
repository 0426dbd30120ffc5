/**
 * The order `pitcache publish` writes rows in: series by the UTF-8 bytes of their key values,
 * column by column, then date, str_observed_at, str_ingested_at, then input position (the
 * server's order, contract 14 and PIT-4), whichever way the publisher numbers series: a key
 * of one column, of two with few combinations of values (numbered through a table) and of two
 * with more combinations than that table holds (numbered through a map). Rows come shuffled,
 * with several versions per key, ties on both stamps, and key values whose UTF-16 order
 * differs from their UTF-8 order. The rows as written are compared with the input's, sorted
 * by a comparator in the test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeArrowTable } from '../src/publish/arrow-input.js';
import { publish } from '../src/publish/publish.js';
import { cellValue } from '../src/publish/version-table.js';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { LocalSource } from '../src/source/local-source.js';
import { parseRfc3339 } from '../src/time/instant.js';

let dir: string;
let source: LocalSource;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-publish-order-'));
  source = new LocalSource(dir);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

interface Row {
  readonly geo: string;
  readonly region: string;
  readonly day: number;
  readonly obs: number;
  readonly ing: number;
  readonly id: number;
}

/** A generator of the test's choices, the same every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Key values around the surrogate range: UTF-16 puts '\u{1F600}' before '\uFF5A', UTF-8 after. */
const ODD = ['\uFF5A', '\u{1F600}', 'é', 'e', 'E', 'ｚz', ''];

function rows(series: number, geos: number, regions: number, seed: number): Row[] {
  const rnd = random(seed);
  const out: Row[] = [];
  for (let s = 0; s < series; s++) {
    const g = s % geos;
    const r = (s * 7919 + Math.floor(s / geos)) % regions;
    const geo = `${ODD[g % ODD.length]}g${g}`;
    const region = `${ODD[(r + 3) % ODD.length]}r${r}`;
    for (let d = 0; d < 3; d++) {
      for (let v = 0; v < 1 + Math.floor(rnd() * 3); v++) {
        // Few distinct stamps, so that versions tie on observed and on both.
        const obs = Math.floor(rnd() * 3);
        const ing = Math.floor(rnd() * 2);
        out.push({ geo, region, day: d, obs, ing, id: 0 });
      }
    }
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.map((r, id) => ({ ...r, id }));
}

const day = (d: number): string => `2026-04-0${d + 1}`;
const at = (d: number, h: number, ms: number): string => `2026-04-0${d + 1}T0${h}:00:00.${String(ms).padStart(3, '0')}Z`;

function csv(input: readonly Row[], twoKeys: boolean): string {
  const header = `date,str_effective_at,str_observed_at,str_ingested_at,model_version,${twoKeys ? 'geography,region_type' : 'bidding_zone'},stress,label`;
  const q = (s: string): string => `"${s.replace(/"/g, '""')}"`;
  const lines = input.map(
    (r) =>
      `${day(r.day)},${day(r.day)},${at(r.day, 6 + r.obs, 0)},${at(r.day, 6 + r.obs, 100 + r.ing)},1.0,${q(r.geo)},${twoKeys ? `${q(r.region)},` : ''}${r.id / 8},id${r.id}`,
  );
  return [header, ...lines].join('\n') + '\n';
}

const utf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function expected(input: readonly Row[], twoKeys: boolean): string[] {
  return [...input]
    .sort((a, b) => utf8(a.geo, b.geo) || (twoKeys ? utf8(a.region, b.region) : 0) || a.day - b.day || a.obs - b.obs || a.ing - b.ing || a.id - b.id)
    .map((r) => `id${r.id}`);
}

async function written(dataset: string): Promise<string[]> {
  const r = await source.readIfChanged(`${dataset}/manifest.json`, null);
  if (r.status !== 'ok') throw new Error('no manifest');
  const labels: string[] = [];
  for (const part of partsOf(parseManifest(r.bytes))) {
    const table = decodeArrowTable(await source.readObject(`${dataset}/${part.object}`), []);
    const c = table.schema.columns.findIndex((d) => d.name === 'label');
    for (let row = 0; row < table.rows; row++) labels.push(cellValue(table.columns[c]!, row) as string);
  }
  return labels;
}

describe('publish writes rows in the server order', () => {
  const cases = [
    { name: 'a key of one column', series: 300, geos: 300, regions: 1, twoKeys: false },
    { name: 'a key of two columns, few combinations (a table)', series: 400, geos: 40, regions: 30, twoKeys: true },
    { name: 'a key of two columns, more combinations than the table holds (a map)', series: 1200, geos: 1100, regions: 1100, twoKeys: true },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const input = rows(c.series, c.geos, c.regions, c.series);
      const r = await publish({
        source,
        productId: c.twoKeys ? 'wrsi' : 'pemi',
        dataset: c.twoKeys ? 'forecast_stress' : 'grid_stress',
        input: { format: 'csv', text: csv(input, c.twoKeys) },
        rebuild: false,
        replace: true,
        seriesKey: c.twoKeys ? ['geography', 'region_type'] : ['bidding_zone'],
        publishedAtUs: parseRfc3339('2026-05-01T00:00:00Z')!,
        // Several parts, so that series ranges are gathered one part at a time.
        partBytes: 16 * 1024,
      });
      expect(r.status).toBe('published');
      if (r.status === 'published') expect(r.manifest.rows).toBe(input.length);
      expect(await written(c.twoKeys ? 'wrsi/forecast_stress' : 'pemi/grid_stress')).toEqual(expected(input, c.twoKeys));
    });
  }
});
