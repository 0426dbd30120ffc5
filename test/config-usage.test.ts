import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMANDS, commandUsage, optionsMarkdownTable, rootUsage, serveUsage, wantsHelp } from '../src/cli/usage.js';
import { optionSpecs } from '../src/config/option-table.js';
import { booleanOption, enumOption, integerOption, wordOption } from '../src/config/option-types.js';
import { serveOptionRows } from '../src/config/serve-config.js';

const SERVE_FLAGS = [
  '--source',
  '--keys',
  '--host',
  '--port',
  '--demo',
  '--demo-dir',
  '--access-log',
  '--log-level',
  '--s3-endpoint',
  '--s3-force-path-style',
  '--refresh-interval',
  '--startup-timeout',
  '--cache-dir',
  '--workers',
  '--response-cache-mb',
  '--row-cache-mb',
  '--page-cache-mb',
  '--datasets',
  '--metrics-port',
  '--retain-memory',
  '--cursor-idle',
  '--drain-seconds',
  '--auth-fail-limit',
  '--trusted-proxies',
];
const SERVE_ENVS = SERVE_FLAGS.map((f) => 'PITCACHE_' + f.slice(2).replace(/-/g, '_').toUpperCase());

describe('option table', () => {
  it('derives flag, variable, kind, placeholder and default from the schema fields', () => {
    const specs = optionSpecs(
      z.object({
        fooBar: integerOption(1, 2).default(2).describe('a number'),
        quiet: booleanOption().default(false).describe('be quiet'),
        level: enumOption(['a', 'b']).optional().describe('a level'),
      }),
      'X_',
    );
    expect(specs).toEqual([
      { key: 'fooBar', flag: '--foo-bar', env: 'X_FOO_BAR', kind: 'value', placeholder: '<foo-bar>', default: '2', description: 'a number' },
      { key: 'quiet', flag: '--quiet', env: 'X_QUIET', kind: 'boolean', placeholder: null, default: 'false', description: 'be quiet' },
      { key: 'level', flag: '--level', env: 'X_LEVEL', kind: 'value', placeholder: '<a|b>', default: undefined, description: 'a level' },
    ]);
  });

  it('refuses a field without a description', () => {
    expect(() => optionSpecs(z.object({ host: wordOption() }))).toThrow(/host/);
  });

  it('gives the README one row per serve option with its variable, default and description', () => {
    const rows = serveOptionRows();
    expect(rows.map((r) => r.flag)).toEqual(SERVE_FLAGS);
    expect(rows.map((r) => r.env)).toEqual(SERVE_ENVS);
    expect(rows.find((r) => r.flag === '--port')?.default).toBe('8080');
    expect(rows.find((r) => r.flag === '--host')?.default).toBe('127.0.0.1');
    expect(rows.find((r) => r.flag === '--source')?.default).toBeUndefined();
    expect(rows.find((r) => r.flag === '--drain-seconds')?.default).toBe('10');
    expect(rows.find((r) => r.flag === '--retain-memory')?.default).toBe('25%');
    expect(rows.find((r) => r.flag === '--cursor-idle')?.default).toBe('10m');
    expect(rows.find((r) => r.flag === '--metrics-port')?.default).toBeUndefined();
    expect(rows.find((r) => r.flag === '--auth-fail-limit')?.default).toBe('30/60s');
    expect(rows.find((r) => r.flag === '--trusted-proxies')?.default).toBe('');
    for (const r of rows) expect(r.description.length).toBeGreaterThan(10);
  });

  it('renders the README table with one line per option and escaped pipes', () => {
    const table = optionsMarkdownTable([...serveOptionRows(), { flag: '--x', env: 'X', default: undefined, description: 'a|b' }]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + SERVE_FLAGS.length + 1);
    expect(lines.at(-1)).toBe('| `--x` | `X` |  | a\\|b |');
    for (const flag of SERVE_FLAGS) expect(table).toContain('`' + flag + '`');
  });
});

describe('usage', () => {
  it('lists every serve option with its variable and default in pitcache serve --help', () => {
    const text = serveUsage();
    for (const row of serveOptionRows()) {
      const name = row.flag.slice(2);
      expect(text).toMatch(new RegExp(`--(\\[no-\\])?${name}\\b`));
      expect(text).toContain(row.env);
      if (row.default !== undefined) expect(text).toContain(`default ${row.default}`);
    }
    expect(text).toContain('--[no-]access-log');
    expect(text).toContain('--log-level <debug|info|warn|error>');
    expect(text).toContain('--help');
  });

  it('keeps help lines within 80 columns', () => {
    for (const command of COMMANDS) {
      for (const line of commandUsage(command).split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    }
  });

  it('lists every command in pitcache --help', () => {
    const text = rootUsage();
    for (const command of COMMANDS) expect(text).toContain(command.name);
    expect(text).toContain('pitcache serve --demo');
  });

  it('sees --help or -h before --, and nothing after it', () => {
    expect(wantsHelp(['--port', '1', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--demo'])).toBe(false);
  });
});
