/**
 * Operational errors carry stable codes (src/ops-errors.ts): the loader reports and logs
 * them for real faults of a local source, and a code thrown on a build worker thread
 * arrives intact on the loading thread.
 */
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { createLogger } from '../src/log/logger.js';
import { fromSource, OpsError, opsCodeOf } from '../src/ops-errors.js';
import { DatasetRegistry } from '../src/generations/dataset-registry.js';
import { SnapshotLoader, type CheckReport } from '../src/generations/snapshot-loader.js';
import { WorkerTableBuilder, buildParts } from '../src/generations/table-builder.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const rows = (n: number): PitRow[] =>
  Array.from({ length: n }, (_, i) => {
    const date = new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10);
    return { date, eff: date, obs: `${date}T06:00:00Z`, key: { country: 'DE' }, tag: 'ops', value: i };
  });

const snapshot = (n: number): Uint8Array => buildArrowSnapshot(pitSnapshot(['country'], rows(n)));

describe('operational error codes', () => {
  let dir: string;
  let builder: WorkerTableBuilder;
  let reports: Map<string, CheckReport>;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-ops-'));
    const source = new LocalSource(dir);
    // gbsi_eu: a flipped byte (checksum); pemi: the object removed; glmi: a manifest that is not JSON;
    // wrsi: a manifest naming another dataset; every other dataset: no manifest at all.
    const eu = await writeGeneration(source, { productId: 'gbsi_eu', dataset: 'system_stress' }, snapshot(5), 1, '2026-11-01T00:00:00Z');
    const euPath = join(dir, 'gbsi_eu', 'system_stress', eu.object);
    const bytes = await readFile(euPath);
    bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
    await writeFile(euPath, bytes);
    const pemi = await writeGeneration(source, { productId: 'pemi', dataset: 'grid_stress' }, snapshot(5), 1, '2026-11-01T00:00:00Z');
    await unlink(join(dir, 'pemi', 'grid_stress', pemi.object));
    await writeGeneration(source, { productId: 'glmi', dataset: 'marginality' }, snapshot(5), 1, '2026-11-01T00:00:00Z');
    await writeFile(join(dir, 'glmi', 'marginality', 'manifest.json'), '{ not json');
    const wrsi = await writeGeneration(source, { productId: 'wrsi', dataset: 'forecast_stress' }, snapshot(5), 1, '2026-11-01T00:00:00Z');
    await writeFile(join(dir, 'wrsi', 'forecast_stress', 'manifest.json'), JSON.stringify({ ...wrsi, dataset: 'other' }));

    builder = new WorkerTableBuilder();
    const clock = new ManualClock(Date.UTC(2026, 10, 20));
    const loader = new SnapshotLoader({
      source,
      registry: new DatasetRegistry(),
      builder,
      clock,
      timers: new ManualTimers(clock),
      log: createLogger({ clock, sink: { write: (chunk: string) => void logs.push(JSON.parse(chunk) as Record<string, unknown>) } }),
      refreshIntervalMs: 0,
      startupTimeoutMs: 0,
      cache: null,
    });
    await loader.start();
    reports = new Map((await loader.refreshNow()).map((r) => [r.dataset, r]));
  });
  afterAll(async () => {
    await builder.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    // A refused object is not fetched again until its manifest changes: unchanged, still with its reason and code.
    ['gbsi_eu/system_stress', 'unchanged', 'checksum_mismatch', /sha256 mismatch/],
    ['pemi/grid_stress', 'refused', 'object_missing', /is missing/],
    ['glmi/marginality', 'refused', 'manifest_invalid', /not JSON/],
    ['wrsi/forecast_stress', 'refused', 'manifest_invalid', /names wrsi\/other/],
    ['wssi_us/demand_shock', 'missing', 'manifest_missing', /no manifest\.json/],
  ])('%s: %s with code %s, in the report and in the log line', (dataset, outcome, code, reason) => {
    expect(reports.get(dataset)).toMatchObject({ outcome, code });
    expect(reports.get(dataset)!.error).toMatch(reason);
    // Logged once (at start-up; the refresh found the same reason), with its code.
    const lines = logs.filter((l) => l['dataset'] === dataset && l['reason'] !== undefined);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ code, outcome: outcome === 'unchanged' ? 'refused' : outcome });
  });

  it('a code thrown on a build worker arrives as an OpsError with that code', async () => {
    const bytes = snapshot(3);
    const err = await buildParts(builder, [bytes], { parts: [{ object: 'x.arrow', sha256: '0'.repeat(64), rows: 3 }], filterColumns: [], floorUs: 0 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpsError);
    expect((err as OpsError).code).toBe('checksum_mismatch');
  });

  it('any other failure of a source read is an outage; an OpsError passes as it is', async () => {
    const outage = await fromSource('reading m', () => Promise.reject(new Error('ECONNRESET'))).catch((e: unknown) => e);
    expect(opsCodeOf(outage)).toBe('source_unreachable');
    expect((outage as Error).message).toBe('reading m: ECONNRESET');
    const answer = new OpsError('object_missing', 'object m is missing');
    expect(await fromSource('reading m', () => Promise.reject(answer)).catch((e: unknown) => e)).toBe(answer);
    expect(opsCodeOf(new Error('column "x" must be Float64'))).toBe('snapshot_invalid');
  });
});
