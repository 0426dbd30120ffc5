/**
 * Debian's chromium, driven by playwright-core, for the tests that check a page as a user
 * would (scripts/ensure-tools.sh installs it for `npm test`). Each browser gets a fresh
 * profile folder and no network of its own: every request it makes is logged with its
 * host, and one to any host but the server under test is refused.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium (PITCACHE_CHROMIUM overrides it, as it does for scripts/ensure-tools.sh). */
export const CHROMIUM = process.env.PITCACHE_CHROMIUM ?? '/usr/bin/chromium';

/** The flags the browser runs with: headless, and nothing that calls home. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  /** every request the pages made, as `host path` (data: and blob: addresses make none) */
  readonly requests: string[];
  /** console messages of type error and uncaught page errors, with the page's URL */
  readonly errors: string[];
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/** A fresh browser whose pages may reach `origin` only. */
export async function openBrowser(origin: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm test installs Debian's chromium (scripts/ensure-tools.sh)`);
  const profile = mkdtempSync(join(tmpdir(), 'pitcache-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
  });
  const requests: string[] = [];
  const errors: string[] = [];
  const allowed = new URL(origin).host;
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(`${url.host} ${url.pathname}`);
    return url.host === allowed ? route.continue() : route.abort('blockedbyclient');
  });
  const watch = (page: Page): void => {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${page.url()}: console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`${page.url()}: uncaught: ${e.message}`));
  };
  context.on('page', watch);
  for (const p of context.pages()) watch(p);
  return {
    context,
    requests,
    errors,
    async newPage(viewport) {
      const page = await context.newPage();
      if (viewport !== undefined) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
