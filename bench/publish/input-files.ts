import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildArrowSnapshot } from '../../src/snapshot/arrow-writer.js';

/**
 * A publish input of some tens of MB, the same rows as a CSV file, an Arrow IPC file and a
 * Parquet file (written by DuckDB from the CSV): `series` bidding zones x `days` days, one
 * version per key, a float value (some null), a bool, a label of a few values. Rows are
 * written day by day (not in the server's order). Deterministic: a seed changes the values.
 */
export interface InputFiles {
  readonly csv: string;
  readonly arrow: string;
  readonly parquet: string;
  readonly rows: number;
}

const DAY0 = Date.UTC(2024, 0, 1) / 86_400_000;
const HEADER = 'date,str_effective_at,str_observed_at,str_ingested_at,model_version,bidding_zone,value,flag,label';

export async function writeInputFiles(dir: string, series: number, days: number, seed: number): Promise<InputFiles> {
  const csv = `${dir}/in.csv`;
  const arrow = `${dir}/in.arrow`;
  const parquet = `${dir}/in.parquet`;
  const rows = series * days;
  const col = {
    date: new Int32Array(rows),
    eff: new Float64Array(rows),
    obs: new Float64Array(rows),
    ing: new Float64Array(rows),
    zone: new Array<string>(rows),
    value: new Array<number | null>(rows),
    flag: new Array<boolean>(rows),
    label: new Array<string>(rows),
  };
  const out = createWriteStream(csv);
  out.write(HEADER + '\n');
  let r = 0;
  let lines: string[] = [];
  for (let d = 0; d < days; d++) {
    const day = DAY0 + d;
    const date = new Date(day * 86_400_000).toISOString().slice(0, 10);
    for (let s = 0; s < series; s++, r++) {
      const h = hash(seed, r);
      const effUs = day * 86_400_000_000 + (h % 86_400) * 1_000_000;
      const obsUs = effUs + (1 + (h % 7_200)) * 1_000_000;
      const ingUs = obsUs + (h % 999_999);
      const zone = `Z${String(s).padStart(5, '0')}`;
      const value = h % 20 === 0 ? null : ((h % 2_000_001) - 1_000_000) / 64;
      const flag = (h & 1) === 1;
      const label = LABELS[h % LABELS.length]!;
      col.date[r] = day;
      col.eff[r] = effUs;
      col.obs[r] = obsUs;
      col.ing[r] = ingUs;
      col.zone[r] = zone;
      col.value[r] = value;
      col.flag[r] = flag;
      col.label[r] = label;
      lines.push(`${date},${iso(effUs)},${iso(obsUs)},${iso(ingUs)},v1,${zone},${value === null ? '' : String(value)},${flag},${label}`);
      if (lines.length === 10_000) {
        if (!out.write(lines.join('\n') + '\n')) await once(out, 'drain');
        lines = [];
      }
    }
  }
  out.end(lines.length > 0 ? lines.join('\n') + '\n' : '');
  await once(out, 'finish');
  await writeFile(
    arrow,
    buildArrowSnapshot({
      seriesKey: ['bidding_zone'],
      batchRows: 65_536,
      columns: [
        { name: 'date', type: 'date32', values: col.date },
        { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: col.eff },
        { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: col.obs },
        { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: col.ing },
        { name: 'model_version', type: 'utf8', values: col.zone.map(() => 'v1') },
        { name: 'bidding_zone', type: 'utf8', values: col.zone },
        { name: 'value', type: 'float64', values: col.value },
        { name: 'flag', type: 'bool', values: col.flag },
        { name: 'label', type: 'utf8', values: col.label },
      ],
    }),
  );
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(
      `COPY (SELECT * FROM read_csv('${csv}', header=true, nullstr='', timestampformat='%Y-%m-%dT%H:%M:%S.%fZ',
         columns={'date': 'DATE', 'str_effective_at': 'TIMESTAMP', 'str_observed_at': 'TIMESTAMP', 'str_ingested_at': 'TIMESTAMP',
           'model_version': 'VARCHAR', 'bidding_zone': 'VARCHAR', 'value': 'DOUBLE', 'flag': 'BOOLEAN', 'label': 'VARCHAR'}))
       TO '${parquet}' (FORMAT parquet, ROW_GROUP_SIZE 65536, KV_METADATA {'pitcache.series_key': '["bidding_zone"]'})`,
    );
  } finally {
    c.closeSync();
  }
  return { csv, arrow, parquet, rows };
}

const LABELS = ['calm', 'tight', 'stressed', 'scarce', 'a "quoted", label'.replace(/[",]/g, '')];

function hash(seed: number, i: number): number {
  let h = Math.imul(seed ^ i, 0x9e3779b1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> 0;
  return (h ^ (h >>> 13)) >>> 0;
}

function iso(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString().replace('Z', '') + String(us % 1000).padStart(3, '0') + 'Z';
}
