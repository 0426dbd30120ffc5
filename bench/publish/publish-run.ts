/**
 * One `pitcache publish` in a child process of its own: its time, and its peak RSS printed
 * at its exit by a preloaded module (whatever the command does, its process's high-water
 * mark is the figure). bench:publish and bench:large run publishes through this.
 */
import { spawn } from 'node:child_process';

/**
 * Prints the peak RSS (KiB) on stderr when the process exits, whatever the command: VmHWM,
 * the process's own high-water mark (getrusage's maxRSS carries the parent's over exec).
 */
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import { readFileSync } from 'node:fs'; process.on('exit', () => process.stderr.write('\\nPEAK_RSS_KIB ' + /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1] + '\\n'));",
)}`;

export interface Run {
  readonly ok: boolean;
  readonly ms: number;
  readonly rssMiB: number;
  readonly out: string;
}

export function publishRun(cli: string, argv: readonly string[], capMiB: number | null): Promise<Run> {
  const node = [...(capMiB === null ? [] : [`--max-old-space-size=${capMiB}`]), '--import', PRELOAD, cli, 'publish', ...argv];
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, node, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const rss = /PEAK_RSS_KIB (\d+)/.exec(err);
      const oom = /heap out of memory/.test(err);
      if (code !== 0 && !oom) process.stderr.write(`publish exit ${code}: ${err.slice(-1000)}\n`);
      done({
        ok: code === 0,
        ms,
        rssMiB: rss === null ? NaN : Number(rss[1]) / 1024,
        out: out.trim() || (oom ? 'JS heap out of memory' : err.trim().split('\n').at(-1)!),
      });
    });
  });
}
