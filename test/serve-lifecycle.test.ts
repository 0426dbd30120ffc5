/**
 * SIGTERM on a real `pitcache serve` process (two serving threads): /readyz turns 503 at
 * once while data requests are still answered for --drain-seconds, then the process exits
 * 0 within its bound; a second signal exits at once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, defaultKeysJson } from './support/harness.js';
import { startServeProcess, TWO_ZONES, writeGridStress, type ServeProcess } from './support/serve-process.js';

let dir: string;
let proc: ServeProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-lifecycle-'));
  await writeGridStress(dir, TWO_ZONES);
  await writeFile(join(dir, 'keys.json'), JSON.stringify(defaultKeysJson()));
});
afterEach(async () => {
  await proc?.kill();
  proc = undefined;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** One request on a fresh connection (so a closed listener shows as a refused connection). */
function get(url: string, key: string | null = TEST_KEY): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close', ...(key === null ? {} : { 'x-api-key': key }) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const serve = (drainSeconds: number, extra: string[] = []): Promise<ServeProcess> =>
  startServeProcess([
    ...extra,
    '--source',
    join(dir, 'src'),
    '--keys',
    join(dir, 'keys.json'),
    '--workers',
    '2',
    '--refresh-interval',
    '0',
    '--drain-seconds',
    String(drainSeconds),
  ]);

describe('pitcache serve on SIGTERM', () => {
  it('fails readiness at once, answers data requests through the drain, then closes and exits 0 within its bound', async () => {
    proc = await serve(3, ['--metrics-port', '0', '--datasets', 'pemi/*,glmi/*']);
    const p = proc;
    expect(await get(`${p.url}/readyz`, null)).toBe(200);
    expect(await get(`${p.url}/pemi/grid_stress`)).toBe(200);
    // The flags reach the server: a shard, and a keyless metrics port.
    expect(await get(`${p.url}/gbsi_eu/system_stress`)).toBe(404);
    expect(p.metricsPort).not.toBeNull();
    expect(await get(`http://127.0.0.1:${p.metricsPort}/metrics`, null)).toBe(200);

    const signalledAt = Date.now();
    p.child.kill('SIGTERM');
    await p.waitLog((l) => l.msg === 'draining');
    // Readiness fails on every serving thread (fresh connections land on either).
    const ready: number[] = [];
    const data: number[] = [];
    while (Date.now() - signalledAt < 1200) {
      ready.push(await get(`${p.url}/readyz`, null));
      data.push(await get(`${p.url}/pemi/grid_stress`));
    }
    expect(ready.length).toBeGreaterThan(4);
    expect(new Set(ready)).toEqual(new Set([503]));
    expect(new Set(data)).toEqual(new Set([200]));
    // Scrapers still reach the metrics port while the replica drains.
    expect(await get(`http://127.0.0.1:${p.metricsPort}/metrics`, null)).toBe(200);

    const { code, signal } = await p.exited;
    const took = Date.now() - signalledAt;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    // Not before the drain, and well within drain + grace (10 s) + close bound (5 s).
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(took).toBeLessThan(3000 + 10_000);
    const events = p.logs().map((l) => l.msg);
    expect(events.indexOf('draining')).toBeLessThan(events.indexOf('closing listeners'));
    expect(events.at(-1)).toBe('stopped');
    expect(p.logs().find((l) => l.msg === 'draining')).toMatchObject({ signal: 'SIGTERM', drain_seconds: 3 });
    // The listeners are gone.
    await expect(get(`${p.url}/healthz`, null)).rejects.toThrow(/ECONNREFUSED/);
  }, 60_000);

  it('exits at once on a second signal during the drain', async () => {
    proc = await serve(60);
    const p = proc;
    p.child.kill('SIGTERM');
    await p.waitLog((l) => l.msg === 'draining');
    expect(await get(`${p.url}/readyz`, null)).toBe(503);
    const second = Date.now();
    p.child.kill('SIGINT');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - second).toBeLessThan(3000);
    expect(p.logs().at(-1)).toMatchObject({ msg: 'second signal: exiting now', signal: 'SIGINT', phase: 'draining' });
  }, 60_000);
});
