/**
 * What `pitcache serve --demo` needs: the demo data set in a folder (generated once, then
 * reused) and the demo keys as a validated keys config.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildKeysConfig } from '../auth/keys-file.js';
import type { KeysConfig } from '../auth/keys-file.js';
import type { Logger } from '../log/logger.js';
import { manifestPath } from '../snapshot/manifest.js';
import { DEMO_DATASETS } from './catalog.js';
import { DEMO_END_DATE, DEMO_SEED, generateDemo } from './generate.js';
import { demoKeysFile } from './keys.js';

export { DEMO_KEY, DEMO_EU_KEY, DEMO_ADMIN_KEY } from './keys.js';

/** Written last: its presence with this content means the folder holds this exact demo. */
const STAMP_FILE = '.pitcache-demo.json';
/** The keys file next to the data, so `serve --source <dir> --keys <dir>/keys.json` works too. */
export const DEMO_KEYS_FILE = 'keys.json';
/** A first request to try on the demo (its path and query), logged when the demo server is up. */
export const DEMO_EXAMPLE = '/gbsi_eu/system_stress?country=DE';

export async function ensureDemoData(dir: string, log: Logger, opts?: { endDate?: string }): Promise<void> {
  const endDate = opts?.endDate ?? DEMO_END_DATE;
  const stamp = JSON.stringify({ seed: DEMO_SEED, end_date: endDate }) + '\n';
  if ((await readText(join(dir, STAMP_FILE))) === stamp && (await allManifestsPresent(dir))) {
    log.info('demo data set found', { dir });
    return;
  }
  log.info('generating demo data set', { dir, end_date: endDate, datasets: DEMO_DATASETS.length });
  await mkdir(dir, { recursive: true });
  await generateDemo(dir, { endDate });
  await writeFile(join(dir, DEMO_KEYS_FILE), JSON.stringify(demoKeysFile(), null, 2) + '\n');
  await writeFile(join(dir, STAMP_FILE), stamp);
  log.info('demo data set written', { dir });
}

export function demoKeysConfig(): KeysConfig {
  return buildKeysConfig(demoKeysFile(), 'built-in demo keys');
}

async function allManifestsPresent(dir: string): Promise<boolean> {
  for (const d of DEMO_DATASETS) {
    try {
      await stat(join(dir, manifestPath(d.productId, d.dataset)));
    } catch {
      return false;
    }
  }
  return true;
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}
