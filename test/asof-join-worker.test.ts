/**
 * A large `asof_join` body is joined on the serving thread's join worker
 * (docs/decisions.md#join-off-thread), over uWS:
 *  - the answer is the same bytes as the same join computed on the serving thread (random
 *    events, every body format, gzip, every answer format, max_age, columns, before_floor):
 *    differential-asof-join.test.ts checks those against the reference model;
 *  - while a 1,000,000-event join runs in the worker, the serving thread answers a small
 *    request;
 *  - a client that goes away mid-join stops the worker's join (it does not finish it), the
 *    worker gives the join's memory back, and the next join is answered.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHandler } from '../src/api/api-handler.js';
import type { Handler } from '../src/http/types.js';
import { listen, type ListenOptions } from '../src/http/uws-server.js';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { randomAsOf } from './support/random-query.js';
import { Rng, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { eventsArrow } from './support/join-events.js';

const SEED = 20_261_130;
const snaps = [generateSnapshot(SEED, 'gbsi_eu', 'system_stress'), generateSnapshot((SEED + 7919) >>> 0, 'gbsi_us', 'storage_surprise', { manySeries: true })];

/** A uWS harness whose API handler the test holds (to read what its join worker did). */
async function harness(joinInlineBytes: number): Promise<{ h: Harness; handler: () => ApiHandler }> {
  let kept: Handler | null = null;
  const transport = (handler: Handler, opts: ListenOptions) => {
    kept = handler;
    return listen(handler, opts);
  };
  const h = await startHarness({
    datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })),
    server: { joinInlineBytes, transport },
  });
  return { h, handler: () => kept as ApiHandler };
}

let inline: Awaited<ReturnType<typeof harness>>;
let worker: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  inline = await harness(Infinity);
  worker = await harness(0);
}, 120_000);
afterAll(async () => {
  await inline?.h.close();
  await worker?.h.close();
});

type BodyFormat = 'csv' | 'json' | 'arrow';

function body(rng: Rng, snap: GeneratedSnapshot, n: number, format: BodyFormat): { bytes: Uint8Array; type: string } {
  const stored = [...new Set(snap.rows.map((r) => JSON.stringify(snap.seriesKey.map((k) => r[k] as string))))].map((s) => JSON.parse(s) as string[]);
  const events = Array.from({ length: n }, (_, i) => ({
    at: rng.chance(0.1) ? rng.pick(['2019-06-30', '2031-12-31T00:00:00Z']) : randomAsOf(rng, snap),
    key: rng.chance(0.85) ? rng.pick(stored) : snap.seriesKey.map((k) => rng.pick([...snap.keyPools[k]!, 'NOPE'])),
    id: rng.chance(0.1) ? null : `e${i}`,
    n: rng.chance(0.1) ? null : rng.int(-50, 50) / 4,
  }));
  if (format === 'csv') {
    const lines = [['at', ...snap.seriesKey, 'id', 'n'].join(',')];
    for (const e of events) lines.push([e.at, ...e.key.map((k) => `"${k}"`), e.id ?? '', e.n === null ? '' : String(e.n)].join(','));
    return { bytes: Buffer.from(lines.join('\n') + '\n'), type: 'text/csv' };
  }
  if (format === 'json') {
    const objects = events.map((e) => ({ at: e.at, ...Object.fromEntries(snap.seriesKey.map((k, i) => [k, e.key[i]])), id: e.id, n: e.n }));
    return { bytes: Buffer.from(JSON.stringify(objects)), type: 'application/json' };
  }
  return { bytes: eventsArrow(snap.seriesKey, events), type: 'application/vnd.apache.arrow.stream' };
}

async function post(h: Harness, path: string, bytes: Uint8Array, type: string, gzip: boolean): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const r = await fetch(`${h.url}${path}`, {
    method: 'POST',
    body: gzip ? gzipSync(bytes) : bytes,
    headers: { 'x-api-key': TEST_KEY, 'content-type': type, 'accept-encoding': 'identity', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
  });
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}

/** The answer's bytes with its request id (x-request-id, also in JSON's record_id and Arrow's metadata) written as one placeholder of the same length. */
function withoutRequestId(a: { headers: Headers; bytes: Buffer }): Buffer {
  const id = a.headers.get('x-request-id') ?? '';
  if (id === '') return a.bytes;
  return Buffer.from(a.bytes.toString('latin1').replaceAll(id, 'X'.repeat(id.length)), 'latin1');
}

