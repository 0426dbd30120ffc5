import { createRequire } from 'node:module';
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HeaderWriter } from '../src/format/header-writer.js';
import { assertNativeUws, loadNativeUws } from '../src/http/native-uws.js';
import { ownedRequest, type HttpRequest, type HttpResponse, type Handler } from '../src/http/types.js';
import { listen } from '../src/http/uws-server.js';
import { RequestIds } from '../src/api/request-ids.js';
import type { ListenOptions, UwsServer } from '../src/http/uws-server.js';

const HOST = '127.0.0.1';
const open: UwsServer[] = [];

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

async function start(handler: Handler, extra: Partial<ListenOptions> = {}): Promise<UwsServer> {
  const server = await listen(handler, { host: HOST, port: 0, ...extra });
  open.push(server);
  return server;
}

function ok(body: string | Uint8Array, more: Partial<HttpResponse> = {}): HttpResponse {
  return {
    status: 200,
    headers: [],
    contentType: 'text/plain',
    requestId: 'req_0123456789abcdef',
    body: typeof body === 'string' ? Buffer.from(body) : body,
    ...more,
  };
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface RawResponse {
  statusLine: string;
  headers: Map<string, string[]>;
  body: Buffer;
}

/**
 * Writes `text` (possibly several pipelined requests) on one raw connection and parses
 * exactly `heads.length` responses; heads[i] says whether response i answers a HEAD, whose
 * body is empty whatever content-length says. Stray bytes would corrupt the next parse.
 */
function rawExchange(port: number, text: string, heads: boolean[]): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, HOST, () => socket.write(text));
    let buf = Buffer.alloc(0);
    const out: RawResponse[] = [];
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (out.length < heads.length) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers = new Map<string, string[]>();
        for (const line of lines.slice(1)) {
          const i = line.indexOf(':');
          const name = line.slice(0, i).toLowerCase();
          headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
        }
        const length = heads[out.length] ? 0 : Number(headers.get('content-length')?.[0] ?? 0);
        if (buf.length < end + 4 + length) return;
        out.push({ statusLine: lines[0] ?? '', headers, body: buf.subarray(end + 4, end + 4 + length) });
        buf = buf.subarray(end + 4 + length);
      }
      socket.destroy();
      if (buf.length > 0) reject(new Error(`unexpected trailing bytes: ${buf.toString('latin1')}`));
      else resolve(out);
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed after ${out.length} responses`)));
  });
}

function get(path: string, extraHeaders = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: t\r\n${extraHeaders}\r\n`;
}

function recording(): { seen: HttpRequest[]; handler: Handler } {
  const seen: HttpRequest[] = [];
  // A copy: the transport refills one request object per request (http/types.ts).
  return { seen, handler: (req) => (seen.push(ownedRequest(req)), ok('x')) };
}

describe('native uWebSockets.js check', () => {
  it('passes on this machine: the loaded module exports SSLApp', () => {
    expect(typeof loadNativeUws().SSLApp).toBe('function');
  });

  it('refuses the package’s own JS fallback with a clear error', () => {
    const fallback: unknown = createRequire(import.meta.url)('uWebSockets.js/dist/index.js');
    expect(() => assertNativeUws(fallback)).toThrow(/native uWebSockets\.js binary did not load.*refusing to run the slow fallback/);
  });
});

