import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { DatasetSelection } from '../src/catalog/dataset-selection.js';
import type { ServeConfig } from '../src/config/serve-config.js';
import { parseServeConfig } from '../src/config/serve-config.js';

const DATA = ['--source', 's3://bucket/prefix', '--keys', 'keys.json'];

/** The options of the S3 source, refresh and workers at their defaults. */
const SOURCE_DEFAULTS = {
  s3: { forcePathStyle: false },
  refreshIntervalMs: 60_000,
  startupTimeoutMs: 60_000,
  cacheDir: null,
  workers: availableParallelism(),
  responseCacheBytes: 64 * 1024 * 1024,
  rowCacheBytes: 64 * 1024 * 1024,
  pageCacheBytes: 32 * 1024 * 1024,
  datasets: '*/*',
  metricsPort: null,
  drainMs: 10_000,
  retainMemory: { kind: 'percent', percent: 25 },
  cursorIdleMs: 600_000,
  authFailLimit: { count: 30, windowMs: 60_000 },
  trustedProxies: '',
  // given in code only: no flag
  joinInlineBytes: 256 * 1024,
};

function ok(argv: string[], env: Record<string, string | undefined> = {}): ServeConfig {
  const result = parseServeConfig(argv, env);
  if (!result.ok) throw new Error(`expected a config, got: ${result.message}`);
  return result.config;
}

function fail(argv: string[], env: Record<string, string | undefined> = {}): string {
  const result = parseServeConfig(argv, env);
  if (result.ok) throw new Error(`expected an error for ${JSON.stringify(argv)}`);
  return result.message;
}

