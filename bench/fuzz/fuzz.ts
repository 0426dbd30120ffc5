/**
 * `npm run bench:fuzz -- [--cases 20000] [--seed N] [--workers 2] [--out bench/fuzz]`
 *
 * The long run of test/fuzz-http.test.ts: the same generated requests (every endpoint's
 * parameters, headers, paths, cursors mutated byte by byte, bodies) and the same checks
 * (never a 500 or a hang, the contract's error body with a stable code, a valid request
 * answered with the same rows between cases), against the built `pitcache serve` on a copy
 * of the demo data with --workers N (and no failed-authentication throttle), and in process as the test runs it. It does not stop
 * at the first finding: every failed check is counted by its kind with the first case that
 * showed it. Writes fuzz.json and fuzz.md (the section RESULTS.md quotes) into --out.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { caseRunner } from '../../test/support/fuzz/run-case.js';
import { fuzzCaseArb, type FuzzCase } from '../../test/support/fuzz/requests.js';
import { readWorld, startFuzzServer } from '../../test/support/fuzz/world.js';
import { startDemoServer } from '../lib/demo-server.js';
import { repoRoot } from '../lib/paths.js';

const TIMEOUT_MS = 20_000;
const BATCH = 500;

interface Finding {
  count: number;
  first: { request: FuzzCase['request']; error: string };
}

interface TargetResult {
  target: string;
  cases: number;
  seconds: number;
  outcomes: Record<string, number>;
  findings: Record<string, Finding>;
  serverErrors: string[];
}

const log = (m: string): void => void process.stderr.write(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** A failure's kind: its message with numbers and quoted text blanked, so one bug counts once. */
const kindOf = (message: string): string =>
  message
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, 'N')
    .slice(0, 160);

async function runTarget(target: string, port: number, cases: number, seed: number, serverErrors: () => string[]): Promise<TargetResult> {
  const world = await readWorld(port);
  const runner = await caseRunner(port, world, TIMEOUT_MS);
  const arb = fuzzCaseArb(world);
  const outcomes: Record<string, number> = {};
  const findings: Record<string, Finding> = {};
  const started = performance.now();
  for (let done = 0; done < cases; done += BATCH) {
    for (const c of fc.sample(arb, { numRuns: Math.min(BATCH, cases - done), seed: seed + done })) {
      try {
        const o = await runner.run(c);
        const k = `${c.kind} ${o.status}${o.code === '' ? '' : ' ' + o.code}`;
        outcomes[k] = (outcomes[k] ?? 0) + 1;
      } catch (e) {
        const message = (e as Error).message;
        const f = (findings[kindOf(message)] ??= { count: 0, first: { request: c.request, error: message } });
        f.count++;
      }
    }
    log(`${target}: ${Math.min(done + BATCH, cases)} cases, ${Object.values(findings).reduce((a, f) => a + f.count, 0)} failed checks`);
  }
  return { target, cases, seconds: (performance.now() - started) / 1000, outcomes, findings, serverErrors: serverErrors() };
}

function markdown(results: readonly TargetResult[], seed: number, command: string): string {
  const lines = [`Command: \`${command}\` (seed ${seed}).`, ''];
  for (const r of results) {
    const failed = Object.values(r.findings).reduce((a, f) => a + f.count, 0);
    lines.push(
      `**${r.target}**: ${r.cases.toLocaleString('en')} cases in ${r.seconds.toFixed(0)} s, ${failed} failed checks, ${r.serverErrors.length} error lines in the server's log.`,
      '',
    );
    lines.push('| case kind | status | code | cases |', '|---|---:|---|---:|');
    for (const [k, n] of Object.entries(r.outcomes).sort()) {
      const [kind, status, code] = k.split(' ');
      lines.push(`| ${kind} | ${status} | ${code ?? ''} | ${n} |`);
    }
    lines.push('');
    for (const [k, f] of Object.entries(r.findings)) {
      lines.push(`- ${f.count}x ${k}: \`${f.first.request.method} ${f.first.request.target.slice(0, 300)}\``);
    }
    if (Object.keys(r.findings).length > 0) lines.push('');
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      cases: { type: 'string', default: '20000' },
      seed: { type: 'string', default: String(Date.now() % 1_000_000) },
      workers: { type: 'string', default: '2' },
      out: { type: 'string', default: 'bench/fuzz' },
    },
  });
  const cases = Number(a.cases);
  const seed = Number(a.seed);
  const out = resolve(repoRoot(), a.out!);
  await mkdir(out, { recursive: true });
  const results: TargetResult[] = [];

  // The built server as operators run it, with its serving threads.
  // No failed-authentication throttle: past its limit every case (and the valid request between
  // them) would be the throttle's 429 from this one address; it has tests of its own.
  const demo = await startDemoServer('fuzz', ['--workers', a.workers!, '--auth-fail-limit', '0']);
  try {
    const errors = (): string[] =>
      demo.server
        .output()
        .split('\n')
        .filter((l) => l.includes('"level":"error"'));
    results.push(await runTarget(`pitcache serve --workers ${a.workers}`, demo.port, cases, seed, errors));
  } finally {
    await demo.stop();
  }
  // In process, as the test runs it (every cache on and small).
  const inProcess = await startFuzzServer();
  try {
    results.push(await runTarget("in process (the test's server)", inProcess.port, cases, seed + 1, () => inProcess.errors));
  } finally {
    await inProcess.close();
  }

  const command = `npm run bench:fuzz -- --cases ${cases} --seed ${seed} --workers ${a.workers}`;
  await writeFile(join(out, 'fuzz.json'), JSON.stringify({ seed, command, results }, null, 2) + '\n');
  await writeFile(join(out, 'fuzz.md'), markdown(results, seed, command) + '\n');
  log(`wrote ${join(out, 'fuzz.md')}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
