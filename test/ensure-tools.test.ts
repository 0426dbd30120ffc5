// scripts/ensure-tools.sh, the pretest that installs the Debian programs the tests run. Each
// case runs the real script with PATH set to a folder of its own: the programs it may find
// there, plus `id` and `apt-get` stand-ins, since a test must not install packages on the
// machine nor become another user. nginx and HAProxy are also looked for in /usr/sbin, so
// the cases that need them missing run only where /usr/sbin has neither. chromium is
// looked for at PITCACHE_CHROMIUM: each case points it into its folder.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = resolve(import.meta.dirname, '../scripts/ensure-tools.sh');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A PATH folder with bash, the named tools (scripts that succeed), `id -u` answering uid, and optionally apt-get. */
function pathWith(opts: { tools: string[]; uid: number; aptGet: boolean }): { dir: string; aptLog: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ensure-tools-'));
  dirs.push(dir);
  const aptLog = join(dir, 'apt-get.log');
  symlinkSync('/bin/bash', join(dir, 'bash'));
  const exe = (name: string, body: string): void => {
    writeFileSync(join(dir, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  exe('id', `echo ${opts.uid}`);
  for (const t of opts.tools) exe(t, 'exit 0');
  if (opts.aptGet) exe('apt-get', `echo "$*" >> ${aptLog}`);
  return { dir, aptLog };
}

/** Runs the script with PATH = dir; chromium is looked for in dir (a stand-in when the case lists it). */
function run(dir: string): { status: number | null; stderr: string } {
  const r = spawnSync('/bin/bash', [script], { env: { PATH: dir, PITCACHE_CHROMIUM: join(dir, 'chromium') }, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

const sbinHas = (name: string): boolean => existsSync(`/usr/sbin/${name}`);

describe('scripts/ensure-tools.sh', () => {
  it('does nothing and succeeds when every tool is there', () => {
    const { dir, aptLog } = pathWith({ tools: ['promtool', 'nginx', 'haproxy', 'chromium', 'wrk'], uid: 0, aptGet: true });
    expect(run(dir)).toEqual({ status: 0, stderr: '' });
    expect(existsSync(aptLog)).toBe(false);
  });

  it('names the missing package and fails when it may not install (not root)', () => {
    const { dir, aptLog } = pathWith({ tools: ['nginx', 'haproxy', 'chromium', 'wrk'], uid: 1000, aptGet: true });
    const r = run(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("the tests need Debian's prometheus: install them (apt-get install prometheus) and run again\n");
    expect(existsSync(aptLog)).toBe(false);
  });

  it('fails the same way as root on a machine without apt-get', () => {
    const { dir } = pathWith({ tools: ['nginx', 'haproxy', 'chromium', 'wrk'], uid: 0, aptGet: false });
    const r = run(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('(apt-get install prometheus)');
  });

  it('as root, updates the package lists first, then installs what is missing', () => {
    const { dir, aptLog } = pathWith({ tools: ['nginx', 'haproxy', 'chromium', 'wrk'], uid: 0, aptGet: true });
    const r = run(dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("installing prometheus from Debian's packages (the tests run them)\n");
    expect(readFileSync(aptLog, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends prometheus\n');
  });

  it('installs chromium when it is not where playwright-core drives it (PITCACHE_CHROMIUM), even if another chromium is on PATH', () => {
    const { dir, aptLog } = pathWith({ tools: ['promtool', 'nginx', 'haproxy', 'wrk'], uid: 0, aptGet: true });
    mkdirSync(join(dir, 'elsewhere'));
    writeFileSync(join(dir, 'elsewhere', 'chromium'), '#!/bin/bash\n');
    const r = run(dir);
    expect(r).toEqual({ status: 0, stderr: "installing chromium from Debian's packages (the tests run them)\n" });
    expect(readFileSync(aptLog, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends chromium\n');
  });

  it('names chromium when it may not install it', () => {
    const { dir, aptLog } = pathWith({ tools: ['promtool', 'nginx', 'haproxy', 'wrk'], uid: 1000, aptGet: true });
    expect(run(dir)).toEqual({ status: 1, stderr: "the tests need Debian's chromium: install them (apt-get install chromium) and run again\n" });
    expect(existsSync(aptLog)).toBe(false);
  });

  it('finds chromium at /usr/bin/chromium when PITCACHE_CHROMIUM is not set', () => {
    const { dir } = pathWith({ tools: ['promtool', 'nginx', 'haproxy', 'wrk'], uid: 1000, aptGet: true });
    const r = spawnSync('/bin/bash', [script], { env: { PATH: dir }, encoding: 'utf8' });
    expect(r.status).toBe(existsSync('/usr/bin/chromium') ? 0 : 1);
  });

  it('installs wrk when it is missing (the bench harness and its test drive it)', () => {
    const { dir, aptLog } = pathWith({ tools: ['promtool', 'nginx', 'haproxy', 'chromium'], uid: 0, aptGet: true });
    expect(run(dir)).toEqual({ status: 0, stderr: "installing wrk from Debian's packages (the tests run them)\n" });
    expect(readFileSync(aptLog, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends wrk\n');
  });

  it.runIf(!sbinHas('nginx') && !sbinHas('haproxy'))('installs every missing package in one apt-get call', () => {
    const { dir, aptLog } = pathWith({ tools: [], uid: 0, aptGet: true });
    expect(run(dir).status).toBe(0);
    expect(readFileSync(aptLog, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends prometheus nginx haproxy chromium wrk\n');
  });

  it.runIf(sbinHas('nginx') && sbinHas('haproxy'))('finds nginx and HAProxy in /usr/sbin when PATH lacks it (a non-root PATH)', () => {
    const { dir, aptLog } = pathWith({ tools: ['promtool', 'chromium', 'wrk'], uid: 1000, aptGet: true });
    expect(run(dir)).toEqual({ status: 0, stderr: '' });
    expect(existsSync(aptLog)).toBe(false);
  });
});