describe('uws-server', () => {
  it('GET delivers status line, handler headers, content-type, x-request-id and body bytes exactly', async () => {
    const backing = Uint8Array.from([9, 9, 0, 255, 1, 128, 10, 13, 9]);
    const body = backing.subarray(2, 8); // a view with a non-zero offset
    const server = await start(() =>
      ok(body, {
        status: 429,
        headers: [
          ['retry-after', '3'],
          ['cache-control', 'no-store'],
        ],
        contentType: 'application/octet-stream',
        requestId: 'req_abcdefghij012345',
      }),
    );
    const [r] = await rawExchange(server.port, get('/x'), [false]);
    expect(r?.statusLine).toBe('HTTP/1.1 429 Too Many Requests');
    expect(r?.headers.get('retry-after')).toEqual(['3']);
    expect(r?.headers.get('cache-control')).toEqual(['no-store']);
    expect(r?.headers.get('content-type')).toEqual(['application/octet-stream']);
    expect(r?.headers.get('x-request-id')).toEqual(['req_abcdefghij012345']);
    expect(r?.headers.get('content-length')).toEqual(['6']);
    expect([...(r?.body ?? [])]).toEqual([0, 255, 1, 128, 10, 13]);
  });

  it("x-request-id from a serving thread's id bytes, rewritten by the next request: each response carries its own", async () => {
    const ids = new RequestIds(Uint8Array.from([3, 1, 4, 1, 5, 9, 2, 6]));
    const server = await start(() => ok('x', { requestId: ids.advance() }));
    const got = await rawExchange(server.port, get('/a') + get('/b') + get('/c'), [false, false, false]);
    expect(got.map((r) => r.headers.get('x-request-id'))).toEqual([['req_314159260000000000'], ['req_314159260000000001'], ['req_314159260000000002']]);
  });

  it('status lines carry the standard reason phrase for every status the API answers', async () => {
    const codes = [200, 400, 401, 403, 404, 405, 429, 500, 503];
    const server = await start((req) => ok('', { status: Number(req.path.slice(1)) }));
    const text = codes.map((c) => get(`/${c}`)).join('');
    const rs = await rawExchange(
      server.port,
      text,
      codes.map(() => false),
    );
    expect(rs.map((r) => r.statusLine)).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 401 Unauthorized',
      'HTTP/1.1 403 Forbidden',
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 405 Method Not Allowed',
      'HTTP/1.1 429 Too Many Requests',
      'HTTP/1.1 500 Internal Server Error',
      'HTTP/1.1 503 Service Unavailable',
    ]);
  });

  it('path and raw query reach the handler undecoded; an absent or empty query is ""', async () => {
    const { seen, handler } = recording();
    const server = await start(handler);
    await rawExchange(server.port, get('/p/a%20b?a=%2C%20b&c=1') + get('/q') + get('/r?'), [false, false, false]);
    expect(seen.map((r) => [r.method, r.path, r.rawQuery])).toEqual([
      ['GET', '/p/a%20b', 'a=%2C%20b&c=1'],
      ['GET', '/q', ''],
      ['GET', '/r', ''],
    ]);
  });

  it('hands the handler one request object, refilled per request: what outlives the call must be copied (ownedRequest)', async () => {
    const kept: HttpRequest[] = [];
    const server = await start((req) => (kept.push(req), ok('x')));
    await rawExchange(server.port, get('/one?a=1', 'x-api-key: k1\r\n') + get('/two'), [false, false]);
    expect(kept).toHaveLength(2);
    expect(kept[1]).toBe(kept[0]);
    expect([kept[0]!.path, kept[0]!.rawQuery, kept[0]!.apiKey]).toEqual(['/two', '', null]);
  });

  it('x-api-key arrives as given; absent or empty is null', async () => {
    const { seen, handler } = recording();
    const server = await start(handler);
    const text = get('/a', 'X-Api-Key: k-1/Secret\r\n') + get('/b') + get('/c', 'x-api-key:\r\n');
    await rawExchange(server.port, text, [false, false, false]);
    expect(seen.map((r) => r.apiKey)).toEqual(['k-1/Secret', null, null]);
  });

  it('Accept, Accept-Encoding and If-None-Match arrive as sent; absent is ""', async () => {
    const { seen, handler } = recording();
    const server = await start(handler);
    const text = get('/a', 'Accept: text/csv;q=0.5, */*;q=0.1\r\nAccept-Encoding: br;q=1, gzip\r\nIf-None-Match: W/"g7-abc"\r\n') + get('/b');
    await rawExchange(server.port, text, [false, false]);
    expect(seen.map((r) => [r.accept, r.acceptEncoding, r.ifNoneMatch])).toEqual([
      ['text/csv;q=0.5, */*;q=0.1', 'br;q=1, gzip', 'W/"g7-abc"'],
      ['', '', ''],
    ]);
  });

  it('every method and path reaches the handler', async () => {
    const { seen, handler } = recording();
    const server = await start(handler);
    const text = 'POST /deep/er/path HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi' + 'DELETE / HTTP/1.1\r\nHost: t\r\n\r\n';
    await rawExchange(server.port, text, [false, false]);
    expect(seen.map((r) => [r.method, r.path])).toEqual([
      ['POST', '/deep/er/path'],
      ['DELETE', '/'],
    ]);
  });

  it('HEAD answers the GET status and headers with the body length, but no body', async () => {
    const { seen, handler } = recording();
    const server = await start((req) => {
      handler(req);
      return ok('{"hello":"world"}', { status: 404, headers: [['x-extra', '1']], contentType: 'application/json' });
    });
    // A body after the HEAD response would break parsing of the GET that follows it.
    const text = `HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n` + get('/h');
    const [headRes, getRes] = await rawExchange(server.port, text, [true, false]);
    expect(seen.map((r) => r.method)).toEqual(['HEAD', 'GET']);
    expect(headRes?.statusLine).toBe('HTTP/1.1 404 Not Found');
    expect(headRes?.body.length).toBe(0);
    for (const name of ['content-type', 'x-request-id', 'x-extra', 'content-length']) {
      expect(headRes?.headers.get(name)).toEqual(getRes?.headers.get(name));
    }
    expect(headRes?.headers.get('content-length')).toEqual(['17']);
    expect(getRes?.body.toString()).toBe('{"hello":"world"}');
  });

  it('a header block goes out after the handler headers, every line as its own header, from a reused view, on GET and HEAD', async () => {
    const writer = new HeaderWriter();
    const server = await start((req) => {
      writer.reset();
      writer.start('vary').ascii('Accept, Accept-Encoding');
      writer.start('x-count').int(req.path.length);
      writer.start('x-data-latest-date').date(20_514);
      return ok('b', { headers: [['ratelimit-limit', '5']], headerBlock: writer.block() });
    });
    const rs = await rawExchange(server.port, get('/ab') + `HEAD /abcd HTTP/1.1\r\nHost: x\r\n\r\n` + get('/abcdef'), [false, true, false]);
    expect(rs).toHaveLength(3);
    const [get1, head, get2] = rs as [RawResponse, RawResponse, RawResponse];
    for (const [r, count] of [
      [get1, '3'],
      [head, '5'],
      [get2, '7'],
    ] as const) {
      expect(r.headers.get('ratelimit-limit')).toEqual(['5']);
      expect(r.headers.get('vary')).toEqual(['Accept, Accept-Encoding']);
      expect(r.headers.get('x-count')).toEqual([count]);
      expect(r.headers.get('x-data-latest-date')).toEqual(['2026-03-02']);
      expect(r.headers.get('content-type')).toEqual(['text/plain']);
    }
    expect(get1.body.toString()).toBe('b');
    expect(head.body.byteLength).toBe(0);
  });

  it('a body that is a view into a reused buffer is delivered intact, pipelined and over 2 concurrent keep-alive connections', async () => {
    const shared = Buffer.alloc(256);
    const server = await start((req) => {
      const text = `body of ${req.path}`;
      const n = shared.write(text, 5);
      return ok(shared.subarray(5, 5 + n));
    });

    const pipelined = await rawExchange(server.port, get('/one') + get('/two') + get('/three'), [false, false, false]);
    expect(pipelined.map((r) => r.body.toString())).toEqual(['body of /one', 'body of /two', 'body of /three']);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const paths = Array.from({ length: 10 }, (_, i) => `/k${i}`);
      const bodies = await Promise.all(
        paths.map(
          (p) =>
            new Promise<string>((resolve, reject) => {
              http
                .get({ host: HOST, port: server.port, path: p, agent }, (res) => {
                  const chunks: Buffer[] = [];
                  res.on('data', (c: Buffer) => chunks.push(c));
                  res.on('end', () => resolve(Buffer.concat(chunks).toString()));
                })
                .on('error', reject);
            }),
        ),
      );
      expect(bodies).toEqual(paths.map((p) => `body of ${p}`));
    } finally {
      agent.destroy();
    }
  });

  it('an async handler’s response arrives', async () => {
    const gate = deferred<void>();
    const server = await start(async (req) => {
      await gate.promise;
      return ok(`late ${req.rawQuery}`, { status: 201 });
    });
    const pending = fetch(`http://${HOST}:${server.port}/a?z=1`);
    gate.resolve();
    const res = await pending;
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('late z=1');
  });

  it('a client that aborts during an async handler does not crash the server', async () => {
    const entered = deferred<void>();
    const gate = deferred<void>();
    const server = await start(async (req) => {
      if (req.path === '/slow') {
        entered.resolve();
        await gate.promise;
      }
      return ok(`done ${req.path}`);
    });

    const clientClosed = new Promise<void>((resolve) => {
      const creq = http.get({ host: HOST, port: server.port, path: '/slow', agent: false });
      creq.on('error', () => undefined);
      creq.on('close', () => resolve());
      void entered.promise.then(() => creq.destroy());
    });
    await clientClosed;
    // A full round trip after the close lets uWS see the abort before the handler finishes.
    expect(await (await fetch(`http://${HOST}:${server.port}/between`)).text()).toBe('done /between');
    gate.resolve();
    await gate.promise;
    expect(await (await fetch(`http://${HOST}:${server.port}/after`)).text()).toBe('done /after');
  });

  it('a throwing handler yields the generic 500, is reported, and the server keeps serving', async () => {
    const reported: Array<[unknown, string]> = [];
    const server = await start(
      (req) => {
        if (req.path === '/boom') throw new Error('secret internals: /etc/shadow');
        if (req.path === '/reject') return Promise.reject(new Error('async secret'));
        return ok('fine');
      },
      { onError: (err, id) => reported.push([err, id]) },
    );

    for (const path of ['/boom', '/reject']) {
      const res = await fetch(`http://${HOST}:${server.port}${path}`);
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/json');
      const text = await res.text();
      expect(text).not.toMatch(/secret/);
      const body = JSON.parse(text) as { record_id: string };
      expect(body).toEqual({
        error: { status: 500, code: 'internal_error', message: 'internal server error' },
        record_id: body.record_id,
      });
      expect(body.record_id).toMatch(/^req_[0-9a-z]{16,}$/);
      expect(res.headers.get('x-request-id')).toBe(body.record_id);
      expect(reported.at(-1)?.[1]).toBe(body.record_id);
    }
    expect(reported.map(([e]) => (e as Error).message)).toEqual(['secret internals: /etc/shadow', 'async secret']);

    const res = await fetch(`http://${HOST}:${server.port}/ok`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('fine');
  });

  it('a malformed handler response drops that connection, is reported, and the server keeps serving', async () => {
    const reported: unknown[] = [];
    const server = await start((req) => (req.path === '/bad' ? ok('x', { headers: [['x-bad', {} as unknown as string]] }) : ok('fine')), {
      onError: (err) => reported.push(err),
    });
    await expect(rawExchange(server.port, get('/bad'), [false])).rejects.toThrow(/closed after 0 responses/);
    expect(reported).toHaveLength(1);
    const [r] = await rawExchange(server.port, get('/ok'), [false]);
    expect(r?.body.toString()).toBe('fine');
  });

  it('close() frees the port', async () => {
    const server = await listen(() => ok('hi'), { host: HOST, port: 0 });
    server.close();
    server.close(); // idempotent

    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(server.port, HOST, () => resolve());
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  // Not combined with the port test: a connection the server closes first leaves the port
  // in TIME_WAIT, and this uWS build sets no SO_REUSEADDR, so nothing could bind it for ~60 s.
  it('close() drops kept-alive connections', async () => {
    const server = await listen(() => ok('hi'), { host: HOST, port: 0 });
    const socket = net.connect(server.port, HOST);
    const firstResponse = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    const dropped = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(get('/'));
    await firstResponse;

    server.close();
    await dropped;
    expect(socket.destroyed).toBe(true);
  });

  it('stopListening() refuses new connections, answers the open ones (asking them to close), and idle() waits for the answer in flight', async () => {
    const slow = deferred<HttpResponse>();
    const server = await start((req) => (req.path === '/slow' ? slow.promise : ok('quick')));
    expect(server.idle()).toBeInstanceOf(Promise);
    await server.idle(); // nothing in flight: resolves at once

    // A kept-alive connection, and an answer in flight on another one.
    const kept = net.connect(server.port, HOST);
    kept.on('error', () => undefined);
    const [before] = await new Promise<RawResponse[]>((resolve) => {
      kept.once('data', (b: Buffer) => resolve([{ statusLine: b.toString().split('\r\n')[0]!, headers: new Map(), body: b }]));
      kept.write(get('/'));
    });
    expect(before!.statusLine).toBe('HTTP/1.1 200 OK');
    const inFlight = rawExchange(server.port, get('/slow'), [false]);
    await new Promise((r) => setTimeout(r, 50));

    server.stopListening();
    server.stopListening(); // idempotent
    let idle = false;
    const idled = server.idle().then(() => (idle = true));
    await expect(rawExchange(server.port, get('/'), [false])).rejects.toThrow(/ECONNREFUSED/);
    await new Promise((r) => setTimeout(r, 50));
    expect(idle).toBe(false);

    // The open connection is still answered, and told to close.
    const closed = new Promise<void>((resolve) => kept.once('close', () => resolve()));
    const again = await new Promise<string>((resolve) => {
      kept.once('data', (b: Buffer) => resolve(b.toString()));
      kept.write(get('/'));
    });
    expect(again).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(again.toLowerCase()).toContain('connection: close');
    expect(again.endsWith('quick')).toBe(true);
    await closed;

    slow.resolve(ok('finally'));
    const [r] = await inFlight;
    expect(r!.body.toString()).toBe('finally');
    await idled;
    expect(idle).toBe(true);
  });

  it('listen rejects with a clear error when the port is taken', async () => {
    const first = await start(() => ok('a'));
    await expect(listen(() => ok('b'), { host: HOST, port: first.port })).rejects.toThrow(new RegExp(`could not listen on ${HOST}:${first.port}`));
  });
});
