import { describe, expect, it } from 'vitest';
import type { FlagSpecs } from '../src/config/parse-argv.js';
import { describeArgvProblem, parseArgv } from '../src/config/parse-argv.js';

const SPECS: FlagSpecs = {
  source: { kind: 'value' },
  demo: { kind: 'boolean' },
  tag: { kind: 'value', repeatable: true },
  help: { kind: 'boolean', short: 'h' },
};

const flags = (argv: string[]): Record<string, readonly string[]> => Object.fromEntries(parseArgv(argv, SPECS).flags);

describe('parseArgv', () => {
  it('reads a value flag as --flag value and as --flag=value', () => {
    expect(flags(['--source', 'a'])).toEqual({ source: ['a'] });
    expect(flags(['--source=a=b'])).toEqual({ source: ['a=b'] });
    expect(flags(['--source='])).toEqual({ source: [''] });
  });

  it('reads a boolean flag as --flag, --no-flag, --flag=value and --flag true|false', () => {
    expect(flags(['--demo'])).toEqual({ demo: ['true'] });
    expect(flags(['--no-demo'])).toEqual({ demo: ['false'] });
    expect(flags(['--demo=0'])).toEqual({ demo: ['0'] });
    expect(flags(['--demo', 'FALSE'])).toEqual({ demo: ['FALSE'] });
  });

  it('does not let a bare boolean flag swallow a following positional', () => {
    const parsed = parseArgv(['--demo', 'data/', '1'], SPECS);
    expect(parsed.flags.get('demo')).toEqual(['true']);
    expect(parsed.positionals).toEqual(['data/', '1']);
  });

  it('keeps positionals, a lone dash, and everything after --', () => {
    const parsed = parseArgv(['a', '-', '--source', 's', '--', '--demo', '-h'], SPECS);
    expect(parsed.positionals).toEqual(['a', '-', '--demo', '-h']);
    expect(parsed.flags.get('source')).toEqual(['s']);
    expect(parsed.problems).toEqual([]);
  });

  it('maps a short alias to its flag', () => {
    expect(flags(['-h'])).toEqual({ help: ['true'] });
  });

  it('keeps every value of a repeatable flag in order', () => {
    expect(flags(['--tag', 'x', '--tag=y'])).toEqual({ tag: ['x', 'y'] });
  });

  it('reports unknown, duplicate, valueless and wrongly negated flags as data', () => {
    const problems = (argv: string[]) => parseArgv(argv, SPECS).problems;
    expect(problems(['--nope=1'])).toEqual([{ kind: 'unknown_flag', token: '--nope' }]);
    expect(problems(['-x'])).toEqual([{ kind: 'unknown_flag', token: '-x' }]);
    expect(problems(['-hh'])).toEqual([{ kind: 'unknown_flag', token: '-hh' }]);
    expect(problems(['--no-nope'])).toEqual([{ kind: 'unknown_flag', token: '--no-nope' }]);
    expect(problems(['--source', 'a', '--source=b'])).toEqual([{ kind: 'duplicate_flag', flag: 'source' }]);
    expect(problems(['--demo', '--no-demo'])).toEqual([{ kind: 'duplicate_flag', flag: 'demo' }]);
    expect(problems(['--source'])).toEqual([{ kind: 'missing_value', flag: 'source' }]);
    expect(problems(['--source', '--demo'])).toEqual([{ kind: 'missing_value', flag: 'source' }]);
    expect(problems(['--no-source'])).toEqual([{ kind: 'not_negatable', flag: 'source' }]);
    expect(problems(['--no-demo=1'])).toEqual([{ kind: 'negation_with_value', flag: 'demo' }]);
  });

  it('takes a value that starts with a dash when it is not a flag', () => {
    expect(flags(['--source', '-'])).toEqual({ source: ['-'] });
    expect(flags(['--source', '--'])).toEqual({ source: ['--'] });
  });

  it('describes each problem on one line naming the flag', () => {
    const all = parseArgv(['--nope', '--source', '1', '--source', '2', '--no-source', '--no-demo=1', '--tag'], SPECS).problems;
    expect(all.map((p) => p.kind)).toEqual(['unknown_flag', 'duplicate_flag', 'not_negatable', 'negation_with_value', 'missing_value']);
    for (const p of all) {
      const line = describeArgvProblem(p);
      expect(line).not.toContain('\n');
      expect(line).toMatch(/--(no-)?(nope|source|demo|tag)\b/);
    }
  });
});
