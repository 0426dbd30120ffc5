import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpResponse } from '../src/http/types.js';
import { listen, type UwsServer } from '../src/http/uws-server.js';

const HOST = '127.0.0.1';
const open: UwsServer[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

const BODY_BYTES = 24 * 1024 * 1024;

function sha(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Reads one response with a paused socket that drains slowly, so the server must wait for onWritable. */
function slowGet(port: number, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, HOST, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`));
    const chunks: Buffer[] = [];
    let got = 0;
    let need = -1;
    let headEnd = -1;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (headEnd < 0) {
        const all = Buffer.concat(chunks);
        headEnd = all.indexOf('\r\n\r\n');
        if (headEnd >= 0) need = headEnd + 4 + Number(/content-length: *(\d+)/i.exec(all.subarray(0, headEnd).toString('latin1'))![1]);
      }
      if (need >= 0 && got >= need) {
        socket.destroy();
        resolve(Buffer.concat(chunks).subarray(headEnd + 4, need));
        return;
      }
      // Drain slowly: the server's socket buffer fills and tryEnd reports backpressure.
      socket.pause();
      setTimeout(() => socket.resume(), 1);
    });
    socket.on('error', reject);
  });
}

describe('large bodies', () => {
  it('reach a slow reader intact although the handler reuses (and overwrites) its body buffer for the next request', async () => {
    // One buffer for every answer, as the data endpoint does: request n fills it with byte n.
    const shared = Buffer.allocUnsafe(BODY_BYTES);
    let n = 0;
    const server = await listen(
      (): HttpResponse => {
        n++;
        for (let i = 0; i < shared.length; i += 4096) shared.fill(n, i, i + 4096);
        shared.writeUInt32LE(n, 0);
        return { status: 200, headers: [], contentType: 'application/octet-stream', requestId: `req_${String(n).padStart(16, '0')}`, body: shared };
      },
      { host: HOST, port: 0 },
    );
    open.push(server);
    const [a, b] = await Promise.all([slowGet(server.port, '/a'), slowGet(server.port, '/b')]);
    const expected = (k: number): string => {
      const e = Buffer.alloc(BODY_BYTES, k);
      e.writeUInt32LE(k, 0);
      return sha(e);
    };
    expect(a.length).toBe(BODY_BYTES);
    expect(b.length).toBe(BODY_BYTES);
    // Each client got the bytes of its own request, whole, though the buffer was rewritten meanwhile.
    expect(new Set([sha(a), sha(b)])).toEqual(new Set([expected(1), expected(2)]));
    // Again: the copies of the unsent rests now come from the transport's pool, reused.
    const [c, d] = await Promise.all([slowGet(server.port, '/c'), slowGet(server.port, '/d')]);
    expect(new Set([sha(c), sha(d)])).toEqual(new Set([expected(3), expected(4)]));
  }, 90_000);

  it('a client that disconnects mid-body does not crash the server, which keeps serving', async () => {
    const body = Buffer.alloc(BODY_BYTES, 7);
    const server = await listen(() => ({ status: 200, headers: [], contentType: 'application/octet-stream', requestId: 'req_0000000000000001', body }), {
      host: HOST,
      port: 0,
    });
    open.push(server);
    await new Promise<void>((resolve) => {
      const socket = net.connect(server.port, HOST, () => socket.write('GET / HTTP/1.1\r\nHost: t\r\n\r\n'));
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
    });
    const again = await slowGet(server.port, '/again');
    expect(sha(again)).toBe(sha(body));
  }, 60_000);
});

describe('large bodies from an async handler', () => {
  it('are sent from the owned body without loss to a slow reader', async () => {
    const body = Buffer.allocUnsafe(BODY_BYTES);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, i);
    const server = await listen(
      async () => {
        await new Promise((r) => setTimeout(r, 5));
        return { status: 200, headers: [], contentType: 'application/octet-stream', requestId: 'req_0000000000000002', body };
      },
      { host: HOST, port: 0 },
    );
    open.push(server);
    const got = await slowGet(server.port, '/');
    expect(sha(got)).toBe(sha(body));
  }, 60_000);
});
