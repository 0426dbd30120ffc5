/* global process, console */
// The response cache's admission on synthetic traffic, in process, for one build's dist/:
// the hit rate, stores and evictions per cycle of a cyclic sweep (the bench's loops and
// random dates are cyclic lists of 20,000 queries), a shift from one hot working set to
// another, and a stream of queries never repeated. Plain JS so it loads any build (A/B).
// Usage: node bench/hand/admission.mjs [ROOT] [CACHE_MIB] [BODY_KIB]   (ROOT: a checkout with
// `npx tsc -p tsconfig.build.json` run; defaults: this checkout, 64 MiB, 33 KiB)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(process.argv[2] ?? '.');
const mib = Number(process.argv[3] ?? 64);
const kib = Number(process.argv[4] ?? 33);
const { ResponseCache } = await import(pathToFileURL(`${root}/dist/src/cache/response-cache.js`).href);
const body = new Uint8Array(kib * 1024);
const meta = { generation: 1 };
const DATASET = 'wssi_us/demand_shock';
const fresh = () => new ResponseCache(mib * 1024 * 1024);
// Builds before TinyLFU took no dataset argument.
const admit = (c, k) => (c.admit.length === 5 ? c.admit(k, DATASET, body, meta, null) : c.admit(k, body, meta, null));
const ask = (c, k) => {
  if (c.get(k) !== undefined) return true;
  admit(c, k);
  return false;
};
const keys = (n, tag) => Array.from({ length: n }, (_, i) => `${DATASET}\u00011\u0001series=${tag}${i}&decision_dates=2024-01-01..2024-12-31&window=90`);
const delta = (a, b) => Object.fromEntries(Object.keys(b).map((k) => [k, b[k] - (a[k] ?? 0)]));

console.log(`${root}: ${mib} MiB, ${kib} KiB answers`);
for (const n of [500, 2500, 4000, 9000, 20000]) {
  const c = fresh();
  const set = keys(n, 's');
  for (let r = 0; r < 12; r++) for (const k of set) ask(c, k);
  const before = c.stats();
  const rounds = 6;
  for (let r = 0; r < rounds; r++) for (const k of set) ask(c, k);
  const d = delta(before, c.stats());
  console.log(
    `cyclic sweep of ${n}: entries ${c.stats().entries}, hits ${((100 * d.hits) / (rounds * n)).toFixed(1)}%, ` +
      `stores ${(d.stores / rounds).toFixed(0)} and evictions ${(d.evictions / rounds).toFixed(0)} per cycle (cycles 13-18)`,
  );
}
{
  const c = fresh();
  const old = keys(1500, 'old');
  const next = keys(1500, 'new');
  for (let r = 0; r < 30; r++) for (const k of old) ask(c, k);
  const hits = [];
  for (let r = 0; r < 14; r++) {
    let h = 0;
    for (const k of next) if (ask(c, k)) h++;
    hits.push(`${Math.round((100 * h) / next.length)}%`);
  }
  console.log(`1,500 queries asked 30 times, then 1,500 others: hits per round of the new ones ${hits.join(' ')}`);
}
{
  const c = fresh();
  const before = c.stats();
  const n = 200_000;
  for (let i = 0; i < n; i++) ask(c, `${DATASET}\u00011\u0001once=${i}`);
  const d = delta(before, c.stats());
  console.log(`${n} queries asked once each: stores ${d.stores}, evictions ${d.evictions}, entries ${c.stats().entries}`);
}
