import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalSource } from '../../src/source/local-source.js';
import { buildArrowSnapshot } from '../../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../../src/snapshot/write-generation.js';
import { pitSnapshot, type PitRow } from './fixtures.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** The source folder a served process reads (`--source dir/src`): generation 1 of pemi/grid_stress holding `rows`, one series per bidding_zone. */
export async function writeGridStress(dir: string, rows: readonly PitRow[]): Promise<void> {
  await writeGeneration(
    new LocalSource(join(dir, 'src')),
    { productId: 'pemi', dataset: 'grid_stress' },
    buildArrowSnapshot(pitSnapshot(['bidding_zone'], rows)),
    1,
    '2026-11-01T00:00:00Z',
  );
}

/** One row a day on 2026-03-02 for each of DE and FR. */
export const TWO_ZONES: readonly PitRow[] = ['DE', 'FR'].map((zone) => ({
  date: '2026-03-02',
  eff: '2026-03-02',
  obs: '2026-03-02T06:00:00Z',
  key: { bidding_zone: zone },
  tag: zone,
  value: 1,
}));

/** One JSON line of the server log. */
export interface LogLine {
  readonly t: string;
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/**
 * `pitcache serve` as its own process (the CLI from source through tsx, as `npx pitcache`
 * runs the built one): signals reach it as they would under an orchestrator.
 */
export interface ServeProcess {
  readonly child: ChildProcess;
  /** the API port and, when asked for, the metrics port (read from the log) */
  readonly port: number;
  readonly metricsPort: number | null;
  readonly url: string;
  /** every log line so far */
  logs(): LogLine[];
  /** resolves with the first log line (from now or before) that `match` accepts */
  waitLog(match: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** the process's end: exit code and signal */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (cleanup) */
  kill(): Promise<void>;
}

export async function startServeProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, readyTimeoutMs = 60_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--no-access-log', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: LogLine[] = [];
  const other: string[] = [];
  const waiters: Array<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  let partial = '';
  child.stderr!.on('data', (b: Buffer) => {
    partial += b.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const text of parts) {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        other.push(text);
        continue;
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stdout!.on('data', (b: Buffer) => other.push(b.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const waitLog = (match: (l: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = {
        match,
        resolve: (l: LogLine) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        reject(new Error(`no matching log line within ${timeoutMs} ms; log: ${JSON.stringify(lines.slice(-20))} ${other.join('\n').slice(-2000)}`));
      }, timeoutMs);
      waiters.push(w);
      void exited.then(({ code, signal }) => {
        if (!waiters.includes(w)) return;
        waiters.splice(waiters.indexOf(w), 1);
        clearTimeout(timer);
        reject(new Error(`serve exited (${code ?? signal}) before the log line; log: ${JSON.stringify(lines.slice(-20))} ${other.join('\n').slice(-2000)}`));
      });
    });
  };

  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    await waitLog((l) => l.msg === 'ready', readyTimeoutMs);
  } catch (e) {
    await kill();
    throw e;
  }
  const port = Number(lines.find((l) => l.msg === 'listening')!['port']);
  const m = lines.find((l) => l.msg === 'metrics listening');
  return {
    child,
    port,
    metricsPort: m === undefined ? null : Number(m['port']),
    url: `http://127.0.0.1:${port}`,
    logs: () => [...lines],
    waitLog,
    exited,
    kill,
  };
}
