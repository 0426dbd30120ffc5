import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * A real TCP proxy in front of a server, whose behaviour tests switch at run time to
 * produce the faults a network produces, against the real SDK and no mocks:
 *
 * - `pass`: forwards both ways.
 * - `refuse`: stops listening, so connecting fails with ECONNREFUSED.
 * - `stall`: forwards the request, then only the first `afterBytes` of the response, and
 *   holds the connection open in silence. `connections` limits it to the next N
 *   connections (later ones pass), so "the first attempt stalls, the retry succeeds".
 * - `cut`: like `stall`, but drops the connection instead of holding it (a reset mid-body).
 * - `http500`: answers every request itself with an S3 InternalError, never reaching the
 *   server; `httpError` the same with any status and S3 error code (412 PreconditionFailed).
 * - `dropReused`: a connection that already carried an answer is closed when the next
 *   request arrives on it, before the request reaches the server: what a client sees when
 *   the store closes an idle keep-alive connection just as the client reuses it (s3rver, as
 *   any Node server, closes one after 5 s idle; the race is the client writing first).
 *   `connections` limits it to the next N such requests.
 *
 * Every mode switch drops the open connections, so a pooled keep-alive socket never
 * carries the previous mode into the next test; except the switch to `dropReused`, whose
 * point is the pooled sockets.
 */
export type FaultMode =
  | { readonly kind: 'pass' }
  | { readonly kind: 'refuse' }
  | { readonly kind: 'stall' | 'cut'; readonly afterBytes: number; readonly connections?: number }
  | { readonly kind: 'http500' }
  | { readonly kind: 'dropReused'; readonly connections?: number }
  | { readonly kind: 'httpError'; readonly status: number; readonly code: string };

export interface ProxyStats {
  /** Connections accepted. */
  connections: number;
  /** Response bytes written to clients (forwarded or canned). */
  bytesToClient: number;
  /** Requests answered with a canned error (http500, httpError). */
  cannedErrors: number;
  /** Reused connections closed as a request arrived on them (dropReused). */
  droppedReused: number;
}

function cannedError(status: number, code: string): string {
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
    `<Message>Canned ${code} from the fault proxy.</Message><RequestId>fault-proxy</RequestId></Error>`;
  return `HTTP/1.1 ${status} Canned\r\nContent-Type: application/xml\r\n` + `Content-Length: ${Buffer.byteLength(xml)}\r\nConnection: close\r\n\r\n${xml}`;
}

export class TcpFaultProxy {
  readonly stats: ProxyStats = { connections: 0, bytesToClient: 0, cannedErrors: 0, droppedReused: 0 };
  private mode: FaultMode = { kind: 'pass' };
  private stallsLeft = Infinity;
  /** connections that went silent (stall mode) since the last resetStats */
  private held = 0;
  private heldWaiters: Array<{ readonly n: number; readonly done: () => void }> = [];
  private readonly sockets = new Set<Socket>();
  private listening = true;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly upstreamPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Listens on 127.0.0.1 and a free port, forwarding to 127.0.0.1:`upstreamPort`. */
  static async start(upstreamPort: number): Promise<TcpFaultProxy> {
    const server = createServer();
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => done());
    });
    return new TcpFaultProxy(server, (server.address() as AddressInfo).port, upstreamPort);
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  resetStats(): void {
    Object.assign(this.stats, { connections: 0, bytesToClient: 0, cannedErrors: 0, droppedReused: 0 });
    this.held = 0;
  }

  async setMode(mode: FaultMode): Promise<void> {
    this.mode = mode;
    this.stallsLeft = mode.kind === 'stall' || mode.kind === 'cut' || mode.kind === 'dropReused' ? (mode.connections ?? Infinity) : Infinity;
    if (mode.kind !== 'dropReused') this.dropConnections();
    if (mode.kind === 'refuse' && this.listening) {
      this.listening = false;
      await new Promise<void>((done) => this.server.close(() => done()));
    } else if (mode.kind !== 'refuse' && !this.listening) {
      // The same port again: clients keep their endpoint. Nothing else took it meanwhile
      // in practice; if something did, listen fails loudly here.
      await new Promise<void>((done, fail) => {
        this.server.once('error', fail);
        this.server.listen(this.port, '127.0.0.1', () => {
          this.server.off('error', fail);
          done();
        });
      });
      this.listening = true;
    }
  }

  async close(): Promise<void> {
    this.dropConnections();
    if (this.listening) await new Promise<void>((done) => this.server.close(() => done()));
    this.listening = false;
  }

  private dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /**
   * Resolves once `n` connections have gone silent in stall mode (their allowed bytes
   * written): the moment a test on injected timers lets the stall watchdog's time pass.
   */
  whenHeld(n: number): Promise<void> {
    if (this.held >= n) return Promise.resolve();
    return new Promise((done) => this.heldWaiters.push({ n, done }));
  }

  private wentSilent(): void {
    this.held++;
    this.heldWaiters = this.heldWaiters.filter((w) => {
      if (this.held < w.n) return true;
      w.done();
      return false;
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private accept(client: Socket): void {
    this.stats.connections++;
    this.track(client);
    const mode = this.mode;
    if (mode.kind === 'refuse') {
      client.destroy();
    } else if (mode.kind === 'http500') {
      this.answerWith(client, cannedError(500, 'InternalError'));
    } else if (mode.kind === 'httpError') {
      this.answerWith(client, cannedError(mode.status, mode.code));
    } else if ((mode.kind === 'stall' || mode.kind === 'cut') && this.stallsLeft > 0) {
      this.stallsLeft--;
      this.forward(client, mode.afterBytes, mode.kind === 'cut');
    } else {
      this.forward(client, Infinity, false);
    }
  }

  /** Forwards both ways; of the response only `budget` bytes, then silence (or a cut). */
  private forward(client: Socket, budget: number, cut: boolean): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.upstreamPort });
    this.track(upstream);
    let left = budget;
    let answered = false;
    upstream.on('data', (chunk: Buffer) => {
      answered = true;
      const part = chunk.byteLength <= left ? chunk : chunk.subarray(0, Math.max(0, left));
      left -= part.byteLength;
      this.stats.bytesToClient += part.byteLength;
      if (left > 0) {
        client.write(part);
        return;
      }
      // Hold the connection open without reading on: the client sees a silent server.
      upstream.pause();
      if (!cut) {
        // (an empty write may never call back: nothing is left to send then)
        if (part.byteLength === 0) this.wentSilent();
        else client.write(part, () => this.wentSilent());
        return;
      }
      // A TCP reset once the allowed bytes are out: the connection dies mid-response.
      client.write(part, () => client.resetAndDestroy());
      upstream.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      if (answered && this.mode.kind === 'dropReused' && this.stallsLeft > 0) {
        // The store closed this idle connection; the request written meanwhile is lost.
        this.stallsLeft--;
        this.stats.droppedReused++;
        answered = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
    // A failed upstream fails the client; a clean end was passed on above and must flush.
    upstream.on('close', (hadError) => {
      if (hadError) client.destroy();
    });
    client.on('close', () => upstream.destroy());
  }

  /** Reads the request's head and answers it with `response`, then closes. */
  private answerWith(client: Socket, response: string): void {
    let head = '';
    let answered = false;
    client.on('data', (chunk: Buffer) => {
      if (answered) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      answered = true;
      this.stats.cannedErrors++;
      this.stats.bytesToClient += Buffer.byteLength(response);
      client.end(response);
    });
  }
}
