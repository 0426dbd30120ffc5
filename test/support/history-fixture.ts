/**
 * One small hand-written history for the walk-forward and vintages contract tests (gbsi_eu,
 * floor 2026-01-13, series key `country`). Every expected answer in those tests is derived
 * by reading these rows:
 *
 * - DE 2026-02-02: first released 02-02 10:00, revised at the very last microsecond of
 *   02-04 (so `as_of=2026-02-04`, the end of that day, sees the revision);
 * - DE 2026-02-03: observed only on 02-05;
 * - FR 2026-02-02: one version;
 * - FR 2026-02-04: two versions with the same observed and ingested time (a full tie: the
 *   later row wins, the earlier is never an answer);
 * - DE 2026-01-05: two versions observed before the floor, both effective 01-06: only the
 *   state held at the floor (the later) is ever an answer, from its effective time on.
 */
import type { PitRow } from './fixtures.js';

const DE = { country: 'DE' };
const FR = { country: 'FR' };

export const HISTORY_ROWS: readonly PitRow[] = [
  { key: DE, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-06T09:00:00Z', tag: 'DE05-early', value: 0.5 },
  { key: DE, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-10T09:00:00Z', tag: 'DE05-floor', value: 0.6 },
  { key: DE, date: '2026-02-02', eff: '2026-02-02', obs: '2026-02-02T10:00:00Z', tag: 'DE02-v1', value: 1 },
  { key: DE, date: '2026-02-02', eff: '2026-02-02', obs: '2026-02-04T23:59:59.999999Z', tag: 'DE02-v2', value: 2 },
  { key: DE, date: '2026-02-03', eff: '2026-02-03', obs: '2026-02-05T00:00:00Z', tag: 'DE03', value: 3 },
  { key: FR, date: '2026-02-02', eff: '2026-02-02', obs: '2026-02-02T00:00:00Z', tag: 'FR02', value: 4 },
  { key: FR, date: '2026-02-04', eff: '2026-02-04', obs: '2026-02-04T12:00:00Z', tag: 'FR04-a', value: 5 },
  { key: FR, date: '2026-02-04', eff: '2026-02-04', obs: '2026-02-04T12:00:00Z', tag: 'FR04-b', value: 6 },
];

export const HISTORY_PATH = '/gbsi_eu/system_stress';
