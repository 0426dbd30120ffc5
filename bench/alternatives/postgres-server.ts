/**
 * A throw-away PostgreSQL cluster for the bench: initdb into a temporary folder, a private
 * port on 127.0.0.1, settings for a read-only in-memory workload, stopped and deleted in
 * teardown. PostgreSQL refuses to run as root, so under root the server runs as the
 * `postgres` user (runuser); clients (psql, pgbench) connect over TCP with trust auth.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { userInfo } from 'node:os';

export interface PgSettings {
  /** e.g. "2GB" (default: env BENCH_PG_SHARED_BUFFERS or 2GB) */
  readonly sharedBuffers?: string;
  readonly maxConnections?: number;
}

/** The newest installed server's bin folder (Debian: /usr/lib/postgresql/<major>/bin), else PATH. */
export function findPgBin(): string | null {
  if (process.env.PG_BIN !== undefined) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((d) => existsSync(join(root, d, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0] !== undefined) return join(root, majors[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pgbench'))) return dir;
  return null;
}

export interface RunResultText {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCommand(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; input?: Readable | string; asUser?: string } = {},
): Promise<RunResultText> {
  const [file, argv] = opts.asUser !== undefined ? ['runuser', ['-u', opts.asUser, '--', cmd, ...args]] : [cmd, [...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.on('error', () => undefined); // a failed COPY closes stdin early; the exit code tells
    if (typeof opts.input === 'string') child.stdin.end(opts.input);
    else if (opts.input !== undefined) opts.input.pipe(child.stdin);
    else child.stdin.end();
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export class PgServer {
  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly asUser: string | undefined,
  ) {}

  static async start(settings: PgSettings = {}): Promise<PgServer> {
    const bin = findPgBin();
    if (bin === null) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
    const asUser = userInfo().uid === 0 ? 'postgres' : undefined;
    const dir = mkdtempSync('/tmp/pitcache-pg-');
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    if (asUser !== undefined) {
      const ids = await runCommand('id', ['-u', asUser]);
      const gid = await runCommand('id', ['-g', asUser]);
      if (ids.code !== 0) throw new Error(`no user ${asUser} to run PostgreSQL as (root is refused)`);
      chownSync(dir, Number(ids.stdout), Number(gid.stdout));
      chownSync(data, Number(ids.stdout), Number(gid.stdout));
    }
    const init = await runCommand(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], {
      asUser,
      cwd: dir,
    });
    if (init.code !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
    const port = await freePort();
    const sharedBuffers = settings.sharedBuffers ?? process.env.BENCH_PG_SHARED_BUFFERS ?? '2GB';
    // Read-only after the load: durability settings only speed the load, they change no read.
    // One-core-per-query plans: parallel workers cost more than they give at 64 clients on 2 cores.
    appendFileSync(
      join(data, 'postgresql.conf'),
      [
        `listen_addresses = '127.0.0.1'`,
        `port = ${port}`,
        `unix_socket_directories = '${dir}'`,
        `max_connections = ${settings.maxConnections ?? 200}`,
        `shared_buffers = '${sharedBuffers}'`,
        `effective_cache_size = '8GB'`,
        `work_mem = '64MB'`,
        `maintenance_work_mem = '1GB'`,
        `fsync = off`,
        `synchronous_commit = off`,
        `full_page_writes = off`,
        `wal_level = minimal`,
        `max_wal_senders = 0`,
        `max_wal_size = '8GB'`,
        `checkpoint_timeout = '30min'`,
        `autovacuum = off`,
        `jit = off`,
        `max_parallel_workers_per_gather = 0`,
        `random_page_cost = 1.1`,
        `timezone = 'UTC'`,
        `logging_collector = off`,
        '',
      ].join('\n'),
    );
    const server = new PgServer(bin, dir, port, asUser);
    const started = await runCommand(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '120', 'start'], { asUser, cwd: dir });
    if (started.code !== 0) {
      const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`PostgreSQL did not start: ${started.stderr}${log.slice(-2000)}`);
    }
    return server;
  }

  connArgs(): string[] {
    return ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', 'postgres'];
  }

  /**
   * Runs statements through one psql (unaligned, tuples only), all in one transaction;
   * `input` feeds a COPY ... FROM STDIN among them. Rejects with the server's message.
   */
  async psql(statements: string | readonly string[], input?: Readable): Promise<string> {
    const list = typeof statements === 'string' ? [statements] : statements;
    const sql = list.join('; ');
    const args = [...this.connArgs(), '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', ...(list.length > 1 ? ['-1'] : []), ...list.flatMap((s) => ['-c', s])];
    const r = await runCommand(join(this.bin, 'psql'), args, { input, cwd: this.dir });
    if (r.code !== 0) throw new Error(`psql: ${r.stderr.trim()}\n  in: ${sql.slice(0, 400)}`);
    return r.stdout;
  }

  /** A long-lived psql for many small statements (the parity check, counts). */
  session(): PsqlSession {
    return new PsqlSession(spawn(join(this.bin, 'psql'), [...this.connArgs(), '-X', '-q', '-A', '-t'], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Proportional set size of the postmaster and its children (shared buffers counted once). */
  memoryBytes(): number {
    const pid = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    let total = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (Number(entry) !== pid && ppid !== pid) continue;
        const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, 'utf8'));
        if (m !== null) total += Number(m[1]) * 1024;
      } catch {
        // the process ended while we looked
      }
    }
    return total;
  }

  async version(): Promise<string> {
    return (await this.psql('SHOW server_version')).trim();
  }

  async stop(): Promise<void> {
    await runCommand(join(this.bin, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-w', '-t', '60', '-m', 'fast', 'stop'], { asUser: this.asUser, cwd: this.dir });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Statements go to one psql process; each is followed by an \echo of a marker with psql's
 * ERROR and LAST_ERROR_MESSAGE variables, so the output of one statement is everything
 * before its marker and its failure is read from stdout too (stderr would race).
 */
export class PsqlSession {
  private out = '';
  private waiting: { marker: string; resolve: (s: string) => void; reject: (e: Error) => void } | null = null;
  private n = 0;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      this.out += d;
      this.settle();
    });
    child.stderr.resume();
  }

  private settle(): void {
    const w = this.waiting;
    if (w === null) return;
    const line = w.marker + ' ';
    const found = this.out.startsWith(line) ? 0 : this.out.indexOf('\n' + line);
    if (found < 0) return;
    const at = found === 0 && this.out.startsWith(line) ? 0 : found + 1;
    const eol = this.out.indexOf('\n', at);
    if (eol < 0) return;
    const text = this.out.slice(0, at);
    const status = this.out.slice(at + w.marker.length + 1, eol);
    this.out = this.out.slice(eol + 1);
    this.waiting = null;
    if (status.startsWith('true')) w.reject(new Error(`psql: ${status.slice(5)}`));
    else w.resolve(text);
  }

  query(sql: string): Promise<string> {
    if (this.waiting !== null) throw new Error('PsqlSession: one statement at a time');
    const marker = `__pitcache_done_${++this.n}__`;
    return new Promise((resolve, reject) => {
      this.waiting = { marker, resolve, reject };
      this.child.stdin.write(`${sql.trim().replace(/;$/, '')};\n\\echo ${marker} :ERROR :LAST_ERROR_MESSAGE\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
