import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, EU_KEY, startHarness, startInProcessHarness, type Harness, type Reply } from './support/harness.js';

/**
 * The contract suite runs in process: this proves that an in-process reply is the reply a
 * client gets over uWS (status, the headers the contract speaks of, the decoded body), so
 * the suite's claims hold for the real server.
 */
const rows: PitRow[] = [];
for (let d = 0; d < 60; d++) {
  const date = new Date(Date.UTC(2026, 2, 2) + d * 86_400_000).toISOString().slice(0, 10);
  for (const zone of ['DE', 'FR']) rows.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { bidding_zone: zone }, tag: `${zone}-${date}`, value: d / 8 });
}

const HEADERS = ['content-type', 'content-encoding', 'allow', 'etag', 'vary', 'x-count', 'x-total-count', 'x-has-more', 'x-next-cursor', 'link', 'retry-after'];

function comparable(r: Reply): unknown {
  return {
    status: r.status,
    headers: Object.fromEntries(HEADERS.map((n) => [n, r.headers.get(n)])),
    requestId: /^req_[0-9a-z]{16,}$/.test(r.headers.get('x-request-id') ?? ''),
    text: r.text.replace(/req_[0-9a-z]+/g, 'req_x'),
  };
}

describe('in-process harness: the same replies as over uWS', () => {
  let socket: Harness;
  let inProcess: Harness;
  beforeAll(async () => {
    const opts = { datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }] };
    socket = await startHarness(opts);
    inProcess = await startInProcessHarness(opts);
  });
  afterAll(async () => {
    await socket?.close();
    await inProcess?.close();
  });

  const cases: Array<[string, string | null | undefined, RequestInit?]> = [
    ['/pemi/grid_stress', undefined],
    ['/pemi/grid_stress?latest=false&limit=7', undefined],
    ['/pemi/grid_stress?latest=false&limit=50', undefined, { headers: { 'accept-encoding': 'identity' } }],
    ['/pemi/grid_stress?latest=false&limit=50&format=csv', undefined],
    ['/pemi/grid_stress?latest=false&limit=50', undefined, { headers: { 'accept-encoding': 'br' } }],
    ['/pemi/grid_stress?columns=value', undefined],
    ['/pemi/grid_stress', undefined, { method: 'HEAD' }],
    ['/pemi/grid_stress', undefined, { method: 'POST' }],
    ['/pemi/grid_stress', undefined, { headers: { accept: 'text/html' } }],
    ['/pemi/grid_stress?limit=0', undefined],
    ['/pemi/grid_stress', null],
    ['/pemi/nope', undefined],
    ['/pemi/grid_stress/walk_forward', undefined],
    ['/wrsi/forecast_stress', EU_KEY],
    ['/healthz', null],
    ['/readyz', null],
    ['/admin/refresh', ADMIN_KEY],
    ['/pemi/grid_stress?as_of=2026-03-20&date_from=2026-03-01', undefined],
  ];

  it('answers every case as the socket does', async () => {
    for (const [path, key, init] of cases) {
      const a = await socket.get(path, key, init);
      const b = await inProcess.get(path, key, init);
      expect(comparable(b), `${init?.method ?? 'GET'} ${path}`).toEqual(comparable(a));
    }
  });

  it('answers If-None-Match with the ETag of a reply with 304, as the socket does', async () => {
    const first = await inProcess.get('/pemi/grid_stress');
    const etag = first.headers.get('etag')!;
    const a = await socket.get('/pemi/grid_stress', undefined, { headers: { 'if-none-match': etag } });
    const b = await inProcess.get('/pemi/grid_stress', undefined, { headers: { 'if-none-match': etag } });
    expect([b.status, b.text]).toEqual([304, '']);
    expect(comparable(b)).toEqual(comparable(a));
  });
});
