/**
 * The shipped proxy configs (deploy/nginx/pitcache.conf, deploy/haproxy/haproxy.cfg) in
 * front of real pitcache servers, run by Debian's nginx and HAProxy (issue 14). The files
 * are used as shipped; only what their headers tell ops to edit is filled in (the listen
 * port and one upstream line per replica). Through each: data in JSON and Arrow, a cursor
 * chain, a 429 with its headers, a HEAD; HTTP/1.0 clients answered by nginx although
 * pitcache itself never answers HTTP/1.0; failed-key throttling that follows the forwarded
 * address behind a trusted proxy; and a draining replica taken out of HAProxy's rotation
 * before it stops answering, with no failed request.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';

const root = new URL('..', import.meta.url).pathname;
const LIMITED_KEY = 'test-key-limited';
const KEYS = defaultKeysJson([{ id: 'limited', key: LIMITED_KEY, products: ['*'], rate_limit: { per_second: 0.5, burst: 1 } }]);
const PAGE = '/pemi/grid_stress?latest=false&limit=4';

const rows: PitRow[] = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04', '2026-04-05'].flatMap((date) =>
  ['DE', 'FR'].map((z): PitRow => ({ key: { bidding_zone: z }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `${date}/${z}` })),
);
const dataset = { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(
  port: number,
  path: string,
  opts: { key?: string | null; method?: string; localAddress?: string; headers?: Record<string, string> } = {},
): Promise<Got> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? TEST_KEY : opts.key;
    if (key !== null) headers['x-api-key'] = key;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        headers,
        agent: false,
        ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const json = (g: Got): Record<string, unknown> => JSON.parse(g.body.toString('utf8')) as Record<string, unknown>;

/** A raw HTTP/1.0 request; resolves to the status line, or null when nothing came back within `waitMs`. */
function http10(port: number, path: string, waitMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const s = new Socket();
    let got = '';
    const done = (v: string | null): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(null), waitMs);
    s.connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.0\r\nx-api-key: ${TEST_KEY}\r\n\r\n`));
    s.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if (got.includes('\r\n')) done(got.slice(0, got.indexOf('\r\n')));
    });
    s.on('error', () => done(null));
  });
}

/** Every page of a cursor chain from `first`, through `port`. */
async function chain(port: number): Promise<string[]> {
  const tags: string[] = [];
  let path: string | null = PAGE;
  while (path !== null) {
    const page = await get(port, path);
    expect(page.status, page.body.toString()).toBe(200);
    const body = json(page);
    tags.push(...(body['data'] as Array<{ tag: string }>).map((r) => r.tag));
    path = body['has_more'] === true ? `${PAGE}&cursor=${encodeURIComponent(body['next_cursor'] as string)}` : null;
  }
  return tags;
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function need(binary: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${binary} || ls /usr/sbin/${binary}`], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')[0];
  if (!found) throw new Error(`${binary} is not installed: apt-get install -y ${binary} (.ci/run installs it)`);
  return found;
}

