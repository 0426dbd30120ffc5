import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * A slow S3 for crash tests: a TCP proxy in front of s3rver that reads the HTTP/1.1
 * requests going through it and, at the first PUT whose path matches `halt.path`, stops
 * forwarding: the whole request (`half` false: the upload never started) or after its
 * headers and half its body (`half` true: killed mid-upload). `halted` resolves then, and
 * the test kills the publisher with SIGKILL at exactly that point. Every other request,
 * before and after, passes untouched; answers pass untouched.
 */
export interface HaltAt {
  readonly path: RegExp;
  readonly half: boolean;
}

export class UploadHaltProxy {
  private halt: HaltAt | null = null;
  private onHalt: ((what: string) => void) | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly upstreamPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(upstreamPort: number): Promise<UploadHaltProxy> {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return new UploadHaltProxy(server, (server.address() as AddressInfo).port, upstreamPort);
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Arms the halt; resolves with the request line once a request stopped there. `null`: pass everything. */
  arm(halt: HaltAt | null): Promise<string> {
    this.halt = halt;
    return new Promise((resolve) => (this.onHalt = resolve));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private accept(client: Socket): void {
    const upstream = createConnection(this.upstreamPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.pipe(client);

    let head = Buffer.alloc(0);
    /** body bytes of the current request still to forward; -1 while reading headers */
    let body = -1;
    /** body bytes to forward before holding (a half upload); Infinity otherwise */
    let budget = Infinity;
    let held = false;
    /** the request line of a half upload, announced once its half is through */
    let halting: string | null = null;
    const hold = (line: string): void => {
      held = true;
      this.onHalt?.(line);
    };
    client.on('data', (chunk: Buffer) => {
      let rest = chunk;
      while (rest.length > 0 && !held) {
        if (body > 0) {
          const n = Math.min(body, rest.length, budget);
          upstream.write(rest.subarray(0, n));
          body -= n;
          budget -= n;
          rest = rest.subarray(n);
          if (budget === 0) hold(halting!);
          continue;
        }
        head = Buffer.concat([head, rest]);
        rest = Buffer.alloc(0);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) break;
        const headers = head.subarray(0, end + 4);
        rest = head.subarray(end + 4);
        head = Buffer.alloc(0);
        const text = headers.toString('latin1');
        const line = text.slice(0, text.indexOf('\r\n'));
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
        const [method, path] = line.split(' ');
        const halt = this.halt;
        if (halt !== null && method === 'PUT' && halt.path.test(decodeURIComponent((path ?? '').split('?')[0]!))) {
          this.halt = null;
          if (!halt.half) {
            hold(line);
          } else {
            upstream.write(headers);
            body = length;
            budget = Math.floor(length / 2);
            halting = line;
          }
          continue;
        }
        upstream.write(headers);
        body = length;
        budget = Infinity;
      }
    });
  }
}
