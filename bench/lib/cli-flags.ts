/** Which `serve` flags the built CLI knows: the bench also measures older builds, which lack later flags. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cliPath } from './paths.js';

let help: string | null = null;

export function cliServeKnows(flag: string): boolean {
  if (help === null) {
    help = existsSync(cliPath()) ? spawnSync(process.execPath, [cliPath(), 'serve', '--help'], { encoding: 'utf8' }).stdout : '';
  }
  return new RegExp(`${flag}\\b`).test(help);
}

/**
 * `--drain-seconds 0` where known: a benchmark's server should stop at once on SIGTERM
 * (no load balancer to drain from), not answer for the default drain first.
 */
export function noDrainArgs(): string[] {
  return cliServeKnows('--drain-seconds') ? ['--drain-seconds', '0'] : [];
}