describe('parseServeConfig', () => {
  it('applies the defaults when only source and keys are given', () => {
    expect(ok(DATA)).toEqual({
      host: '127.0.0.1',
      port: 8080,
      accessLog: true,
      logLevel: 'info',
      data: { mode: 'source', source: 's3://bucket/prefix', keys: 'keys.json' },
      ...SOURCE_DEFAULTS,
    });
  });

  it('reads every option from flags', () => {
    const config = ok([
      '--source=file:///srv/snaps',
      '--keys',
      '/etc/pitcache/keys.json',
      '--host',
      '0.0.0.0',
      '--port=0',
      '--no-access-log',
      '--log-level',
      'debug',
      '--s3-endpoint',
      'http://127.0.0.1:9000',
      '--s3-force-path-style',
      '--refresh-interval=0',
      '--startup-timeout',
      '5',
      '--cache-dir',
      '/var/cache/pitcache',
      '--workers',
      '3',
      '--response-cache-mb',
      '0',
      '--row-cache-mb',
      '8',
      '--page-cache-mb',
      '1',
      '--datasets',
      'gbsi_us/*,pemi/grid_stress',
      '--metrics-port',
      '9090',
      '--drain-seconds',
      '0',
      '--retain-memory',
      '512MiB',
      '--cursor-idle',
      '90s',
      '--auth-fail-limit',
      '10/5m',
      '--trusted-proxies',
      '10.0.0.0/8,fd00::/8',
    ]);
    expect(config).toEqual({
      host: '0.0.0.0',
      port: 0,
      accessLog: false,
      logLevel: 'debug',
      data: { mode: 'source', source: 'file:///srv/snaps', keys: '/etc/pitcache/keys.json' },
      s3: { endpoint: 'http://127.0.0.1:9000', forcePathStyle: true },
      refreshIntervalMs: 0,
      startupTimeoutMs: 5_000,
      cacheDir: '/var/cache/pitcache',
      workers: 3,
      responseCacheBytes: 0,
      rowCacheBytes: 8 * 1024 * 1024,
      pageCacheBytes: 1024 * 1024,
      datasets: 'gbsi_us/*,pemi/grid_stress',
      metricsPort: 9090,
      drainMs: 0,
      retainMemory: { kind: 'bytes', bytes: 512 * 2 ** 20 },
      cursorIdleMs: 90_000,
      authFailLimit: { count: 10, windowMs: 300_000 },
      trustedProxies: '10.0.0.0/8,fd00::/8',
      joinInlineBytes: 256 * 1024,
    });
    expect(DatasetSelection.parse(config.datasets).list()).toEqual([
      'gbsi_us/system_stress',
      'gbsi_us/balance_momentum',
      'gbsi_us/storage_surprise',
      'gbsi_us/backtest_summary',
      'pemi/grid_stress',
    ]);
  });

  it('reads every option from environment variables', () => {
    const env = {
      PITCACHE_SOURCE: 'snaps',
      PITCACHE_KEYS: 'k.json',
      PITCACHE_HOST: '::1',
      PITCACHE_PORT: '65535',
      PITCACHE_ACCESS_LOG: '0',
      PITCACHE_LOG_LEVEL: 'error',
      PITCACHE_S3_ENDPOINT: 'https://s3.internal.example',
      PITCACHE_S3_FORCE_PATH_STYLE: 'true',
      PITCACHE_REFRESH_INTERVAL: '300',
      PITCACHE_STARTUP_TIMEOUT: '0',
      PITCACHE_CACHE_DIR: 'cache',
      PITCACHE_WORKERS: '1',
      PITCACHE_RESPONSE_CACHE_MB: '16',
      PITCACHE_ROW_CACHE_MB: '0',
      PITCACHE_PAGE_CACHE_MB: '0',
      PITCACHE_DATASETS: '*/system_stress',
      PITCACHE_METRICS_PORT: '0',
      PITCACHE_DRAIN_SECONDS: '3600',
      PITCACHE_RETAIN_MEMORY: '2GiB',
      PITCACHE_CURSOR_IDLE: '2d',
      PITCACHE_AUTH_FAIL_LIMIT: '0',
      PITCACHE_TRUSTED_PROXIES: '127.0.0.1',
    };
    expect(ok([], env)).toEqual({
      host: '::1',
      port: 65535,
      accessLog: false,
      logLevel: 'error',
      data: { mode: 'source', source: 'snaps', keys: 'k.json' },
      s3: { endpoint: 'https://s3.internal.example', forcePathStyle: true },
      refreshIntervalMs: 300_000,
      startupTimeoutMs: 0,
      cacheDir: 'cache',
      workers: 1,
      responseCacheBytes: 16 * 1024 * 1024,
      rowCacheBytes: 0,
      pageCacheBytes: 0,
      datasets: '*/system_stress',
      metricsPort: 0,
      drainMs: 3_600_000,
      retainMemory: { kind: 'bytes', bytes: 2 * 2 ** 30 },
      cursorIdleMs: 2 * 86_400_000,
      authFailLimit: { count: 0, windowMs: 60_000 },
      trustedProxies: '127.0.0.1',
      joinInlineBytes: 256 * 1024,
    });
    expect(ok([], { PITCACHE_DEMO: 'true', PITCACHE_DEMO_DIR: '/tmp/demo' }).data).toEqual({ mode: 'demo', dir: '/tmp/demo' });
  });

  it('lets a flag win over its environment variable, even a bad variable', () => {
    const env = { PITCACHE_SOURCE: 'env-src', PITCACHE_KEYS: 'env-keys', PITCACHE_PORT: 'not-a-port', PITCACHE_ACCESS_LOG: 'true' };
    const config = ok(['--source', 'flag-src', '--port', '9000', '--access-log=false'], env);
    expect(config.port).toBe(9000);
    expect(config.accessLog).toBe(false);
    expect(config.data).toEqual({ mode: 'source', source: 'flag-src', keys: 'env-keys' });
  });

  it('treats an empty environment variable as unset', () => {
    expect(ok(DATA, { PITCACHE_PORT: '', PITCACHE_HOST: '' })).toMatchObject({ port: 8080, host: '127.0.0.1' });
  });

  it('accepts booleans as true/false/1/0 in any case from the environment and from --flag=value', () => {
    const spellings: Array<[string, boolean]> = [
      ['true', true],
      ['TRUE', true],
      ['1', true],
      ['false', false],
      ['False', false],
      ['0', false],
    ];
    for (const [text, value] of spellings) {
      expect(ok(DATA, { PITCACHE_ACCESS_LOG: text }).accessLog, `env ${text}`).toBe(value);
      expect(ok([...DATA, `--access-log=${text}`]).accessLog, `flag ${text}`).toBe(value);
    }
    expect(ok([...DATA, '--access-log']).accessLog).toBe(true);
    expect(ok([...DATA, '--no-access-log']).accessLog).toBe(false);
    expect(ok([...DATA, '--access-log', 'false']).accessLog).toBe(false);
  });

  it('makes --source and --keys optional with --demo, which uses the demo folder', () => {
    expect(ok(['--demo'])).toEqual({
      host: '127.0.0.1',
      port: 8080,
      accessLog: true,
      logLevel: 'info',
      data: { mode: 'demo', dir: '.demo-data' },
      ...SOURCE_DEFAULTS,
    });
    expect(ok(['--demo', '--demo-dir', 'x/y']).data).toEqual({ mode: 'demo', dir: 'x/y' });
    expect(ok(['--no-demo', ...DATA]).data.mode).toBe('source');
  });

  it('accepts the port bounds 0 and 65535', () => {
    expect(ok([...DATA, '--port', '0']).port).toBe(0);
    expect(ok([...DATA, '--port', '65535']).port).toBe(65535);
  });

  it('reports every error on exactly one line that names the flag, and the variable when it came from there', () => {
    const cases: Array<{ argv: string[]; env?: Record<string, string>; names: string[] }> = [
      { argv: [], names: ['--source', 'PITCACHE_SOURCE'] },
      { argv: ['--source', 's'], names: ['--keys', 'PITCACHE_KEYS'] },
      { argv: ['--keys', 'k'], names: ['--source'] },
      { argv: [...DATA, '--port', '65536'], names: ['--port'] },
      { argv: [...DATA, '--port', '-1'], names: ['--port'] },
      { argv: [...DATA, '--port', '80.5'], names: ['--port'] },
      { argv: [...DATA, '--port', '0x50'], names: ['--port'] },
      { argv: [...DATA, '--port='], names: ['--port'] },
      { argv: DATA, env: { PITCACHE_PORT: 'eighty' }, names: ['PITCACHE_PORT', '--port'] },
      { argv: [...DATA, '--access-log=yes'], names: ['--access-log'] },
      { argv: DATA, env: { PITCACHE_ACCESS_LOG: 'on' }, names: ['PITCACHE_ACCESS_LOG', '--access-log'] },
      { argv: ['--demo=maybe'], names: ['--demo'] },
      { argv: [...DATA, '--log-level', 'trace'], names: ['--log-level'] },
      { argv: DATA, env: { PITCACHE_LOG_LEVEL: 'INFO' }, names: ['PITCACHE_LOG_LEVEL', '--log-level'] },
      { argv: [...DATA, '--host', ''], names: ['--host'] },
      { argv: [...DATA, '--host', 'a b'], names: ['--host'] },
      { argv: ['--source', 'http://x/y', '--keys', 'k'], names: ['--source'] },
      { argv: ['--source', 's3://', '--keys', 'k'], names: ['--source'] },
      { argv: ['--source', 's', '--keys='], names: ['--keys'] },
      { argv: ['--demo', '--demo-dir='], names: ['--demo-dir'] },
      { argv: ['--demo', '--source', 's'], names: ['--source'] },
      { argv: ['--demo'], env: { PITCACHE_KEYS: 'k' }, names: ['PITCACHE_KEYS', '--keys'] },
      { argv: [...DATA, '--max-limit', '5'], names: ['--max-limit'] },
      { argv: [...DATA, '--port'], names: ['--port'] },
      { argv: [...DATA, '--port', '1', '--port', '2'], names: ['--port'] },
      { argv: [...DATA, '--no-host'], names: ['--no-host'] },
      { argv: [...DATA, '--no-demo=1'], names: ['--no-demo'] },
      { argv: [...DATA, '--help'], names: ['--help'] },
      { argv: [...DATA, '--s3-endpoint', 'minio:9000'], names: ['--s3-endpoint'] },
      { argv: [...DATA, '--s3-endpoint', 'ftp://minio'], names: ['--s3-endpoint'] },
      { argv: DATA, env: { PITCACHE_S3_ENDPOINT: 'not a url' }, names: ['PITCACHE_S3_ENDPOINT', '--s3-endpoint'] },
      { argv: [...DATA, '--s3-force-path-style=yes'], names: ['--s3-force-path-style'] },
      { argv: [...DATA, '--refresh-interval', '-1'], names: ['--refresh-interval'] },
      { argv: [...DATA, '--refresh-interval', '1.5'], names: ['--refresh-interval'] },
      { argv: DATA, env: { PITCACHE_STARTUP_TIMEOUT: 'soon' }, names: ['PITCACHE_STARTUP_TIMEOUT', '--startup-timeout'] },
      { argv: [...DATA, '--cache-dir='], names: ['--cache-dir'] },
      { argv: [...DATA, '--workers', '0'], names: ['--workers'] },
      { argv: DATA, env: { PITCACHE_WORKERS: 'all' }, names: ['PITCACHE_WORKERS', '--workers'] },
      { argv: [...DATA, '--datasets', 'pemi'], names: ['--datasets'] },
      { argv: DATA, env: { PITCACHE_DATASETS: 'nope' }, names: ['PITCACHE_DATASETS', '--datasets'] },
      { argv: [...DATA, '--metrics-port', '65536'], names: ['--metrics-port'] },
      { argv: [...DATA, '--drain-seconds', '3601'], names: ['--drain-seconds'] },
      { argv: [...DATA, '--retain-memory', 'lots'], names: ['--retain-memory'] },
      { argv: [...DATA, '--retain-memory', '2000%'], names: ['--retain-memory'] },
      { argv: DATA, env: { PITCACHE_RETAIN_MEMORY: '-1GiB' }, names: ['PITCACHE_RETAIN_MEMORY', '--retain-memory'] },
      { argv: [...DATA, '--cursor-idle', 'forever'], names: ['--cursor-idle'] },
      { argv: [...DATA, '--cursor-idle', '0'], names: ['--cursor-idle'] },
      { argv: DATA, env: { PITCACHE_CURSOR_IDLE: '10 minutes' }, names: ['PITCACHE_CURSOR_IDLE', '--cursor-idle'] },
    ];
    for (const { argv, env, names } of cases) {
      const message = fail(argv, env);
      expect(message.split('\n'), JSON.stringify(argv)).toHaveLength(1);
      for (const name of names) expect(message, JSON.stringify({ argv, env })).toContain(name);
    }
  });

  it('refuses a --retain-memory, --cursor-idle, --auth-fail-limit or --trusted-proxies it cannot read, naming the flag and the forms it takes', () => {
    expect(fail([...DATA, '--retain-memory', 'lots'])).toMatch(/--retain-memory.*"lots" is not a size \(e\.g\. 2GiB, 512MiB, 1000000\) or a percentage/);
    expect(fail([...DATA, '--retain-memory', '5000%'])).toMatch(/--retain-memory.*more than 1000% of the live data/);
    expect(fail([...DATA, '--auth-fail-limit', '30'])).toMatch(/--auth-fail-limit.*"30" is not <failures>\/<window>/);
    expect(fail([...DATA, '--trusted-proxies', '10.0.0.0/33'])).toMatch(/--trusted-proxies.*"10.0.0.0\/33" is not an IPv4 or IPv6 address or CIDR/);
    expect(fail([...DATA], { PITCACHE_CURSOR_IDLE: 'soon' })).toMatch(/PITCACHE_CURSOR_IDLE \(--cursor-idle\).*"soon" is not a duration/);
  });

  it('says what is wrong with a --datasets pattern; one that matches no dataset yet is taken (a later catalog may add it)', () => {
    expect(ok([...DATA, '--datasets', 'acme/*']).datasets).toBe('acme/*');
    expect(fail([...DATA, '--datasets', 'pemi/*,glmi'])).toMatch(/^--datasets: "glmi" is not product\/dataset/);
  });

  it('reads --retain-memory and --cursor-idle from flags and PITCACHE_ variables, and says what a bad one should be', () => {
    expect(ok(DATA, { PITCACHE_RETAIN_MEMORY: '40%', PITCACHE_CURSOR_IDLE: '1h' })).toMatchObject({
      retainMemory: { kind: 'percent', percent: 40 },
      cursorIdleMs: 3_600_000,
    });
    expect(ok([...DATA, '--retain-memory', '1500000000'])).toMatchObject({ retainMemory: { kind: 'bytes', bytes: 1_500_000_000 } });
    expect(fail([...DATA, '--retain-memory', 'lots'])).toMatch(/^--retain-memory: "lots" is not a size \(e\.g\. 2GiB, 512MiB, 1000000\) or a percentage/);
    expect(fail([...DATA, '--cursor-idle', '0'])).toMatch(/^--cursor-idle: must be a positive duration/);
  });

  it('keeps a bad value with a newline on one line', () => {
    const message = fail(DATA, { PITCACHE_PORT: '80\n81' });
    expect(message).not.toContain('\n');
    expect(message).toContain('"80\\n81"');
  });

  it('refuses a positional argument', () => {
    expect(fail([...DATA, 'extra'])).toBe('unexpected argument "extra" (see pitcache serve --help)');
  });

  it('refuses credentials in the S3 endpoint: they come from the AWS chain', () => {
    const message = fail([...DATA, '--s3-endpoint', 'http://AKIAEXAMPLE:secret@minio:9000']);
    expect(message).toMatch(/^--s3-endpoint: must not contain credentials/);
    expect(ok([...DATA, '--s3-endpoint', 'http://minio:9000']).s3).toEqual({ endpoint: 'http://minio:9000', forcePathStyle: false });
  });

  it('resolves --workers to the number of cores when not given', () => {
    expect(ok(DATA).workers).toBe(availableParallelism());
    expect(ok([...DATA, '--workers', '1024']).workers).toBe(1024);
  });

  it('shows the offending value and the accepted range for a bad port', () => {
    expect(fail([...DATA, '--port', '70000'])).toBe('--port: must be an integer from 0 to 65535, got "70000"');
  });
});
