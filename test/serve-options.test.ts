/**
 * The serve options are one table (src/config/serve-options.ts): `pitcache serve`'s flags,
 * its `--help`, the README's table, the defaults of a server started in code and the typed
 * object every serving thread gets all come from it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildKeysConfig } from '../src/auth/keys-file.js';
import { parseServeConfig, SERVE_OPTIONS } from '../src/config/serve-config.js';
import { resolveServeOptions, ServeOptionsError, type ServeOptions } from '../src/config/serve-options.js';
import { LocalSource } from '../src/source/local-source.js';
import { startServer } from '../src/threads/start.js';
import { defaultKeysJson, TEST_SERVER } from './support/harness.js';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

/** The schema's options as [flag, default] ('' when none), in its order. */
const SCHEMA = SERVE_OPTIONS.map((s) => [s.flag, s.default ?? ''] as const);

/** The rows of the README's configuration table as [flag, default]. */
async function readmeTable(): Promise<Array<readonly [string, string]>> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration\n'), readme.indexOf('\n### The keys file\n'));
  const lines = section.split('\n').filter((l) => l.startsWith('| `'));
  return lines.map((l) => {
    const cells = l.split(' | ');
    return [cells[0]!.replace(/^\| `|`$/g, ''), cells[2]!.replace(/^`|`$/g, '')] as const;
  });
}

/** The options `pitcache serve --help` lists, as [flag, default], from the real command. */
async function helpTable(): Promise<Array<readonly [string, string]>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--help'], { encoding: 'utf8' });
  const rows: Array<[string, string]> = [];
  for (const line of stdout.split('\n')) {
    const flag = /^ {2}--(?:\[no-\])?([a-z0-9-]+)/.exec(line);
    if (flag !== null) rows.push(['--' + flag[1], '']);
    const def = /^ +env PITCACHE_[A-Z0-9_]+, default (.*)$/.exec(line);
    if (def !== null) rows.at(-1)![1] = def[1]!;
  }
  return rows;
}

describe('the serve options table', () => {
  it("is exactly the README's configuration table and what pitcache serve --help lists, with the defaults", async () => {
    expect(await readmeTable()).toEqual(SCHEMA);
    // --help is the one flag of every command that is not an option of the table.
    expect((await helpTable()).filter(([flag]) => flag !== '--help')).toEqual(SCHEMA);
  });

  it('gives a server started in code the defaults of pitcache serve (one default per option)', () => {
    const cli = parseServeConfig(['--demo'], {});
    if (!cli.ok) throw new Error(cli.message);
    const { data: _data, s3: _s3, ...fromCli } = cli.config;
    expect(resolveServeOptions()).toEqual(fromCli);
  });

  it('checks every value given in code and fills the rest, ignoring what is not an option', () => {
    const o = resolveServeOptions({
      port: 0,
      workers: 3,
      rowCacheBytes: 64 * 1024,
      refreshIntervalMs: 20,
      datasets: 'pemi/*',
      source: 'not an option here',
    } as object);
    expect(o).toMatchObject({ port: 0, workers: 3, rowCacheBytes: 64 * 1024, refreshIntervalMs: 20, datasets: 'pemi/*', pageCacheBytes: 32 * 1024 * 1024 });
    expect(o).not.toHaveProperty('source');
    expect(resolveServeOptions({ cacheDir: null, metricsPort: null })).toMatchObject({ cacheDir: null, metricsPort: null });
  });

  it.each<[Partial<Record<keyof ServeOptions, unknown>>, RegExp]>([
    [{ port: 70000 }, /^port: must be an integer from 0 to 65535, got 70000$/],
    [{ workers: 0 }, /^workers: must be an integer from 1 to 1024, got 0$/],
    [{ rowCacheBytes: -1 }, /^rowCacheBytes: must be an integer of bytes from 0 to \d+, got -1$/],
    [{ refreshIntervalMs: 1.5 }, /^refreshIntervalMs: must be an integer of ms from 0 to 86400000, got 1.5$/],
    [{ logLevel: 'trace' }, /^logLevel: must be one of debug, info, warn, error, got "trace"$/],
    [{ accessLog: 'yes' }, /^accessLog: must be true, false, 1 or 0, got "yes"$/],
    [{ datasets: 'pemi' }, /^datasets: "pemi" is not product\/dataset/],
    [{ trustedProxies: '10.0.0.0/33' }, /^trustedProxies: "10.0.0.0\/33" is not an IPv4 or IPv6 address or CIDR/],
    [{ retainMemory: { kind: 'percent', percent: 2000 } }, /^retainMemory: .*got \{"kind":"percent","percent":2000\}$/],
    [{ authFailLimit: { count: 3, windowMs: 10 } }, /^authFailLimit: .*got \{"count":3,"windowMs":10\}$/],
    [{ cacheDir: '' }, /^cacheDir: must not be empty, got ""$/],
    [{ cursorIdleMs: 0 }, /^cursorIdleMs: must be an integer of ms from 1/],
  ])('refuses %j in one line naming the field, what it must be and what it got', (given, message) => {
    let error: unknown;
    try {
      resolveServeOptions(given);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServeOptionsError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('is frozen through and through, and crosses to a thread as it is (structured clone)', () => {
    const o = resolveServeOptions({ authFailLimit: { count: 5, windowMs: 1000 }, retainMemory: { kind: 'bytes', bytes: 10 } });
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.authFailLimit)).toBe(true);
    expect(Object.isFrozen(o.retainMemory)).toBe(true);
    expect(structuredClone(o)).toEqual(o);
    const cli = parseServeConfig(['--demo', '--datasets', 'pemi/*', '--trusted-proxies', '10.0.0.0/8'], {});
    if (!cli.ok) throw new Error(cli.message);
    expect(Object.isFrozen(cli.config)).toBe(true);
    expect(structuredClone(cli.config)).toEqual(cli.config);
  });

  it('makes startServer refuse a bad option before it listens or reads anything', async () => {
    const source = new LocalSource('/nonexistent/pitcache-serve-options');
    await expect(startServer({ ...TEST_SERVER, source, keys: buildKeysConfig(defaultKeysJson(), 'test keys'), port: -1 })).rejects.toThrow(
      /^port: must be an integer from 0 to 65535, got -1$/,
    );
  });
});
