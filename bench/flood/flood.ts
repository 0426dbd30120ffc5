/**
 * `npm run bench:flood -- [--seconds 5] [--guessers 16] [--workers 1]`
 *
 * Key guessing against the demo server with the default --auth-fail-limit (30/60s, over
 * `--workers` serving threads: the failures of all threads count in one table, so the limit
 * is the same with any number): `--guessers` keep-alive connections from 127.0.0.2 send wrong keys back
 * to back for `--seconds`, while one client from 127.0.0.1 sends valid-key requests one
 * after the other. Reports how many guesses were answered (401) before the 429s began and
 * how fast, the 429 rate after, and what the valid client saw (statuses, p50/p99). Bounded
 * in time; loopback only. Writes bench/flood/RESULTS-flood.{md,json} (RESULTS-flood-w<N>
 * with --workers N other than 1).
 */
import http from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO_KEY } from '../../src/demo/ensure-demo.js';
import { startDemoServer } from '../lib/demo-server.js';
import { repoRoot } from '../lib/paths.js';

const PATH = '/gbsi_eu/system_stress?country=DE&date_from=2025-06-01&date_to=2025-06-30';

function once(agent: http.Agent, port: number, key: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: PATH, agent, headers: { 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: { seconds: { type: 'string', default: '5' }, guessers: { type: 'string', default: '16' }, workers: { type: 'string', default: '1' } },
  });
  const seconds = Number(a.seconds);
  const guessers = Number(a.guessers);
  const workers = Number(a.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers: ${a.workers} is not a whole number of threads`);
  const demo = await startDemoServer('flood', ['--workers', String(workers)]);
  try {
    const bad = new http.Agent({ keepAlive: true, localAddress: '127.0.0.2', maxSockets: guessers });
    const good = new http.Agent({ keepAlive: true, localAddress: '127.0.0.1', maxSockets: 1 });
    // Warm the valid client's connection and the server before the clock starts.
    for (let i = 0; i < 50; i++) await once(good, demo.port, DEMO_KEY);
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    const guesses = { 401: 0, 429: 0, other: 0 };
    let firstRefusalMs = NaN;
    let last401Ms = NaN;
    const guesser = async (): Promise<void> => {
      for (let i = 0; performance.now() < end; i++) {
        const status = await once(bad, demo.port, `wrong-key-${i}`);
        const at = performance.now() - t0;
        if (status === 401) {
          guesses[401]++;
          last401Ms = at;
        } else if (status === 429) {
          guesses[429]++;
          if (Number.isNaN(firstRefusalMs)) firstRefusalMs = at;
        } else guesses.other++;
      }
    };
    const valid: number[] = [];
    const validStatus: Record<string, number> = {};
    const validClient = async (): Promise<void> => {
      while (performance.now() < end) {
        const s = performance.now();
        const status = await once(good, demo.port, DEMO_KEY);
        valid.push(performance.now() - s);
        validStatus[status] = (validStatus[status] ?? 0) + 1;
      }
    };
    await Promise.all([...Array.from({ length: guessers }, guesser), validClient()]);
    const elapsed = (performance.now() - t0) / 1000;
    const result = {
      command: `npm run bench:flood -- --seconds ${seconds} --guessers ${guessers}${workers === 1 ? '' : ` --workers ${workers}`}`,
      workers,
      limit: '30/60s (default)',
      guesses401: guesses[401],
      last401Ms,
      firstRefusalMs,
      refused429: guesses[429],
      refusedPerSecond: guesses[429] / Math.max(0.001, elapsed - firstRefusalMs / 1000),
      other: guesses.other,
      valid: { requests: valid.length, statuses: validStatus, p50Ms: pct(valid, 50), p99Ms: pct(valid, 99), perSecond: valid.length / elapsed },
    };
    const md = [
      `Command: \`${result.command}\` (demo data, ${workers === 1 ? 'one serving thread' : `${workers} serving threads`}, loopback; ${guessers} keep-alive connections from 127.0.0.2 sending wrong keys, one client from 127.0.0.1 with a valid key, for ${seconds} s).`,
      '',
      '| measure | value |',
      '|---|---:|',
      `| wrong keys answered 401 before the throttle | ${result.guesses401} (the last at ${last401Ms.toFixed(1)} ms) |`,
      `| first 429 to the guessing address | ${firstRefusalMs.toFixed(1)} ms |`,
      `| 429s after that | ${result.refused429} (${Math.round(result.refusedPerSecond)}/s) |`,
      `| valid client: requests, statuses | ${valid.length}, ${JSON.stringify(validStatus)} |`,
      `| valid client: p50 / p99 | ${result.valid.p50Ms.toFixed(2)} / ${result.valid.p99Ms.toFixed(2)} ms |`,
      '',
    ].join('\n');
    const name = workers === 1 ? 'RESULTS-flood' : `RESULTS-flood-w${workers}`;
    await writeFile(join(repoRoot(), `bench/flood/${name}.md`), md);
    await writeFile(join(repoRoot(), `bench/flood/${name}.json`), JSON.stringify(result, null, 2) + '\n');
    console.log(md);
    bad.destroy();
    good.destroy();
  } finally {
    await demo.stop();
  }
}

await main();
