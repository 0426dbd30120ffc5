/**
 * Rendering 10000 rows: RowRenderer into a reused ByteWriter vs JSON.stringify of the same
 * rows as ready-made objects (which flatters JSON.stringify: a real server would first have
 * to build those objects). Run: `npx tsx bench/render.bench.ts`.
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import type { Column } from '../src/store/column.js';
import { buildStringDictionary } from '../src/store/string-dictionary.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { RowRenderer } from '../src/format/json/row-renderer.js';
import { rng } from '../test/support/rng.js';

const ROWS = 10_000;

function fixture(): { columns: Column[]; objects: Record<string, unknown>[] } {
  const r = rng(42);
  const countries = ['AT', 'BE', 'DE', 'ES', 'FR', 'IT', 'NL', 'PL'];
  const date = new Int32Array(ROWS);
  const eff = new Float64Array(ROWS);
  const obs = new Float64Array(ROWS);
  const ing = new Float64Array(ROWS);
  const country = new Int32Array(ROWS);
  const value = new Float64Array(ROWS);
  const zscore = new Float64Array(ROWS);
  const n = new Int32Array(ROWS);
  const flag = new Uint8Array(ROWS);
  for (let i = 0; i < ROWS; i++) {
    date[i] = 20000 + Math.floor(i / countries.length);
    eff[i] = date[i]! * 86_400_000_000 + 86_400_000_000;
    obs[i] = eff[i]! + Math.floor(r() * 3_600_000_000);
    ing[i] = obs[i]! + Math.floor(r() * 1_000_000_000);
    country[i] = i % countries.length;
    value[i] = Math.round((r() - 0.5) * 1e6) / 1e4;
    zscore[i] = (r() - 0.5) * 6;
    n[i] = Math.floor(r() * 1e6);
    flag[i] = r() < 0.5 ? 1 : 0;
  }
  const columns: Column[] = [
    { kind: 'date32', name: 'date', validity: null, values: date },
    { kind: 'timestamp', name: 'str_effective_at', unit: 'us', validity: null, values: eff },
    { kind: 'timestamp', name: 'str_observed_at', unit: 'us', validity: null, values: obs },
    { kind: 'timestamp', name: 'str_ingested_at', unit: 'us', validity: null, values: ing },
    { kind: 'string', name: 'model_version', validity: null, codes: new Int32Array(ROWS), dict: buildStringDictionary(['1.0']) },
    { kind: 'string', name: 'country', validity: null, codes: country, dict: buildStringDictionary(countries) },
    { kind: 'float', name: 'value', validity: null, values: value },
    { kind: 'float', name: 'zscore', validity: null, values: zscore },
    { kind: 'int', name: 'n', validity: null, values: n },
    { kind: 'bool', name: 'flag', validity: null, values: flag },
  ];
  const iso = (us: number): string => new Date(us / 1000).toISOString().replace('Z', '000Z');
  const objects = Array.from({ length: ROWS }, (_, i) => ({
    date: new Date(date[i]! * 86_400_000).toISOString().slice(0, 10),
    str_effective_at: iso(eff[i]!),
    str_observed_at: iso(obs[i]!),
    str_ingested_at: iso(ing[i]!),
    model_version: '1.0',
    country: countries[country[i]!],
    value: value[i],
    zscore: zscore[i],
    n: n[i],
    flag: flag[i] === 1,
  }));
  return { columns, objects };
}

export async function renderBench(): Promise<{ rowRendererMs: number; stringifyMs: number; ratio: number }> {
  const { columns, objects } = fixture();
  const renderer = new RowRenderer({ columns });
  const rows = Int32Array.from({ length: ROWS }, (_, i) => i);
  const out = new ByteWriter();
  let sink = 0;
  const bench = new Bench({ time: 1000, warmupTime: 300 });
  bench
    .add('RowRenderer 10000 rows', () => {
      out.reset();
      renderer.writeRows(out, rows, ROWS);
      sink += out.pos;
    })
    .add('JSON.stringify 10000 prebuilt objects + Buffer.from', () => {
      sink += Buffer.from(JSON.stringify(objects)).length;
    });
  await bench.run();
  const mean = (i: number): number => {
    const t = bench.tasks[i]?.result;
    return t !== undefined && 'latency' in t ? t.latency.mean : NaN;
  };
  const rowRendererMs = mean(0);
  const stringifyMs = mean(1);
  if (sink < 0) console.log(sink);
  return { rowRendererMs, stringifyMs, ratio: stringifyMs / rowRendererMs };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await renderBench();
  console.log(
    `RowRenderer ${r.rowRendererMs.toFixed(3)} ms, JSON.stringify ${r.stringifyMs.toFixed(3)} ms per 10000 rows: ` +
      `RowRenderer is ${r.ratio.toFixed(2)}x as fast`,
  );
}
