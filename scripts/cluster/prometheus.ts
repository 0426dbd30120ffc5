/**
 * Debian's Prometheus as a child process with a temp configuration and storage folder,
 * scraping the replicas' --metrics-port listeners every second.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../bench/lib/proc.js';
import type { Children } from './children.js';
import { exitOf, tail } from './children.js';

export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export function prometheusVersion(): string {
  const r = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  return /version (\S+)/.exec((r.stdout ?? '') + (r.stderr ?? ''))?.[1] ?? 'unknown';
}

export class Prometheus {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly job: string,
    private readonly output: () => string,
  ) {}

  static async start(children: Children, targets: readonly string[], job = 'pitcache'): Promise<Prometheus> {
    const dir = children.tempDir('prometheus');
    const port = await freePort();
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, scrape_timeout: 900ms }',
        'scrape_configs:',
        `  - job_name: ${job}`,
        '    static_configs:',
        `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
        '',
      ].join('\n'),
    );
    const child = children.spawn([
      'prometheus',
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ]);
    return new Prometheus(child, `http://127.0.0.1:${port}`, job, tail(child));
  }

  /** An instant query's samples. */
  async query(expr: string): Promise<Sample[]> {
    const r = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await r.json()) as { status: string; data?: { result: Sample[] } };
    if (body.status !== 'success' || body.data === undefined) throw new Error(`prometheus query ${expr}: ${JSON.stringify(body)}`);
    return body.data.result;
  }

  /** Resolves with the ms until `up` is 1 for `n` targets of the job (bounded). */
  async waitUp(n: number, boundMs = 30_000): Promise<number> {
    const started = Date.now();
    for (;;) {
      const up = await this.query(`up{job="${this.job}"} == 1`).catch(() => []);
      if (up.length >= n) return Date.now() - started;
      if (Date.now() - started > boundMs || this.child.exitCode !== null)
        throw new Error(`prometheus: ${up.length} of ${n} targets up after ${boundMs} ms:\n${this.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Resolves with the samples once `expr` has `n` of them, all with value `value` (bounded). */
  async waitAll(expr: string, n: number, value: string, boundMs = 15_000): Promise<Sample[]> {
    const started = Date.now();
    for (;;) {
      const got = await this.query(expr).catch(() => [] as Sample[]);
      if (got.length === n && got.every((s) => s.value[1] === value)) return got;
      if (Date.now() - started > boundMs)
        throw new Error(`prometheus: ${expr} is ${JSON.stringify(got.map((s) => [s.metric, s.value[1]]))}, not ${n} x ${value}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await exitOf(this.child);
  }
}
