/**
 * The explorer's screenshots in docs/ (the README shows them): the demo data set served by
 * a real server on an ephemeral port, the page opened in Debian's chromium on one permalink:
 * at 1280x800 its first screen (the lines), at a phone's 390x844 one date's revision history.
 *
 *   npx tsx scripts/explore-screenshots.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_KEY, demoKeysConfig, ensureDemoData } from '../src/demo/index.js';
import { LocalSource } from '../src/source/local-source.js';
import { silentLogger } from '../src/log/logger.js';
import { startServer } from '../src/threads/start.js';
import { openBrowser } from '../test/support/browser.js';

export const SCREENSHOT_LINK =
  '/explore?product=gbsi_eu&dataset=system_stress&series=country:DE&column=stress_index&as_of=2026-01-10,2026-02-01,2026-02-18,2026-03-15,current&date_from=2025-12-01&date_to=2026-03-31';
const CLICKED = '2026-01-30';
const DOCS = resolve(import.meta.dirname, '../docs');

const dir = await mkdtemp(join(tmpdir(), 'pitcache-shots-'));
await ensureDemoData(dir, silentLogger);
const server = await startServer({
  source: new LocalSource(dir),
  keys: demoKeysConfig(),
  host: '127.0.0.1',
  port: 0,
  build: 'inline',
  workers: 1,
  accessLog: false,
});
const origin = `http://127.0.0.1:${server.port}`;
const browser = await openBrowser(origin);
try {
  for (const [name, viewport] of [
    ['explore-1280x800.png', { width: 1280, height: 800 }],
    ['explore-390x844.png', { width: 390, height: 844 }],
  ] as const) {
    const page = await browser.newPage(viewport);
    await page.goto(origin + SCREENSHOT_LINK);
    await page.getByLabel('API key').fill(DEMO_KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.locator('#legend li').nth(4).waitFor();
    if (viewport.width < 600) {
      await page.getByLabel('Revision history of date').fill(CLICKED);
      await page.getByLabel('Revision history of date').press('Enter');
      await page.locator('#revision-rows tr').first().waitFor();
      await page.getByLabel('Revision history of date').blur();
      await page.locator('#revisions-title').evaluate((e) => e.scrollIntoView());
    }
    await page.screenshot({ path: join(DOCS, name) });
    await page.close();
  }
  if (browser.errors.length > 0) throw new Error(browser.errors.join('\n'));
} finally {
  await browser.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
