// GET /explore over a real socket (contract 17): the page and every asset it loads come
// from this server, with no key; nothing it references lives on another host.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORE_CSP } from '../src/api/explore-routes.js';
import { pitSnapshot } from './support/fixtures.js';
import { startHarness, TEST_KEY, type Harness } from './support/harness.js';

const PAGE = new URL('../src/explore/page/', import.meta.url);
const UPLOT = (name: string): string => createRequire(import.meta.url).resolve(`uplot/dist/${name}`);

/** What a file's bytes should be, by the address the page loads it from. */
function source(asset: string): Buffer {
  return asset.startsWith('uPlot.') ? readFileSync(UPLOT(asset)) : readFileSync(new URL(asset, PAGE));
}

/** Every address index.html and the modules load (src=, href=, import ... from), but the inline icon. */
function referenced(text: string): string[] {
  return [...text.matchAll(/(?:src|href)="([^"#]+)"|from '([^']+)'/g)].map((m) => (m[1] ?? m[2])!).filter((ref) => ref !== 'data:,');
}

describe('GET /explore', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [
        {
          productId: 'gbsi_eu',
          dataset: 'system_stress',
          spec: pitSnapshot(['country'], [{ date: '2026-03-01', eff: '2026-03-02', obs: '2026-03-02T08:00:00Z', key: { country: 'DE' }, tag: 'a', value: 1 }]),
        },
      ],
    });
  });
  afterAll(() => h.close());

  it('serves the page without a key, as HTML, with a policy that allows only this server', async () => {
    const r = await h.get('/explore', null);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toBe(EXPLORE_CSP);
    expect(EXPLORE_CSP).toMatch(/default-src 'none'/);
    for (const d of ['script-src', 'style-src', 'connect-src']) expect(EXPLORE_CSP).toContain(`${d} 'self'`);
    expect(EXPLORE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.text).toBe(source('index.html').toString('utf8'));
    expect(r.text).toContain('<label for="key-input">API key</label>');
  });

  it('serves every asset the page and its modules load, from this server, with its type', async () => {
    const html = (await h.get('/explore', null)).text;
    // An empty icon in the page itself: the browser asks for no /favicon.ico (a 401: every path but the page's needs a key).
    expect(html).toContain('<link rel="icon" href="data:," />');
    const seen = new Set<string>();
    expect(referenced(html)).toEqual(['explore/uPlot.min.css', 'explore/explore.css', 'explore/uPlot.iife.min.js', 'explore/main.js']);
    /** [address, the address of what referenced it] */
    const queue: Array<readonly [string, string]> = referenced(html).map((ref) => [ref, 'http://x/explore']);
    while (queue.length > 0) {
      const [ref, base] = queue.shift()!;
      // Relative addresses only: the page works under any prefix and never leaves its host.
      expect(ref).not.toMatch(/^(\/|[a-z]+:)/i);
      const url = new URL(ref, base);
      const path = url.pathname;
      if (seen.has(path)) continue;
      seen.add(path);
      const r = await h.get(path, null);
      expect(r.status, path).toBe(200);
      const name = path.slice('/explore/'.length);
      expect(Buffer.from(r.text), path).toEqual(source(name));
      expect(r.headers.get('content-type'), path).toBe(name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      if (name.endsWith('.js') && !name.startsWith('uPlot.')) queue.push(...referenced(r.text).map((m) => [m, url.href] as const));
    }
    expect([...seen].sort()).toEqual(
      ['api.js', 'chart.js', 'explore.css', 'main.js', 'requests.js', 'series.js', 'state.js', 'uPlot.iife.min.js', 'uPlot.min.css'].map(
        (n) => `/explore/${n}`,
      ),
    );
  });

  it('answers HEAD, refuses other methods with 405, and an unknown asset is a 404 to a keyed caller, a 401 to others', async () => {
    const head = await h.get('/explore', null, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const post = await h.get('/explore', null, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await h.get('/explore/nope.js', TEST_KEY)).status).toBe(404);
    expect((await h.get('/explore/tsconfig.json', TEST_KEY)).status).toBe(404);
    expect((await h.get('/explore/nope.js', null)).status).toBe(401);
    // The data route is untouched by the page's paths.
    expect((await h.get('/gbsi_eu/system_stress?country=DE', TEST_KEY)).body.count).toBe(1);
  });
});
