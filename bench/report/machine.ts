/** The machine a run happened on, as RESULTS.md reports it. */
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { canPin, sh } from '../lib/proc.js';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly ramBytes: number;
  readonly kernel: string;
  readonly os: string;
  readonly node: string;
  readonly taskset: boolean;
  /** 1-minute load average when the run started: another tenant shows up here */
  readonly loadAvgAtStart: number;
  versions: Record<string, string>;
}

export function machineInfo(): MachineInfo {
  const model = cpus()[0]?.model ?? 'unknown';
  let os = 'unknown';
  try {
    os = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os;
  } catch {
    // not Linux
  }
  return {
    cpuModel: model,
    cores: cpus().length,
    ramBytes: totalmem(),
    kernel: sh('uname', ['-srm']) || release(),
    os,
    node: process.version,
    taskset: canPin(),
    loadAvgAtStart: loadavg()[0] ?? NaN,
    versions: { node: process.version },
  };
}
