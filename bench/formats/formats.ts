/**
 * `npm run bench:formats -- [--duration 5] [--connections 8]`: issue 8's speed section.
 *
 * On a copy of the demo data (pemi/grid_stress, 32,934 rows), one serving thread, no
 * response cache (every answer rendered): wrk drives `latest=false&limit=10000` pages over
 * 40 distinct date windows in json, csv and arrow, identity, gzip and br. For each: req/s,
 * rows/s, bytes per answer, p99; the same wrk against the uWS ceiling server answering a
 * fixed body of the same size, in the same run; client decode time per page (JSON.parse,
 * csv-parse, apache-arrow); and the p99 of small requests alone vs while br-compressed
 * large pages are being served. Writes bench/formats/RESULTS-formats.{json,md}.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tableFromIPC } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { DEMO_KEY } from '../../src/demo/ensure-demo.js';
import { repoRoot } from '../lib/paths.js';
import { ceilingArgv } from '../lib/server-argv.js';
import { startDemoServer } from '../lib/demo-server.js';
import { spawnLogged, waitFor200, type Spawned } from '../lib/proc.js';

interface Row {
  name: string;
  reqPerSec: number;
  rowsPerSec: number;
  bytesPerAnswer: number;
  p99Ms: number;
  ceilingReqPerSec: number;
  ceilingP99Ms: number;
}

const log = (m: string): void => void process.stderr.write(`[formats ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

const LUA = `
local paths = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  i = math.random(#paths)
end
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  io.write(string.format("BENCH %d %f %f\\n", summary.requests, summary.duration / 1e6, latency:percentile(99) / 1000))
end
`;

interface WrkOut {
  requests: number;
  seconds: number;
  p99Ms: number;
}

function wrk(url: string, pathsFile: string, luaFile: string, headers: Record<string, string>, seconds: number, connections: number): WrkOut {
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '-s',
    luaFile,
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
    '--',
    pathsFile,
  ];
  const r = spawnSync('wrk', args, { encoding: 'utf8' });
  const m = /BENCH (\d+) ([\d.]+) ([\d.]+)/.exec(r.stdout);
  if (m === null) throw new Error(`wrk failed: ${r.stdout}${r.stderr}`);
  return { requests: Number(m[1]), seconds: Number(m[2]), p99Ms: Number(m[3]) };
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: { duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '8' }, 'row-cache-mb': { type: 'string', default: '64' } },
  });
  const seconds = Number(a.duration);
  const connections = Number(a.connections);
  const demo = await startDemoServer('formats', [
    '--workers',
    '1',
    '--response-cache-mb',
    '0',
    '--row-cache-mb',
    a['row-cache-mb']!,
    '--refresh-interval',
    '0',
  ]);
  const { dir, port, base } = demo;
  let ceiling: Spawned | null = null;
  const rows: Row[] = [];
  try {
    const lua = join(dir, 'paths.lua');
    await writeFile(lua, LUA);
    const day0 = Date.UTC(2026, 0, 1);
    const big = Array.from(
      { length: 40 },
      (_, i) => `/pemi/grid_stress?latest=false&limit=10000&date_from=${new Date(day0 + i * 86_400_000).toISOString().slice(0, 10)}`,
    );
    const decode: Record<string, number> = {};
    for (const format of ['json', 'csv', 'arrow'] as const) {
      for (const enc of ['identity', 'gzip', 'br'] as const) {
        const paths = big.map((p) => `${p}&format=${format}`);
        const file = join(dir, `paths-${format}.txt`);
        await writeFile(file, paths.join('\n') + '\n');
        const headers = { 'x-api-key': DEMO_KEY, 'accept-encoding': enc };
        // bytes and rows per answer, from one answer per path (node:http would decode; fetch the raw size with curl)
        let bytes = 0;
        let count = 0;
        for (const p of paths.slice(0, 8)) {
          const r = spawnSync('curl', ['-s', '-o', '/dev/null', '-D', '-', '-H', `x-api-key: ${DEMO_KEY}`, '-H', `accept-encoding: ${enc}`, `${base}${p}`], {
            encoding: 'utf8',
          });
          bytes += Number(/content-length: (\d+)/i.exec(r.stdout)?.[1] ?? NaN);
          count += Number(/x-count: (\d+)/i.exec(r.stdout)?.[1] ?? NaN);
        }
        const meanBytes = Math.round(bytes / 8);
        const meanRows = count / 8;
        if (enc === 'identity') {
          const body = Buffer.from(await (await fetch(`${base}${paths[0]}`, { headers: { 'x-api-key': DEMO_KEY } })).arrayBuffer());
          decode[format] = timeDecode(format, body);
        }
        log(`${format}/${enc}: ${meanBytes} B, ${meanRows} rows per answer`);
        const w = wrk(base, file, lua, headers, seconds, connections);
        ceiling = spawnLogged(ceilingArgv(port + 1, meanBytes, 1));
        await waitFor200(`http://127.0.0.1:${port + 1}/healthz`, ceiling, 10_000);
        const c = wrk(`http://127.0.0.1:${port + 1}`, file, lua, {}, seconds, connections);
        await ceiling.stop();
        ceiling = null;
        const rps = w.requests / w.seconds;
        rows.push({
          name: `${format} ${enc}`,
          reqPerSec: rps,
          rowsPerSec: rps * meanRows,
          bytesPerAnswer: meanBytes,
          p99Ms: w.p99Ms,
          ceilingReqPerSec: c.requests / c.seconds,
          ceilingP99Ms: c.p99Ms,
        });
      }
    }
    // p99 of small requests alone, then while br-compressed 10,000-row JSON pages are served.
    const smallFile = join(dir, 'small.txt');
    await writeFile(
      smallFile,
      Array.from({ length: 40 }, (_, i) => `/pemi/grid_stress?limit=5&date_to=2026-02-${String((i % 28) + 1).padStart(2, '0')}`).join('\n') + '\n',
    );
    const alone = wrk(base, smallFile, lua, { 'x-api-key': DEMO_KEY }, seconds, 4);
    const bigFile = join(dir, 'paths-json.txt');
    const bg = spawnLogged([
      'wrk',
      '-t1',
      '-c4',
      `-d${seconds + 2}s`,
      '-s',
      lua,
      '-H',
      `x-api-key: ${DEMO_KEY}`,
      '-H',
      'accept-encoding: br',
      base,
      '--',
      bigFile,
    ]);
    await new Promise((r) => setTimeout(r, 1000));
    const loaded = wrk(base, smallFile, lua, { 'x-api-key': DEMO_KEY }, seconds, 4);
    await bg.stop();
    const report = {
      seconds,
      connections,
      rowCacheMb: Number(a['row-cache-mb']),
      rows,
      decodeMsPer10kRowPage: decode,
      smallP99Ms: { alone: alone.p99Ms, whileCompressing: loaded.p99Ms },
    };
    const suffix = a['row-cache-mb'] === '64' ? '' : `-rowcache${a['row-cache-mb']}`;
    await writeFile(join(repoRoot(), `bench/formats/RESULTS-formats${suffix}.json`), JSON.stringify(report, null, 2) + '\n');
    await writeFile(join(repoRoot(), `bench/formats/RESULTS-formats${suffix}.md`), markdown(report));
    log('written bench/formats/RESULTS-formats.md');
  } finally {
    await ceiling?.stop();
    await demo.stop();
  }
}

/** Median of 15 decodes of one page, ms: what the client pays after the bytes arrive. */
function timeDecode(format: 'json' | 'csv' | 'arrow', body: Buffer): number {
  const run = (): unknown => (format === 'json' ? JSON.parse(body.toString('utf8')) : format === 'csv' ? parse(body) : tableFromIPC(body).toArray());
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  return times.sort((x, y) => x - y)[7]!;
}

