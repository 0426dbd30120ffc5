/**
 * Debian's HAProxy as a child process (foreground, `-db`), with its runtime API on a unix
 * socket: the test reads the servers' health states and retry counters from `show stat`.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Children } from './children.js';
import { exitOf, tail } from './children.js';
import { statsConfig } from './haproxy-config.js';

export interface ServerStat {
  readonly backend: string;
  readonly server: string;
  /** UP, DOWN, `UP 1/2` (going down), `DOWN 1/2` (coming up), MAINT... */
  readonly status: string;
  /** requests retried on another connection / redispatched to another server */
  readonly retries: number;
  readonly redispatches: number;
  /** sessions the server received */
  readonly sessions: number;
  /** sessions open on the server now */
  readonly current: number;
  /** responses that failed (the server closed or reset the connection before answering whole) */
  readonly responseErrors: number;
  /** transfers the server aborted */
  readonly serverAborts: number;
  /** connections to the server that could not be made (retried elsewhere when allowed) */
  readonly connectErrors: number;
}

export function haproxyVersion(): string {
  const r = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  return /HAProxy version (\S+)/.exec(r.stdout ?? '')?.[1] ?? 'unknown';
}

export class Haproxy {
  private constructor(
    private readonly child: ChildProcess,
    private readonly socket: string,
    readonly url: string,
    private readonly output: () => string,
  ) {}

  /**
   * Writes `config` and the runtime API's `global` section into `dir`, checks them with
   * `haproxy -c`, starts HAProxy and waits until its runtime API answers.
   */
  static async start(children: Children, dir: string, config: string, port: number): Promise<Haproxy> {
    const socket = join(dir, 'admin.sock');
    const files = [join(dir, 'haproxy.cfg'), join(dir, 'stats.cfg')];
    writeFileSync(files[0]!, config);
    writeFileSync(files[1]!, statsConfig(socket));
    const args = files.flatMap((f) => ['-f', f]);
    const check = spawnSync('haproxy', ['-c', '-q', ...args], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c refused the configuration:\n${check.stdout}${check.stderr}\n${config}`);
    const child = children.spawn(['haproxy', '-db', ...args]);
    const output = tail(child);
    const h = new Haproxy(child, socket, `http://127.0.0.1:${port}`, output);
    const end = Date.now() + 20_000;
    for (;;) {
      try {
        await h.stats();
        return h;
      } catch (e) {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`haproxy did not start (${(e as Error).message}):\n${output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** One command on the runtime API; its whole answer. */
  command(cmd: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const c = connect(this.socket);
      let out = '';
      c.setEncoding('utf8');
      c.on('data', (s: string) => (out += s));
      c.on('end', () => resolve(out));
      c.on('error', reject);
      c.end(cmd + '\n');
    });
  }

  /** Every server line of `show stat`. */
  async stats(): Promise<ServerStat[]> {
    const text = await this.command('show stat');
    const [head, ...rows] = text.split('\n').filter((l) => l !== '');
    if (head === undefined || !head.startsWith('# ')) throw new Error(`unexpected show stat answer: ${text.slice(0, 200)}`);
    const cols = head.slice(2).split(',');
    const at = (name: string): number => cols.indexOf(name);
    return rows
      .map((r) => r.split(','))
      .filter((f) => f[at('svname')] !== 'FRONTEND' && f[at('svname')] !== 'BACKEND')
      .map((f) => ({
        backend: f[at('pxname')]!,
        server: f[at('svname')]!,
        status: f[at('status')]!,
        retries: Number(f[at('wretr')] || 0),
        redispatches: Number(f[at('wredis')] || 0),
        sessions: Number(f[at('stot')] || 0),
        current: Number(f[at('scur')] || 0),
        responseErrors: Number(f[at('eresp')] || 0),
        serverAborts: Number(f[at('srv_abrt')] || 0),
        connectErrors: Number(f[at('econ')] || 0),
      }));
  }

  /** Resolves with the ms it took until `server` shows `status` exactly (bounded). */
  async waitStatus(server: string, status: 'UP' | 'DOWN', boundMs = 20_000): Promise<number> {
    const started = Date.now();
    for (;;) {
      const s = (await this.stats()).find((x) => x.server === server);
      if (s?.status === status) return Date.now() - started;
      if (Date.now() - started > boundMs) throw new Error(`haproxy: ${server} is ${s?.status ?? 'missing'}, not ${status}, after ${boundMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await exitOf(this.child);
  }

  log(): string {
    return this.output();
  }
}
