/* global process, console, TextDecoder */
// The bulk workloads (walk-forward-dataset, latest, page-walk) through createApiHandler in
// process, as one serving thread answers them, in each format: µs per request, µs per row
// and rows per second; page-walk follows every chain's cursors to its end and reports its
// median and last page. ROOTS (several, colon-separated) are measured in alternating rounds
// (ROUNDS, default 4), so a VM that drifts moves both alike; the least round is reported.
// Times are the process's CPU time (process.cpuUsage), not wall time: see cpuUs.
// DATA=folder and DATASETS=product/dataset,... measure on part of the bench data.
// PROF=dir writes a CPU profile of each root's timed requests per workload and format.
// Usage: ROUNDS=4 node bench/hand/bulk.mjs ROOT[:ROOT2] [workloads=walk-forward-dataset,latest,page-walk] [formats=json,csv,arrow] [n=40]
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchHandler, benchRequests } from './handler-setup.mjs';

const roots = (process.argv[2] ?? '.').split(':');
const workloads = (process.argv[3] ?? 'walk-forward-dataset,latest,page-walk').split(',');
const formats = (process.argv[4] ?? 'json,csv,arrow').split(',');
const n = Number(process.argv[5] ?? 40);
const rounds = Number(process.env.ROUNDS ?? 4);
/** DATASETS=a/b,c/d: only the paths of these (with DATA set to a folder holding only them, a shorter load) */
const only = process.env.DATASETS?.split(',') ?? null;
const handlers = [];
for (const root of roots) handlers.push(await benchHandler(root, { responseCacheMiB: 0, rowMiB: Number(process.env.ROW_MIB ?? 64) }));

const latin = new TextDecoder('latin1');
/**
 * CPU time of this process, µs: on a VM shared by many, wall time mostly measures the
 * others; the CPU this thread got is what the code cost (the GC's helper threads included).
 */
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** next_cursor of an answer: in the JSON envelope, else the x-next-cursor header */
function nextCursor(r) {
  const head = latin.decode(r.body.subarray(0, 400));
  const j = head.indexOf('"next_cursor":"');
  if (j >= 0) return head.slice(j + 15, head.indexOf('"', j + 15));
  if (r.headerBlock) {
    const h = latin.decode(r.headerBlock.rest);
    const m = /x-next-cursor: ([A-Za-z0-9_-]+)/.exec(h);
    if (m) return m[1];
  }
  return null;
}
const rowsOf = (r) => {
  const h = r.headerBlock ? latin.decode(r.headerBlock.rest) : '';
  const m = /x-count: (\d+)/.exec(h);
  if (m) return Number(m[1]);
  const head = latin.decode(r.body.subarray(0, 200));
  return Number(/"count":(\d+)/.exec(head)?.[1] ?? 0);
};

/** One workload's requests in one format: [{request, chain}] (page-walk: whole chains). */
function requestsOf(workload, format) {
  return benchRequests(workload)
    .filter((q) => only === null || only.some((d) => q.path === `/${d}`))
    .slice(0, n)
    .map((q) => ({ ...q, rawQuery: `${q.rawQuery}&format=${format}` }));
}

function runOnce(handler, reqs, chains) {
  let rows = 0;
  let requests = 0;
  let bytes = 0;
  const pages = [];
  for (const q of reqs) {
    let cursor = null;
    let page = 0;
    for (;;) {
      const t0 = cpuUs();
      const r = handler(cursor === null ? q : { ...q, rawQuery: `${q.rawQuery}&cursor=${cursor}` });
      const dt = cpuUs() - t0;
      if (r.status !== 200) throw new Error(`status ${r.status} for ${q.rawQuery}: ${latin.decode(r.body.subarray(0, 200))}`);
      requests++;
      bytes += r.body.length;
      const count = rowsOf(r);
      rows += count;
      cursor = chains ? nextCursor(r) : null;
      if (chains) pages.push({ chain: q.rawQuery, page, dt, last: cursor === null, count });
      page++;
      if (cursor === null) break;
    }
  }
  return { rows, requests, bytes, pages };
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)];
};
const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};

let session = null;
if (process.env.PROF) {
  mkdirSync(process.env.PROF, { recursive: true });
  const { Session } = await import('node:inspector/promises');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}

for (const workload of workloads) {
  for (const format of formats) {
    const chains = workload === 'page-walk';
    const reqs = requestsOf(workload, format);
    // warm-up (WARM=0: none, for long chains measured once)
    if (process.env.WARM !== '0') for (const h of handlers) runOnce(h, reqs.slice(0, Math.min(reqs.length, 4)), chains);
    const best = handlers.map(() => null);
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < handlers.length; j++) {
        const i = round % 2 === 0 ? j : handlers.length - 1 - j;
        if (session && round === rounds - 1) await session.post('Profiler.start');
        const t0 = cpuUs();
        const res = runOnce(handlers[i], reqs, chains);
        const ms = (cpuUs() - t0) / 1000;
        if (session && round === rounds - 1) {
          const { profile } = await session.post('Profiler.stop');
          writeFileSync(`${process.env.PROF}/${i}-${workload}-${format}.cpuprofile`, JSON.stringify(profile));
        }
        if (best[i] === null || ms < best[i].ms) best[i] = { ms, ...res };
      }
    }
    for (let i = 0; i < handlers.length; i++) {
      const b = best[i];
      let walk = '';
      if (chains) {
        // per chain: last page against the chain's median page
        const by = new Map();
        for (const p of b.pages) by.set(p.chain, [...(by.get(p.chain) ?? []), p]);
        const ratios = [];
        for (const ps of by.values()) if (ps.length > 2) ratios.push(ps.at(-1).dt / median(ps.map((p) => p.dt)));
        const full = b.pages.filter((p) => !p.last).map((p) => p.dt);
        walk = `, pages ${b.pages.length}: median ${median(full).toFixed(0)} µs, p99 ${pct(full, 99).toFixed(0)} µs, last/median per chain: median ${median(ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}`;
      }
      console.log(
        `${roots[i].padEnd(20)} ${workload.padEnd(21)} ${format.padEnd(5)} ${((b.ms * 1000) / b.requests).toFixed(0).padStart(7)} µs/req  ${((b.ms * 1000) / Math.max(1, b.rows)).toFixed(3)} µs/row  ${((b.rows / b.ms) * 1000).toFixed(0).padStart(9)} rows/s  ${(b.bytes / Math.max(1, b.rows)).toFixed(0)} B/row  (${b.requests} req, ${b.rows} rows${walk})`,
      );
    }
  }
}
process.exit(0);
