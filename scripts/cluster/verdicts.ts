/**
 * The cluster test's findings: each claim it must show is a named check that passed or
 * failed with the figures it rests on, printed as one summary; the process exits non-zero
 * when any failed. Progress lines go to stderr as they happen.
 */
export class Verdicts {
  private readonly checks: Array<{ ok: boolean; name: string; detail: string }> = [];
  private readonly facts: Array<[string, string]> = [];
  private readonly t0 = Date.now();

  /** A timestamped progress line. */
  step(message: string): void {
    process.stderr.write(`[cluster ${((Date.now() - this.t0) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
  }

  check(name: string, ok: boolean, detail: string): boolean {
    this.checks.push({ ok, name, detail });
    this.step(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
    return ok;
  }

  /** A check that failed because a step threw (the run continues to the next topology). */
  error(name: string, e: unknown): void {
    this.check(name, false, (e as Error).stack ?? String(e));
  }

  fact(name: string, value: string): void {
    this.facts.push([name, value]);
  }

  get failed(): number {
    return this.checks.filter((c) => !c.ok).length;
  }

  summary(): string {
    const lines = ['', '== pitcache cluster test =='];
    for (const [name, value] of this.facts) lines.push(`  ${name}: ${value}`);
    lines.push('');
    for (const c of this.checks) lines.push(`  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail.split('\n')[0]}`);
    lines.push('', `${this.checks.length - this.failed} of ${this.checks.length} checks passed in ${((Date.now() - this.t0) / 1000).toFixed(1)} s`, '');
    return lines.join('\n');
  }
}
