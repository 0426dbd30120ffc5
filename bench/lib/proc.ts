/** Child processes of the benchmark: spawn (optionally pinned), memory, readiness, ports. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

let tasksetOk: boolean | null = null;

/** `taskset` exists and this machine has at least two CPUs to split. */
export function canPin(): boolean {
  if (tasksetOk === null) tasksetOk = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  return tasksetOk;
}

/** argv prefixed with `taskset -c CPUS` when pinning is possible and asked for. */
export function pinned(cpus: string | undefined, argv: readonly string[]): string[] {
  return cpus !== undefined && canPin() ? ['taskset', '-c', cpus, ...argv] : [...argv];
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly pid: number;
  /** stderr and stdout so far (capped), for error messages */
  output(): string;
  stop(): Promise<void>;
}

export function spawnLogged(argv: readonly string[], env?: NodeJS.ProcessEnv): Spawned {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  let out = '';
  const keep = (b: Buffer): void => {
    out = (out + b.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    child,
    pid: child.pid!,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface MemoryReading {
  /** VmRSS, bytes */
  readonly rss: number;
  /** VmHWM (peak RSS), bytes */
  readonly hwm: number;
}

export function readMemory(pid: number): MemoryReading | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/PID/stat;
 * null when it is gone. On a shared VM a process's CPU per request moves far less than its
 * requests per second, which count every other process's minutes too.
 */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** USER_HZ: Linux reports /proc times in 1/100 s on every architecture Node runs on here. */
const CLOCK_TICKS = 100;

/**
 * Ports freePort has handed out in this process. bind(0) may give a port again once it is
 * closed, and uWS listens with SO_REUSEPORT: two servers handed the same port would both
 * bind it and share its connections (a cluster run once saw API requests answered by a
 * replica's metrics listener: "only /metrics is served on this port").
 */
const handedOut = new Set<number>();

/** A port free now and never handed out before by this process. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unboundPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

function unboundPort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

/** Polls `url` until it answers 200; fails early when the process exits. */
export async function waitFor200(url: string, proc: Spawned, timeoutMs: number, pollMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (proc.child.exitCode !== null) throw new Error(`process exited (${proc.child.exitCode}) before ${url} was ready:\n${proc.output().slice(-2000)}`);
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms:\n${proc.output().slice(-2000)}`);
}

/** Polls `url` until it answers at all (any status: a server without /readyz); fails after `timeoutMs` with `output()`. */
export async function waitAnswering(url: string, output: () => string, timeoutMs: number, exited: () => boolean = () => false): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch {
      if (Date.now() > end || exited()) throw new Error(`${url} did not answer:\n${output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** stdout of a command, or '' when it fails (version probes). */
export function sh(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}
