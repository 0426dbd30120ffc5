// The explorer page in a real browser (contract 17): Debian's chromium opens permalinks
// on the demo data set served by a real server, and reads the page as a user would: the
// legend, the lines' colours on the chart, the floor, a date's revision history, the
// downloads, the messages. No request may go to another host, and no console error may
// show (but the refused key's own 401).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, demoKeysConfig, ensureDemoData } from '../src/demo/index.js';
import { LocalSource } from '../src/source/local-source.js';
import { silentLogger } from '../src/log/logger.js';
import { startServer, type RunningServer } from '../src/threads/start.js';
import { openBrowser, type Browser } from './support/browser.js';
import { TEST_SERVER } from './support/harness.js';

/** The contract's example link, with `current` and the demo's documented restatement (src/demo/README.md). */
const PERMALINK =
  '/explore?product=gbsi_eu&dataset=system_stress&series=country:DE&column=stress_index&as_of=2026-02-01,2026-02-18,current&date_from=2026-01-01&date_to=2026-02-28';

let dir: string;
let server: RunningServer;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-explore-'));
  await ensureDemoData(dir, silentLogger);
  server = await startServer({ ...TEST_SERVER, source: new LocalSource(dir), keys: demoKeysConfig(), host: '127.0.0.1', port: 0, build: 'inline' });
  origin = `http://127.0.0.1:${server.port}`;
  browser = await openBrowser(origin);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A new tab at `path` that answers the key prompt with `key`. */
async function openWithKey(path: string, key: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await browser.newPage(viewport);
  await page.goto(origin + path);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  return page;
}

/**
 * The page's globals, as far as these checks read them: the tests' TypeScript has no DOM
 * library. Used inside page.evaluate callbacks, which run in the page (the cast is gone
 * once the test is compiled).
 */
interface InPage {
  document: {
    querySelector(selector: string): {
      width: number;
      height: number;
      getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
    };
    activeElement: { id: string } | null;
    documentElement: { scrollWidth: number };
  };
  sessionStorage: { getItem(key: string): string | null };
  getComputedStyle(e: unknown): { backgroundColor: string };
}

const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allInnerTexts();

