/**
 * One `pitcache serve` replica: the built CLI as its own process on ports chosen once, so
 * that a restart comes back where the balancer and Prometheus expect it. Its access log
 * (one JSON line per request, with the record id every answer carries in `x-request-id`)
 * tells which replica answered which request, across restarts.
 */
import type { ChildProcess } from 'node:child_process';
import { cliPath } from '../../bench/lib/paths.js';
import type { Children } from './children.js';
import { exitOf } from './children.js';

interface LogLine {
  readonly msg?: string;
  readonly record_id?: string;
  readonly [field: string]: unknown;
}

export class Replica {
  private child: ChildProcess | null = null;
  private readonly recordIds = new Set<string>();
  private recent: string[] = [];
  private readyWaiter: ((ok: boolean) => void) | null = null;
  /** `serve` processes started for this replica so far */
  starts = 0;
  /** every `dataset loaded` line: when it was read and the load time the replica measured */
  readonly loads: Array<{ dataset: string; generation: number; loadMs: number; at: number }> = [];

  constructor(
    private readonly children: Children,
    readonly name: string,
    readonly port: number,
    readonly metricsPort: number,
    private readonly args: readonly string[],
    private readonly env: NodeJS.ProcessEnv,
    /** off for benchmarks: the access log is how the test attributes answers, not free */
    private readonly accessLog = true,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and resolves once it logged `ready` (bounded; needs --log-level info or lower). */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    const child = this.children.spawn(
      [
        process.execPath,
        cliPath(),
        'serve',
        '--host',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--metrics-port',
        String(this.metricsPort),
        this.accessLog ? '--access-log' : '--no-access-log',
        ...this.args,
      ],
      { env: { ...process.env, ...this.env } },
    );
    this.child = child;
    this.starts++;
    let partial = '';
    child.stderr!.on('data', (b: Buffer) => {
      partial += b.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const text of lines) this.take(text);
    });
    child.stdout!.on('data', (b: Buffer) => this.keep(b.toString('utf8')));
    const ready = new Promise<boolean>((resolve) => (this.readyWaiter = resolve));
    const timer = setTimeout(() => this.readyWaiter?.(false), timeoutMs);
    const exited = exitOf(child).then(() => false);
    const ok = await Promise.race([ready, exited]);
    clearTimeout(timer);
    this.readyWaiter = null;
    if (!ok) throw new Error(`${this.name} did not become ready within ${timeoutMs} ms:\n${this.log()}`);
  }

  /** SIGTERM, then the exit (bounded): the exit code and how long the drain and close took. */
  async stop(boundMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const child = this.child;
    if (child === null || !this.running) throw new Error(`${this.name} is not running`);
    const started = Date.now();
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), boundMs)));
    const end = await Promise.race([exitOf(child), bound]);
    clearTimeout(timer);
    if (end === null) {
      child.kill('SIGKILL');
      throw new Error(`${this.name} did not exit within ${boundMs} ms of SIGTERM:\n${this.log()}`);
    }
    return { ...end, ms: Date.now() - started };
  }

  /** SIGKILL (a crash: no drain, no goodbye); resolves on the exit. */
  async kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = this.child;
    if (child === null || !this.running) throw new Error(`${this.name} is not running`);
    child.kill('SIGKILL');
    return exitOf(child);
  }

  /** Whether this replica (in any of its processes) wrote the access-log line of this record id. */
  answered(recordId: string): boolean {
    return this.recordIds.has(recordId);
  }

  get requestsLogged(): number {
    return this.recordIds.size;
  }

  /** The last lines it wrote, for error messages. */
  log(): string {
    return this.recent.join('\n');
  }

  private take(text: string): void {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      this.keep(text);
      return;
    }
    if (line.msg === 'request' && typeof line.record_id === 'string') {
      this.recordIds.add(line.record_id);
      return;
    }
    this.keep(text);
    if (line.msg === 'ready') this.readyWaiter?.(true);
    if (line.msg === 'dataset loaded') {
      this.loads.push({ dataset: String(line['dataset']), generation: Number(line['generation']), loadMs: Number(line['load_ms']), at: Date.now() });
    }
  }

  private keep(text: string): void {
    this.recent.push(text);
    if (this.recent.length > 40) this.recent = this.recent.slice(-40);
  }
}
