/**
 * Contract 15's limits: at most 1,000,000 events (each body format) and 256 MiB of body as
 * sent (announced or not): 413 payload_too_large, readable by the client before the
 * connection closes. Apart from contract-asof-join.test.ts because each sends megabytes: the
 * mutation runs of join/ leave them out (stryker.config.mjs).
 */
import { request } from 'node:http';
import { Table, TimestampMillisecond, Utf8, makeData, makeVector, tableToIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, type Harness } from './support/harness.js';
import { expectError } from './support/fixtures.js';
import { JOIN, joinPost, startJoinHarness } from './support/asof-join-harness.js';

describe('contract 15: asof_join limits', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startJoinHarness();
  });
  afterAll(() => h.close());

  const post = (...args: Parameters<ReturnType<typeof joinPost>>) => joinPost(h)(...args);

  it('more than 1,000,000 events: 413 payload_too_large', async () => {
    const line = '2026-02-04,DE\n';
    const r = await post('at,country\n' + line.repeat(1_000_001));
    expectError(r, 413, 'payload_too_large', undefined);
  }, 60_000);

  it('more than 1,000,000 events as JSON or as Arrow: 413 payload_too_large', async () => {
    const n = 1_000_001;
    const json = '[' + Array.from({ length: n }, () => '{"at":"2026-02-04","country":"DE"}').join(',') + ']';
    expectError(await post(json, 'application/json'), 413, 'payload_too_large', undefined);
    const arrow = tableToIPC(
      new Table({
        at: makeVector({ type: new TimestampMillisecond(), data: new BigInt64Array(n).fill(BigInt(Date.UTC(2026, 1, 4, 12))) } as never),
        country: makeVector(
          makeData({ type: new Utf8(), length: n, valueOffsets: Int32Array.from({ length: n + 1 }, (_, i) => 2 * i), data: Buffer.from('DE'.repeat(n)) }),
        ),
      }),
      'stream',
    );
    expectError(await post(arrow, 'application/vnd.apache.arrow.stream'), 413, 'payload_too_large', undefined);
  }, 120_000);

  it('a body sent without Content-Length past 256 MiB: 413 as soon as the limit is passed, readable by the client while it is still sending', async () => {
    const url = new URL(`${h.url}${JOIN}`);
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'x-api-key': TEST_KEY, 'content-type': 'text/csv' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      // chunked: 1 MiB at a time as the socket takes it, up to 300 MiB, stopping once answered
      const chunk = Buffer.alloc(1024 * 1024, 0x41);
      const more = (): void => {
        while (sent < 300 * 1024 * 1024 && !req.destroyed) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', more);
        }
      };
      more();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
    expect(sent, 'answered before the client sent all it meant to').toBeLessThan(300 * 1024 * 1024);
  }, 120_000);

  it('a body announced over 256 MiB: 413, readable by the client while it is still sending', async () => {
    const url = new URL(`${h.url}${JOIN}`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'x-api-key': TEST_KEY, 'content-type': 'text/csv', 'content-length': String(300 * 1024 * 1024) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      // a first slice of the body only: the answer must come without the rest
      req.write(Buffer.alloc(64 * 1024, 0x41));
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
  });
});