/** Pixels of the chart's canvas within a small distance of each colour (the lines a reader sees). */
function pixelsOf(page: Page, colours: string[]): Promise<number[]> {
  return page.evaluate((cs) => {
    const canvas = (globalThis as unknown as InPage).document.querySelector('#chart canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const rgb = cs.map((c) => c.match(/\d+/g)!.slice(0, 3).map(Number));
    const counts = rgb.map(() => 0);
    for (let i = 0; i < data.length; i += 4) {
      rgb.forEach(([r, g, b], k) => {
        if (Math.abs(data[i]! - r!) + Math.abs(data[i + 1]! - g!) + Math.abs(data[i + 2]! - b!) < 24 && data[i + 3]! > 200) counts[k]!++;
      });
    }
    return counts;
  }, colours);
}

/** Clicks the chart where `date` is (uPlot's plot area spans the first to the last date shown). */
async function clickDate(page: Page, date: string, first: string, last: string): Promise<void> {
  const box = (await page.locator('#chart .u-over').boundingBox())!;
  const t = (d: string): number => Date.parse(`${d}T00:00:00Z`);
  const x = box.x + ((t(date) - t(first)) / (t(last) - t(first))) * box.width;
  await page.mouse.click(x, box.y + box.height / 2);
}

describe('the explorer page in chromium, on the demo', () => {
  it('asks for the key once, then draws one line per as_of with its legend, the floor, and a clicked date’s revisions', async () => {
    const errorsBefore = browser.errors.length;
    const page = await browser.newPage();
    await page.goto(origin + PERMALINK);
    await expect.poll(() => page.locator('#messages').innerText()).toContain('Enter an API key');
    expect(await page.locator('#chart').innerText()).toContain('No chart yet: no API key.');
    await page.getByLabel('API key').fill(DEMO_KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(() => texts(page, '#legend li')).toEqual(['as_of 2026-02-01', 'as_of 2026-02-18', 'current (no as_of)']);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.getItem('pitcache.key'))).toBe(DEMO_KEY);
    // The link is the view: the state it names is written back unchanged.
    expect(new URL(page.url()).search).toBe(PERMALINK.slice('/explore'.length));
    expect(await page.locator('#chart-title').innerText()).toBe('stress_index of gbsi_eu/system_stress, country:DE, 2026-01-01 to 2026-02-28');

    // Each line shows in its own colour, the oldest too: none hides under `current`.
    const colours = await page
      .locator('#legend .swatch')
      .evaluateAll((els) => els.map((e) => (globalThis as unknown as InPage).getComputedStyle(e).backgroundColor));
    expect(new Set(colours).size).toBe(3);
    const pixels = await pixelsOf(page, colours);
    // (Drawn the other way round, `current` on top at one width, the two older lines keep
    // under 200 pixels each, 4% of current's; drawn as the page does, over 1,000 and 20%.)
    for (const [i, n] of pixels.entries())
      expect(n, `pixels of ${colours[i]} of ${pixels.join(', ')}`).toBeGreaterThan(Math.max(500, 0.1 * Math.max(...pixels)));

    // The vintage floor: on the chart, as text, and under it.
    await expect.poll(() => page.locator('#chart .floor-mark').isVisible()).toBe(true);
    expect(await page.locator('#chart .floor-mark').innerText()).toBe('vintage floor 2026-01-13');
    expect(await page.locator('#floor-label').innerText()).toContain('Vintage floor 2026-01-13');

    // A click on 2026-01-30: first print 56, restated 56.73, then 56.83 (src/demo/README.md).
    await clickDate(page, '2026-01-30', '2026-01-01', '2026-02-28');
    await expect.poll(() => page.locator('#revisions-title').innerText()).toBe('Revision history of stress_index on 2026-01-30 (country:DE): 3 version(s)');
    const rows = await page.locator('#revision-rows tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(['56', '56.73', '56.83']);
    expect(rows[0]![2]).toBe(rows[1]![1]);
    expect(rows[1]![2]).toBe(rows[2]![1]);
    expect(rows[2]![2]).toBe('still the answer');
    expect(await page.locator('#revision-chart canvas').count()).toBeGreaterThan(0);

    // The same by keyboard: a date typed into its labelled field.
    await page.getByLabel('Revision history of date').fill('2026-01-20');
    await page.getByLabel('Revision history of date').press('Enter');
    await expect.poll(() => page.locator('#revisions-title').innerText()).toContain('on 2026-01-20');

    expect(browser.errors.slice(errorsBefore)).toEqual([]);
    await page.close();
  });

  it('downloads the CSV of a line: the rows drawn for that as_of', async () => {
    const page = await openWithKey(PERMALINK, DEMO_KEY);
    await expect.poll(() => texts(page, '#legend li')).toHaveLength(3);
    const item = page.locator('#downloads li', { hasText: 'as_of 2026-02-01' });
    const [download] = await Promise.all([page.waitForEvent('download'), item.getByRole('link', { name: 'CSV' }).click()]);
    const rows = parse(readFileSync((await download.path())!), { columns: true }) as Array<Record<string, string>>;
    expect(download.suggestedFilename()).toBe('gbsi_eu_system_stress_country_DE_stress_index_2026-02-01.csv');
    expect(Object.keys(rows[0]!)).toEqual(['date', 'country', 'stress_index']);
    expect(rows.every((r) => r.country === 'DE' && r.date! >= '2026-01-01' && r.date! <= '2026-02-01')).toBe(true);
    expect(rows.find((r) => r.date === '2026-01-30')?.stress_index).toBe('56');
    await page.close();
  });

  it('a wrong key: the 401 is named on the page, no chart, and the key is asked again', async () => {
    const page = await openWithKey(PERMALINK, 'not-a-key');
    await expect.poll(() => page.locator('#messages .error').innerText()).toContain('401 Unauthorized');
    expect(await page.locator('#chart').innerText()).toContain('No chart: 401 Unauthorized');
    expect(await page.getByLabel('API key').isVisible()).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.getItem('pitcache.key'))).toBeNull();
    // The browser's own line for the refused call is the only console error.
    expect(browser.errors.filter((e) => e.startsWith(`${origin}/explore`) && !e.includes('status of 401'))).toEqual([]);
    await page.close();
  });

  it('an unknown dataset or series is a message naming it, never a blank chart', async () => {
    const page = await openWithKey('/explore?product=gbsi_eu&dataset=nope&column=stress_index', DEMO_KEY);
    await expect.poll(() => page.locator('#messages .error').innerText()).toContain('Unknown dataset gbsi_eu/nope');
    expect(await page.locator('#chart').innerText()).toContain('No chart: Unknown dataset gbsi_eu/nope');
    await page.goto(`${origin}/explore?product=gbsi_eu&dataset=system_stress&series=country:XX`);
    await expect.poll(() => page.locator('#messages .error').innerText()).toContain('Unknown series country:XX in gbsi_eu/system_stress');
    await page.close();
  });

  it("an error the API answers is the page's message, with its status and code, in place of the chart", async () => {
    // 2026-02-30 passes the page's shape check; the server refuses it.
    const page = await openWithKey('/explore?product=gbsi_eu&dataset=system_stress&series=country:DE&column=stress_index&as_of=2026-02-30', DEMO_KEY);
    await expect
      .poll(() => page.locator('#messages .error').innerText())
      .toMatch(/^400 invalid_parameter for gbsi_eu\/system_stress as_of 2026-02-30: as_of must be .*; record req_\w+\.$/);
    expect(await page.locator('#chart').innerText()).toMatch(/^No chart: 400 invalid_parameter/);
    expect(await page.locator('#chart canvas').count()).toBe(0);
    await page.close();
  });

  it('a narrow screen: nothing wider than the screen; every control is labelled and reached by Tab', async () => {
    const page = await openWithKey(PERMALINK, DEMO_KEY, { width: 390, height: 844 });
    await expect.poll(() => texts(page, '#legend li')).toHaveLength(3);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect((await page.locator('#chart canvas').boundingBox())!.width).toBeLessThanOrEqual(390);
    const controls = ['dataset', 'series', 'column', 'date-from', 'date-to', 'as-of'];
    for (const id of controls) expect(await page.locator(`label[for="${id}"]`).count(), id).toBe(1);
    await page.locator('#change-key').focus();
    const reached: string[] = [];
    for (let i = 0; i < 30 && reached.length < controls.length; i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.id ?? '');
      if (controls.includes(id) && !reached.includes(id)) reached.push(id);
    }
    expect(reached).toEqual(controls);
    await page.close();
  });

  it('asked nothing of any other host', () => {
    expect(browser.requests.length).toBeGreaterThan(20);
    expect(browser.requests.filter((r) => !r.startsWith(`127.0.0.1:${server.port} `))).toEqual([]);
    expect(browser.requests).toContain(`127.0.0.1:${server.port} /explore/uPlot.iife.min.js`);
  });
});
