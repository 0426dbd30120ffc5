/* global process, console, performance, URL */
// Parquet readers for `pitcache publish --input x.parquet`, measured as the publisher needs
// them: every column of every row group, a row group at a time. parquet-wasm and hyparquet
// go as far as the publisher needs them: parquet-wasm to Arrow IPC bytes, hyparquet to JS
// cells (the Arrow writing the publisher then did, from those cells, comes on top); DuckDB has no
// Arrow export without its arrow extension (a download), so it stops at its own columns.
// Each reader runs in a child process of its own (peak RSS is its own), in alternating rounds.
//   node bench/parquet-read/parquet-read.mjs [rows=2000000] [rounds=3]
// Writes the test file with DuckDB (ZSTD, row groups of 122,880 rows) under $TMPDIR first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, file] = [process.argv[2], process.argv[3]];

const MODES = ['parquet-wasm', 'hyparquet', 'duckdb'];
if (MODES.includes(mode)) {
  const t0 = performance.now();
  let cells = 0;
  if (mode === 'parquet-wasm') {
    const { openAsBlob } = await import('node:fs');
    const { ParquetFile } = await import('parquet-wasm/node');
    const f = await ParquetFile.fromFile(await openAsBlob(file));
    const groups = f.metadata().numRowGroups();
    for (let g = 0; g < groups; g++) {
      const group = f.metadata().rowGroup(g);
      cells += group.numRows() * group.numColumns();
      (await f.read({ rowGroups: [g], batchSize: 1 << 20 })).intoIPCStream();
    }
    f.free();
  } else if (mode === 'hyparquet') {
    const { asyncBufferFromFile, parquetMetadataAsync, parquetRead } = await import('hyparquet');
    const { compressors } = await import('hyparquet-compressors');
    const f = await asyncBufferFromFile(file);
    const metadata = await parquetMetadataAsync(f);
    let start = 0;
    for (const g of metadata.row_groups) {
      const end = start + Number(g.num_rows);
      await parquetRead({
        file: f,
        metadata,
        rowStart: start,
        rowEnd: end,
        compressors,
        parsers: { timestampFromMicroseconds: (v) => v, timestampFromMilliseconds: (v) => v, dateFromDays: (d) => d },
        onChunk: ({ columnData }) => (cells += columnData.length),
      });
      start = end;
    }
  } else {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    const c = await db.connect();
    const reader = await c.streamAndReadUntil(`SELECT * FROM read_parquet('${file}')`, Number.MAX_SAFE_INTEGER);
    for (const col of reader.getColumns()) cells += col.length;
  }
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ mode, ms: Math.round(ms), cells, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }) + '\n');
  process.exit(0);
}

const rows = Number(process.argv[2] ?? 2_000_000);
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'pitcache-parquet-read-'));
const path = join(dir, 'x.parquet');
try {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(`COPY (SELECT DATE '2020-01-01' + (i % 2000)::INT AS date, make_timestamp(1577836800000000 + i * 1000) AS str_effective_at,
    make_timestamp(1577836800000000 + i * 1000 + 3600000000) AS str_observed_at, make_timestamp(1577836800000000 + i * 1000 + 7200000000) AS str_ingested_at,
    'v1' AS model_version, 'zone-' || (i // 2000)::VARCHAR AS region, random() AS value, (i % 3 = 0) AS flag
    FROM range(${rows}) t(i)) TO '${path}' (FORMAT parquet, COMPRESSION zstd)`);
  c.closeSync();
  const results = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let r = 0; r < rounds; r++) {
    // each reader first in turn: none always runs on the machine's later minute
    for (const m of MODES.map((_, i) => MODES[(i + r) % MODES.length])) {
      const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname, m, path], { encoding: 'utf8' });
      results[m].push(JSON.parse(out));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (const [m, rs] of Object.entries(results)) {
    console.log(
      `${m}: ${rows} rows x 8 columns (${rs[0].cells} cells), median ${median(rs.map((x) => x.ms))} ms, peak RSS ${median(rs.map((x) => x.peakRssMiB))} MiB (rounds: ${rs.map((x) => x.ms).join(', ')} ms)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