/** Data rows served through a proxy must equal the server's own. */
async function exercise(proxyPort: number, direct: Harness): Promise<void> {
  const viaProxy = await get(proxyPort, PAGE);
  expect(viaProxy.status).toBe(200);
  expect(json(viaProxy)['data']).toEqual((await direct.get(PAGE)).body.data);
  const arrow = await get(proxyPort, `${PAGE}&format=arrow`);
  expect(arrow.headers['content-type']).toBe('application/vnd.apache.arrow.stream');
  expect([...tableFromIPC(arrow.body).getChild('tag')!]).toEqual(rows.slice(0, 4).map((r) => r.tag));
  expect(await chain(proxyPort)).toEqual(rows.map((r) => r.tag));
  const head = await get(proxyPort, PAGE, { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(head.body.length).toBe(0);
  expect(head.headers['content-type']).toBe('application/json');
  // A rate-limited key (burst 1, per replica): within a few requests one is 429, headers intact.
  let limited = await get(proxyPort, PAGE, { key: LIMITED_KEY });
  expect(limited.status).toBe(200);
  for (let i = 0; i < 4 && limited.status === 200; i++) limited = await get(proxyPort, PAGE, { key: LIMITED_KEY });
  expect(limited.status).toBe(429);
  expect(json(limited)['error']).toMatchObject({ status: 429, code: 'rate_limited' });
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  expect(limited.headers['ratelimit-limit']).toBeDefined();
  expect(limited.headers['ratelimit-remaining']).toBe('0');
}

describe('deploy/nginx/pitcache.conf with Debian nginx', () => {
  let dir: string;
  let nginx: ChildProcess;
  let server: Harness;
  let port: number;

  beforeAll(async () => {
    const bin = need('nginx');
    // Behind nginx on this host: its address is trusted, so the forwarded address is the client.
    server = await startHarness({
      keys: KEYS,
      datasets: [dataset],
      server: { trustedProxies: '127.0.0.1/32', authFailLimit: { count: 3, windowMs: 60_000 } },
    });
    dir = await mkdtemp(join(tmpdir(), 'pitcache-nginx-'));
    port = await freePort();
    const shipped = await readFile(join(root, 'deploy/nginx/pitcache.conf'), 'utf8');
    const filled = shipped
      .replace(/^(\s*)server 127\.0\.0\.1:8080;$/m, `$1server 127.0.0.1:${server.server.port};`)
      .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`);
    expect(filled).not.toBe(shipped);
    await writeFile(join(dir, 'pitcache.conf'), filled);
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ');
    await writeFile(
      join(dir, 'nginx.conf'),
      `user root; daemon off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;\nevents { worker_connections 256; }\nhttp { access_log off; ${temp} include ${dir}/pitcache.conf; }\n`,
    );
    nginx = spawn(bin, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'ignore' });
    await waitFor('nginx', async () => (await get(port, '/healthz', { key: null })).status === 200);
  }, 60_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers data, Arrow, a cursor chain, a 429 with its headers and HEAD, as the server does', async () => {
    await exercise(port, server);
  });

  it('answers HTTP/1.0 clients, which pitcache itself leaves unanswered', async () => {
    expect(await http10(server.server.port, '/healthz', 1500)).toBeNull();
    expect(await http10(port, '/healthz', 5000)).toMatch(/^HTTP\/1\.[01] 200/);
    expect(await http10(port, PAGE, 5000)).toMatch(/^HTTP\/1\.[01] 200/);
  });

  it('with nginx in --trusted-proxies, failed keys are throttled by the forwarded client address', async () => {
    for (let i = 0; i < 3; i++) expect((await get(port, PAGE, { key: `wrong-${i}`, localAddress: '127.0.0.2' })).status).toBe(401);
    const refused = await get(port, PAGE, { key: TEST_KEY, localAddress: '127.0.0.2' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    // Another client behind the same nginx is not affected, nor is nginx's own address.
    expect((await get(port, PAGE, { key: TEST_KEY, localAddress: '127.0.0.3' })).status).toBe(200);
    expect((await get(port, PAGE, { key: TEST_KEY })).status).toBe(200);
  });
});

/** Data requests a server answered (pitcache_requests_total of the data endpoint), from its metrics. */
async function rowsServed(h: Harness): Promise<number> {
  const text = (await h.get('/metrics', ADMIN_KEY)).text;
  let n = 0;
  for (const m of text.matchAll(/^pitcache_requests_total\{([^}]*)\} (\d+)$/gm)) if (m[1]!.includes('endpoint="data"')) n += Number(m[2]);
  return n;
}

describe('deploy/haproxy/haproxy.cfg with Debian HAProxy', () => {
  let dir: string;
  let haproxy: ChildProcess;
  let a: Harness;
  let b: Harness;
  let port: number;
  let aClosed = false;

  beforeAll(async () => {
    const bin = need('haproxy');
    const started = await Promise.all([0, 1].map(() => startHarness({ keys: KEYS, datasets: [dataset] })));
    a = started[0]!;
    b = started[1]!;
    dir = await mkdtemp(join(tmpdir(), 'pitcache-haproxy-'));
    port = await freePort();
    const shipped = await readFile(join(root, 'deploy/haproxy/haproxy.cfg'), 'utf8');
    const servers = [a, b].map((h, i) => `    server pitcache-${i + 1} 127.0.0.1:${h.server.port} check`).join('\n');
    const filled = shipped.replace(/^ {4}bind :8080$/m, `    bind 127.0.0.1:${port}`).replace(/(^ {4}server pitcache-\d+ .*\n?)+/m, `${servers}\n`);
    expect(filled.match(/^ {4}server /gm)).toHaveLength(2);
    await writeFile(join(dir, 'haproxy.cfg'), filled);
    expect(spawnSync(bin, ['-c', '-f', join(dir, 'haproxy.cfg')]).status).toBe(0);
    haproxy = spawn(bin, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
    haproxy.stderr!.on('data', (c: Buffer) => process.stderr.write(`haproxy: ${c.toString()}`));
    // Both replicas in rotation: requests reach each of them.
    await waitFor('haproxy to send to both replicas', async () => {
      for (let i = 0; i < 4; i++) await get(port, PAGE);
      return (await rowsServed(a)) > 0 && (await rowsServed(b)) > 0;
    });
  }, 60_000);

  afterAll(async () => {
    haproxy?.kill('SIGTERM');
    await Promise.all([aClosed ? null : a?.close(), b?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers data, Arrow, a cursor chain across both replicas, a 429 with its headers and HEAD', async () => {
    const [beforeA, beforeB] = [await rowsServed(a), await rowsServed(b)];
    await exercise(port, a);
    // Round robin: the chain's pages and the other requests went to both replicas.
    expect(await rowsServed(a)).toBeGreaterThan(beforeA + 2);
    expect(await rowsServed(b)).toBeGreaterThan(beforeB + 2);
  });

  it('answers HTTP/1.0 clients at once with 505, instead of forwarding what pitcache would never answer', async () => {
    expect(await http10(port, '/healthz', 5000)).toMatch(/^HTTP\/1\.[01] 505/);
  });

  it('takes a draining replica out of rotation before it stops answering: no request fails', async () => {
    let failed = 0;
    let answered = 0;
    let stop = false;
    const load = (async () => {
      // Bounded: at most 2,000 requests, and only until the test says stop.
      for (let i = 0; i < 2000 && !stop; i++) {
        const r = await get(port, PAGE).catch(() => null);
        if (r?.status === 200) answered++;
        else failed++;
        await new Promise((res) => setTimeout(res, 5));
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    // SIGTERM's first step: /readyz answers 503 while requests are still answered.
    a.server.drain();
    expect((await a.get('/readyz', null)).status).toBe(503);
    expect((await a.get(PAGE)).status).toBe(200);
    // HAProxy stops sending to it (2 failed checks, 2 s apart)...
    let last = await rowsServed(a);
    await waitFor(
      'haproxy to stop sending to the draining replica',
      async () => {
        await new Promise((r) => setTimeout(r, 1500));
        const now = await rowsServed(a);
        const quiet = now === last;
        last = now;
        return quiet;
      },
      20_000,
    );
    // ...before it stops answering: now it closes, and the load goes on without failures.
    await a.close();
    aClosed = true;
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await load;
    expect(failed).toBe(0);
    expect(answered).toBeGreaterThan(100);
  }, 60_000);
});
