/**
 * Every child process and temp folder the cluster test creates, so that none outlives it:
 * on a normal end, a failed assertion, an uncaught error, a timeout or Ctrl-C, whatever is
 * still running is killed (SIGKILL) and the folders are removed. The exit hook is
 * synchronous because 'exit' listeners cannot wait.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Children {
  private readonly live = new Set<ChildProcess>();
  private readonly dirs: string[] = [];
  private hooked = false;

  /** Spawns `argv` and tracks it until it exits. */
  spawn(argv: readonly string[], options: SpawnOptions = {}): ChildProcess {
    this.hook();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    this.live.add(child);
    child.once('exit', () => this.live.delete(child));
    // A failed spawn (no such binary) is reported by the caller's exit wait, not thrown here.
    child.once('error', () => this.live.delete(child));
    return child;
  }

  /** A temp folder removed at the end. */
  tempDir(prefix: string): string {
    this.hook();
    const dir = mkdtempSync(join(tmpdir(), `pitcache-cluster-${prefix}-`));
    this.dirs.push(dir);
    return dir;
  }

  /** Kills what still runs and removes the folders; safe to call more than once. */
  cleanUp(): void {
    for (const child of this.live) child.kill('SIGKILL');
    this.live.clear();
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }

  private hook(): void {
    if (this.hooked) return;
    this.hooked = true;
    process.once('exit', () => this.cleanUp());
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        process.stderr.write(`cluster test: ${signal}, stopping every child\n`);
        this.cleanUp();
        process.exit(130);
      });
    }
  }
}

/** Resolves with the exit code (or signal) of a child, or immediately when it has already exited. */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Keeps the last `max` characters a stream wrote, for error messages. */
export function tail(child: ChildProcess, max = 8000): () => string {
  let text = '';
  const keep = (b: Buffer): void => {
    text = (text + b.toString('utf8')).slice(-max);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}