describe('asof_join on the join worker', () => {
  it('answers the same bytes as the serving thread: every body and answer format, gzip, max_age, columns, before_floor', async () => {
    let viaWorker = 0;
    for (const snap of snaps) {
      const rng = new Rng(snap.seed ^ 0x5a5a);
      const dataCols = snap.columns.map((c) => c.name).filter((n) => !snap.seriesKey.includes(n) && n !== 'date');
      for (let q = 0; q < 8; q++) {
        const format = (['csv', 'json', 'arrow'] as const)[q % 3]!;
        const { bytes, type } = body(rng, snap, rng.pick([0, 1, 40, 300]), format);
        const params = [
          `format=${rng.pick(['json', 'csv', 'arrow'])}`,
          ...(rng.chance(0.4) ? [`max_age=${rng.pick([0, 3, 30])}`] : []),
          ...(rng.chance(0.5) ? [`before_floor=${rng.pick(['floor', 'skip', 'error'])}`] : []),
          ...(rng.chance(0.4) ? [`columns=${dataCols.filter(() => rng.chance(0.5)).join(',') || 'date'}`] : []),
        ];
        const path = `/${snap.productId}/${snap.dataset}/asof_join?${params.join('&')}`;
        const gzip = rng.chance(0.3);
        const before = worker.handler().joins!.stats().finished;
        const a = await post(inline.h, path, bytes, type, gzip);
        const b = await post(worker.h, path, bytes, type, gzip);
        const context = `${path} (${format}${gzip ? '+gzip' : ''} body)`;
        expect(b.status, context).toBe(a.status);
        expect(b.headers.get('x-floor-applied'), context).toBe(a.headers.get('x-floor-applied'));
        expect(b.headers.get('x-count'), context).toBe(a.headers.get('x-count'));
        expect(withoutRequestId(b).equals(withoutRequestId(a)), `${context}: ${b.bytes.toString().slice(0, 300)}`).toBe(true);
        // the worker's join answered it (a 4xx of the body or the columns comes from the worker too)
        expect(worker.handler().joins!.stats().finished, context).toBe(before + 1);
        viaWorker++;
      }
    }
    expect(viaWorker).toBe(16);
    expect(inline.handler().joins, 'joinInlineBytes Infinity: no worker').toBeNull();
  }, 120_000);

  it('a bad body is the same 400 from the worker, naming the row and column', async () => {
    const bad = 'at,country\n2026-02-01,DE\nnot-a-time,FR\n';
    const a = await post(inline.h, '/gbsi_eu/system_stress/asof_join', Buffer.from(bad), 'text/csv', false);
    const b = await post(worker.h, '/gbsi_eu/system_stress/asof_join', Buffer.from(bad), 'text/csv', false);
    expect(b.status).toBe(400);
    const error = (JSON.parse(b.bytes.toString()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('invalid_body');
    expect(error.message).toContain('row 1');
    expect(error.message).toContain('"at"');
    expect(error).toEqual((JSON.parse(a.bytes.toString()) as { error: unknown }).error);
  });

  it('a 1,000,000-event join: the thread answers a small request meanwhile; a client gone mid-join stops it and its memory is given back', async () => {
    const runner = worker.handler().joins!;
    // the worker warm, and what it holds between joins
    expect((await post(worker.h, '/gbsi_eu/system_stress/asof_join', Buffer.from('at,country\n2026-02-01,DE\n'), 'text/csv', false)).status).toBe(200);
    const baseline = (await runner.workerMemory())!;
    const stats0 = runner.stats();
    const line = Buffer.from('2026-02-03T10:00:00.123456+01:00,DE\n');
    const n = 1_000_000;
    const events = Buffer.alloc(11 + line.length * n);
    events.write('at,country\n');
    for (let i = 0; i < n; i++) line.copy(events, 11 + i * line.length);
    const socket = connect(worker.h.server.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.on('error', () => {});
    socket.write(
      `POST /gbsi_eu/system_stress/asof_join?format=csv HTTP/1.1\r\nhost: t\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: text/csv\r\ncontent-length: ${events.length}\r\n\r\n`,
    );
    socket.write(events);
    const deadline = Date.now() + 60_000;
    while (!runner.stats().busy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    expect(runner.stats().busy, 'the join reached the worker').toBe(true);
    // the serving thread is free: a small request is answered while the join runs
    const small = await fetch(`${worker.h.url}/gbsi_eu/system_stress?${snaps[0]!.seriesKey[0]}=DE`, { headers: { 'x-api-key': TEST_KEY } });
    expect(small.status).toBe(200);
    await small.arrayBuffer();
    expect(runner.stats().busy, 'answered while the join was still in the worker').toBe(true);
    // the client goes away: the worker stops the join at its next check
    socket.destroy();
    while (runner.stats().stopped === stats0.stopped && runner.stats().finished === stats0.finished && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(runner.stats()).toMatchObject({ stopped: stats0.stopped + 1, finished: stats0.finished, busy: false });
    const after = (await runner.workerMemory())!;
    // the body alone was 37 MB in the worker, its parsed columns more: none of it is kept
    expect(after.external - baseline.external, JSON.stringify({ baseline, after })).toBeLessThan(8 * 1024 * 1024);
    expect(after.heapUsed - baseline.heapUsed, JSON.stringify({ baseline, after })).toBeLessThan(8 * 1024 * 1024);
    // and the next join is answered
    const next = await post(worker.h, '/gbsi_eu/system_stress/asof_join?format=csv', Buffer.from('at,country\n2026-02-01,DE\n'), 'text/csv', false);
    expect(next.status).toBe(200);
    expect(runner.stats().finished).toBe(stats0.finished + 1);
  }, 180_000);
});
