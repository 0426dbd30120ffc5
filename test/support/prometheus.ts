import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './s3-harness.js';

/** A real Prometheus (Debian's package) scraping the given host:port targets every second. */
export interface RunningPrometheus {
  readonly url: string;
  /** instant query; the vector's samples */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  /** resolves once `up` is 1 for every target (bounded) */
  waitUp(targets: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrometheus(targets: readonly string[], job = 'pitcache'): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-prom-'));
  const port = await freePort();
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 900ms }',
      'scrape_configs:',
      `  - job_name: ${job}`,
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const query = async (expr: string) => {
    const r = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await r.json()) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.status !== 'success') throw new Error(`prometheus query ${expr}: ${JSON.stringify(body)}`);
    return body.data.result;
  };
  return {
    url,
    query,
    async waitUp(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const up = await query(`up{job="${job}"} == 1`).catch(() => []);
        if (up.length >= n) return;
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`prometheus: ${up.length} of ${n} targets up after ${timeoutMs} ms; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
