// The ceiling server's allocation counters (bench/servers/ceiling-server.ts): the bench reads
// them as it reads pitcache's /metrics (bench/lib/gc-scrape.ts), to show what HTTP alone
// allocates per request next to what pitcache allocates (issue 11.3).
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, get as httpGet } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib/proc.js';
import { scrapeGc } from '../bench/lib/gc-scrape.js';

const BYTES = 3000;
let server: ChildProcess;
let base = '';

/** GET over HTTP/1.1 (uWS answers no HTTP/1.0), on `agent`'s keep-alive connection when given. */
function get(path: string, agent?: Agent): Promise<{ status: number; body: Buffer }> {
  return new Promise((done, fail) => {
    httpGet(`${base}${path}`, agent === undefined ? {} : { agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', fail);
    }).on('error', fail);
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/ceiling-server.ts', '--port', String(port), '--bytes', String(BYTES), '--workers', '2'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 200; i++) {
    const up = await get('/ping').then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('ceiling server did not start');
}, 30_000);

afterAll(() => {
  server?.kill();
});

describe('the ceiling server', () => {
  it('answers every other path with the fixed body', async () => {
    for (const path of ['/', '/gbsi_us/system_stress?as_of=2026-01-02', '/metricsx', '/metrics/x']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.body.length, path).toBe(BYTES);
      expect(r.body[0]).toBe(0x7b);
      expect(r.body[BYTES - 1]).toBe(0x7d);
    }
  });

  it("reports both threads' allocation and collections under pitcache's metric names, growing with the requests it answers", async () => {
    const text = (await get('/metrics')).body.toString('utf8');
    for (const thread of ['0', '1']) {
      expect(text).toMatch(new RegExp(`^pitcache_heap_allocated_bytes_total\\{thread="${thread}"\\} \\d+`, 'm'));
      for (const kind of ['scavenge', 'mark_compact', 'incremental', 'weak_callbacks']) {
        expect(text).toContain(`pitcache_gc_total{thread="${thread}",kind="${kind}"} `);
        expect(text).toContain(`pitcache_gc_pause_seconds_total{thread="${thread}",kind="${kind}"} `);
      }
    }
    const before = await scrapeGc(base, 'no key needed');
    expect(before).not.toBeNull();
    // Several connections, so that both threads answer some (SO_REUSEPORT spreads connections).
    const agents = Array.from({ length: 8 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    await Promise.all(
      agents.map(async (a) => {
        for (let i = 0; i < 300; i++) await get(`/q?i=${i}`, a);
      }),
    );
    for (const a of agents) a.destroy();
    // Another thread publishes its totals within 50 ms.
    await new Promise((r) => setTimeout(r, 120));
    const after = await scrapeGc(base, 'no key needed');
    expect(after!.allocatedBytes).toBeGreaterThan(before!.allocatedBytes);
    expect(after!.scavenges).toBeGreaterThanOrEqual(before!.scavenges);
  }, 30_000);
});
