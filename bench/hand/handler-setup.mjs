/* global process */
// pitcache's API handler on the bench data, in this process and on this thread, as one
// serving thread of `pitcache serve` has it (no socket, a manual clock), and a workload's
// paths as the requests the transport would hand it. Shared by in-process.mjs and budget.mjs.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const here = resolve(import.meta.dirname, '../..');

/**
 * The handler of the checkout at `root` (dist/ built), with a response cache of
 * responseCacheMiB and a row arena of rowMiB, over the bench data at `data`.
 */
export async function benchHandler(root, { responseCacheMiB, rowMiB, data = process.env.DATA ?? `${here}/bench/.data/main` }) {
  const load = (p) => import(`${root}/dist/${p}`);
  const { KeyRegistry } = await load('src/auth/key-registry.js');
  const { parseKeysFile } = await load('src/auth/keys-file.js');
  const { RateLimiter } = await load('src/auth/rate-limiter.js');
  const { silentLogger } = await load('src/log/logger.js');
  const { createApiHandler } = await load('src/api/api-handler.js');
  const { DatasetRegistry } = await load('src/generations/dataset-registry.js');
  const { buildGeneration } = await load('src/generations/load-generation.js');
  const { inlineBuilder } = await load('src/generations/table-builder.js');
  const { RequestIds } = await load('src/api/request-ids.js');
  const { ManualClock } = await load('src/time/clock.js');

  const registry = new DatasetRegistry();
  const clock = new ManualClock(Date.UTC(2026, 10, 20));
  for (const product of readdirSync(data)) {
    if (product.endsWith('.json') || product.startsWith('.')) continue;
    for (const dataset of readdirSync(`${data}/${product}`)) {
      const slot = registry.byName(`${product}/${dataset}`);
      const manifest = JSON.parse(readFileSync(`${data}/${product}/${dataset}/manifest.json`, 'utf8'));
      const bytes = new Uint8Array(readFileSync(`${data}/${product}/${dataset}/${manifest.object}`));
      slot.swap((await buildGeneration(bytes, slot, manifest, clock, inlineBuilder)).generation);
    }
  }
  registry.markReady();
  const keys = new KeyRegistry(parseKeysFile(readFileSync(`${data}/keys.json`, 'utf8'), 'keys.json'));
  return createApiHandler({
    registry,
    keys,
    limiter: new RateLimiter(keys, clock),
    clock,
    ids: new RequestIds(),
    log: silentLogger,
    responseCacheBytes: responseCacheMiB << 20,
    rowCacheBytes: rowMiB * 2 ** 20,
    pageCacheBytes: Number(process.env.PAGE_MIB ?? 32) * 2 ** 20,
  });
}

/** A workload's paths file (bench/hand/paths.mjs) as the requests the transport hands the handler, with the bench key. */
export function benchRequests(workload, paths = process.env.PATHS_DIR ?? `${here}/bench/.data/paths`) {
  return readFileSync(`${paths}/${workload}.paths`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const q = line.indexOf('?');
      const path = q < 0 ? line : line.slice(0, q);
      return { method: 'GET', path, rawQuery: q < 0 ? '' : line.slice(q + 1), apiKey: 'pitcache-bench-key', accept: '', acceptEncoding: '', ifNoneMatch: '' };
    });
}
