/**
 * Runs a pitcache command in this process, then writes its peak resident memory on the last
 * line of stderr: `MEASURED {"code":0,"maxRssKiB":...,"vmHwmKiB":...}`. Usage:
 * `node [--max-old-space-size=N] --import tsx measured-command.ts <path of a *-command.ts> <args...>`;
 * the command module is a path so that a benchmark can run two checkouts' code alike.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [modulePath, ...args] = process.argv.slice(2);
const mod = (await import(pathToFileURL(modulePath!).href)) as Record<string, unknown>;
const run = Object.values(mod).find((v) => typeof v === 'function' && /Command$/.test((v as { name: string }).name)) as (
  argv: string[],
  env: NodeJS.ProcessEnv,
) => Promise<number>;
const started = process.hrtime.bigint();
const code = await run(args, process.env);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const heapUsedMiB = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
process.stderr.write(
  `\nMEASURED ${JSON.stringify({ code, ms, heapUsedMiB, maxRssKiB: process.resourceUsage().maxRSS, vmHwmKiB: hwm === null ? null : Number(hwm[1]) })}\n`,
);
process.exitCode = code;
