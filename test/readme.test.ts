import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_ADMIN_KEY, DEMO_EU_KEY, DEMO_KEY } from '../src/demo/keys.js';
import { optionsMarkdownTable } from '../src/cli/usage.js';
import { silentLogger } from '../src/log/logger.js';
import { serveOptionRows } from '../src/config/serve-config.js';
import { TEST_SERVER } from './support/harness.js';

describe('README tells the truth', () => {
  it('its configuration table is the serve schema, option for option', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(optionsMarkdownTable(serveOptionRows()).trim());
  });

  it('its worked sizing example is its sizing rule, term by term', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const factor = Number(/estimate \*\*([\d.]+) bytes of memory per byte of Arrow\*\*/.exec(readme)![1]);
    const row = (term: string): number =>
      Number(new RegExp(`^\\| (?:\\*\\*)?${term}(?:\\*\\*)? \\|.*\\| (?:\\*\\*)?([\\d.]+) GiB(?:\\*\\*)? \\|$`, 'm').exec(readme)![1]);
    const example = /A worked example: ([\d.]+) GiB of Arrow\*\*, the largest dataset ([\d.]+) GiB/.exec(readme)!;
    const [total, largest] = [Number(example[1]), Number(example[2])];
    const caches = (256 + 256 + 32) / 1024;
    const live = factor * total;
    const refresh = factor * largest;
    const retention = Math.max(0.25 * live, refresh);
    const request = live + caches + 0.1;
    const near = (got: number, want: number, what: string): void =>
      expect(Math.abs(got - want), `${what}: ${got} GiB, the rule gives ${want}`).toBeLessThan(0.051);
    near(row('live generations'), live, 'live');
    near(row('caches'), caches, 'caches');
    near(row('request'), request, 'request');
    near(row('refresh'), refresh, 'refresh');
    near(row('retention'), retention, 'retention');
    near(row('limit'), request + refresh + retention, 'limit');
  });

  it('names the demo keys that the demo really accepts', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const key of [DEMO_KEY, DEMO_EU_KEY, DEMO_ADMIN_KEY]) expect(readme).toContain(key);
  });
});

describe('README examples answer on the demo', () => {
  it('every data URL the README shows is a 200 from a server on the demo data, in the format it names', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { ensureDemoData, demoKeysConfig } = await import('../src/demo/index.js');
    const { LocalSource } = await import('../src/source/local-source.js');
    const { startServer } = await import('../src/threads/start.js');
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const urls = [
      ...new Set(readme.match(/http:\/\/127\.0\.0\.1:8080\/[a-z_]+\/[a-z_]+(\/(?:walk_forward|vintages))?(\?[^'"\s)$]*)?(?=['"\s)])/g) ?? []),
    ].filter((u) => !u.includes('/admin/'));
    expect(urls.length).toBeGreaterThanOrEqual(4);
    expect(urls.filter((u) => u.includes('/walk_forward?')).length, 'walk_forward examples').toBeGreaterThanOrEqual(3);
    expect(
      urls.some((u) => u.includes('/vintages?')),
      'a vintages example',
    ).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'pitcache-readme-'));
    await ensureDemoData(dir, silentLogger);
    const server = await startServer({ ...TEST_SERVER, source: new LocalSource(dir), keys: demoKeysConfig(), host: '127.0.0.1', port: 0, build: 'inline' });
    try {
      for (const url of urls) {
        const r = await fetch(url.replace('http://127.0.0.1:8080', `http://127.0.0.1:${server.port}`), { headers: { 'x-api-key': DEMO_KEY } });
        expect(r.status, url).toBe(200);
        expect(Number(r.headers.get('x-count')), url).toBeGreaterThan(0);
        const format = /format=(\w+)/.exec(url)?.[1] ?? 'json';
        expect(r.headers.get('content-type'), url).toContain(
          { json: 'application/json', csv: 'text/csv', arrow: 'application/vnd.apache.arrow.stream' }[format],
        );
      }
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