function markdown(r: {
  seconds: number;
  connections: number;
  rowCacheMb: number;
  rows: Row[];
  decodeMsPer10kRowPage: Record<string, number>;
  smallP99Ms: { alone: number; whileCompressing: number };
}): string {
  const json = r.rows.find((x) => x.name === 'json identity')!;
  const lines = [
    `Command: \`npm run bench:formats -- --duration ${r.seconds} --connections ${r.connections} --row-cache-mb ${r.rowCacheMb}\` (wrk -t1 -c${r.connections}, one serving thread, response cache off, JSON row cache ${r.rowCacheMb} MiB, demo pemi/grid_stress, 10,000-row pages over 40 date windows). Ceiling: the uWS server answering a fixed body of the same mean size, same wrk, same run.`,
    '',
    '| format, coding | req/s | rows/s | x JSON rows/s | bytes/answer | x fewer bytes than JSON | p99 ms | ceiling req/s | share of ceiling | p99 / ceiling p99 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.name} | ${x.reqPerSec.toFixed(0)} | ${(x.rowsPerSec / 1e6).toFixed(2)}M | ${(x.rowsPerSec / json.rowsPerSec).toFixed(2)} | ${x.bytesPerAnswer} | ${(json.bytesPerAnswer / x.bytesPerAnswer).toFixed(2)} | ${x.p99Ms.toFixed(1)} | ${x.ceilingReqPerSec.toFixed(0)} | ${((100 * x.reqPerSec) / x.ceilingReqPerSec).toFixed(0)}% | ${(x.p99Ms / x.ceilingP99Ms).toFixed(2)} |`,
    ),
    '',
    `Client decode of one 10,000-row page (median of 15, ms): JSON.parse ${r.decodeMsPer10kRowPage['json']!.toFixed(1)}, csv-parse ${r.decodeMsPer10kRowPage['csv']!.toFixed(1)}, apache-arrow tableFromIPC + toArray ${r.decodeMsPer10kRowPage['arrow']!.toFixed(1)}.`,
    '',
    `p99 of small requests (limit=5): ${r.smallP99Ms.alone.toFixed(2)} ms alone, ${r.smallP99Ms.whileCompressing.toFixed(2)} ms while 4 connections fetch br-compressed 10,000-row JSON pages (compressed on the thread pool).`,
    '',
  ];
  return lines.join('\n');
}

await main();
