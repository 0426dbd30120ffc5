/** API keys of the demo (contract 7). Plaintexts are public on purpose: the demo is local only. */
import { createHash } from 'node:crypto';

/** Entitled to every product; the key the README names. */
export const DEMO_KEY = 'pitcache-demo-key';
/** Entitled to gbsi_eu and pemi only (any other product answers 403), and rate limited. */
export const DEMO_EU_KEY = 'pitcache-demo-eu-key';
/** May call the operational endpoints; stored hashed, as production keys are. */
export const DEMO_ADMIN_KEY = 'pitcache-demo-admin-key';

export interface DemoKeyEntry {
  id: string;
  key?: string;
  sha256?: string;
  products: string[];
  rate_limit?: { per_second: number; burst: number };
  admin?: boolean;
}

export function demoKeysFile(): { keys: DemoKeyEntry[] } {
  return {
    keys: [
      { id: 'demo', key: DEMO_KEY, products: ['*'] },
      { id: 'demo-eu', key: DEMO_EU_KEY, products: ['gbsi_eu', 'pemi'], rate_limit: { per_second: 20, burst: 40 } },
      { id: 'demo-admin', sha256: createHash('sha256').update(DEMO_ADMIN_KEY).digest('hex'), products: ['*'], admin: true },
    ],
  };
}
