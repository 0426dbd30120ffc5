/**
 * The asof_join contract tests' server: the history fixture as gbsi_eu/system_stress (keyed by
 * country) and as gbsi_us/system_stress (no series key), and a POST to a join endpoint.
 */
import { TEST_KEY, startHarness, type Harness } from './harness.js';
import { pitSnapshot } from './fixtures.js';
import { HISTORY_PATH, HISTORY_ROWS } from './history-fixture.js';

export const JOIN = `${HISTORY_PATH}/asof_join`;

export function startJoinHarness(): Promise<Harness> {
  return startHarness({
    datasets: [
      { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], HISTORY_ROWS) },
      {
        productId: 'gbsi_us',
        dataset: 'system_stress',
        spec: pitSnapshot(
          [],
          HISTORY_ROWS.map((r) => ({ ...r, key: {} })),
        ),
      },
    ],
  });
}

/** POSTs `body` to a join endpoint of `h` (the history dataset's by default). */
export function joinPost(h: Harness) {
  return (body: string | Uint8Array, type = 'text/csv', query = '', headers: Record<string, string> = {}, key: string | null = TEST_KEY, path = JOIN) =>
    h.get(`${path}${query === '' ? '' : `?${query}`}`, key, { method: 'POST', body, headers: { 'content-type': type, ...headers } });
}
