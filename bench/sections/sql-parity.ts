import type { Alternative } from '../alternatives/types.js';
import type { PageFetcher } from '../alternatives/duckdb-postgres-plan.js';
import { runParityCheck } from '../alternatives/duckdb-postgres-check.js';

/** Seeds of the parity check's small snapshots (as the test suite ran them before). */
const SEEDS = [1000, 8919, 16838, 24757];

/**
 * Before the SQL alternatives are timed, the bench checks that they answer the contract's
 * rows (runParityCheck: seeded snapshots against the reference model, pages walked by
 * keyset). It takes up to a few minutes, which is why it runs here and not in `npm test`.
 * A system that answers other rows is not timed: its numbers would compare nothing.
 * Returns a note for RESULTS.md; throws when any answer differs.
 */
export async function checkSqlParity(alt: Alternative & PageFetcher, log: (m: string) => void): Promise<string> {
  const ok = await alt.available();
  if (!ok.ok) return `${alt.name}: parity check skipped (${ok.reason})`;
  log(`${alt.name}: parity check against the reference model (${SEEDS.length} seeded snapshots)`);
  const r = await runParityCheck(alt, SEEDS);
  if (r.failures.length > 0 || r.queries <= 300 || r.rows <= 1000) {
    throw new Error(
      `${alt.name} does not answer the contract's rows (${r.queries} queries, ${r.rows} rows, ${r.failures.length} failures):\n  ${r.failures.slice(0, 5).join('\n  ')}`,
    );
  }
  return `${alt.name}: answers the contract's rows (${r.datasets} seeded snapshots, ${r.queries} queries, ${r.pages} pages, ${r.rows} rows).`;
}
