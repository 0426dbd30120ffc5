/**
 * `GET /explore`: the explorer page and its assets (docs/explore.md; contract 17). The page
 * is plain browser JavaScript and CSS in ./page, shipped as it is (the build copies the
 * folder next to this module), and uPlot's own dist files from the `uplot` dependency: no
 * asset comes from another host, so the page works offline and behind a firewall. They are
 * read once, when the routes are made; no key is needed to load them (the page asks for one
 * and sends it on its API calls).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { route, type AnyRoute, type RouteAnswer } from './router.js';

/** The page's folder, src/explore/page: in src/ (tests) as in dist/ (the build copies it). */
const PAGE_DIR = fileURLToPath(new URL('../explore/page/', import.meta.url));

/** uPlot's files the page loads, by the name it loads them under. */
const UPLOT_FILES = ['uPlot.iife.min.js', 'uPlot.min.css'];

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * Only this server's own files and API; nothing inline, nothing from elsewhere. uPlot
 * styles its elements through the DOM (element.style), which style-src does not govern.
 * Downloads are blob: URLs the page makes from its own fetches.
 */
export const EXPLORE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface ExploreAsset {
  readonly contentType: string;
  readonly body: Uint8Array;
}

/** The page (`''`) and every asset (`main.js`, `uPlot.min.css`...) by the name the page asks for. */
export function exploreAssets(): ReadonlyMap<string, ExploreAsset> {
  const assets = new Map<string, ExploreAsset>();
  const add = (name: string, path: string): void => {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type === undefined) return;
    assets.set(name === 'index.html' ? '' : name, { contentType: type, body: readFileSync(path) });
  };
  for (const name of readdirSync(PAGE_DIR)) add(name, join(PAGE_DIR, name));
  const require = createRequire(import.meta.url);
  for (const name of UPLOT_FILES) add(name, require.resolve(`uplot/dist/${name}`));
  if (!assets.has('')) throw new Error(`the explorer page is missing: no index.html in ${PAGE_DIR}`);
  return assets;
}

let loaded: ReadonlyMap<string, ExploreAsset> | null = null;

/** `GET /explore` and `GET /explore/{file}`, public (the page asks for the key itself). */
export function exploreRoutes(): AnyRoute[] {
  loaded ??= exploreAssets();
  const assets = loaded;
  const answer = (a: ExploreAsset): RouteAnswer => ({
    status: 200,
    contentType: a.contentType,
    body: a.body,
    headers: [
      ['cache-control', 'no-cache'],
      ['content-security-policy', EXPLORE_CSP],
      ['x-content-type-options', 'nosniff'],
      ['referrer-policy', 'no-referrer'],
    ],
  });
  return [
    route({ method: 'GET', pattern: '/explore', public: true, handler: () => answer(assets.get('')!) }),
    route<ExploreAsset>({
      method: 'GET',
      pattern: '/explore/{file}',
      public: true,
      bind: (p) => (p.file === '' ? null : (assets.get(p.file!) ?? null)),
      handler: (_r, asset) => answer(asset),
    }),
  ];
}
