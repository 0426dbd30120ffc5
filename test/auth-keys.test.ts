import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KeyRegistry } from '../src/auth/key-registry.js';
import { loadKeysFile, parseKeysFile, sha256Hex } from '../src/auth/keys-file.js';

const FARM_KEY = 'farm-secret-0123456789';
const EU_KEY = 'plaintext, for local use only';
const OPS_KEY = 'ops-secret-abcdef';

/** The contract 7 example, with real hashes. */
function contractExample(): string {
  return JSON.stringify({
    keys: [
      { id: 'farm-a', sha256: sha256Hex(FARM_KEY).toUpperCase(), products: ['*'], rate_limit: { per_second: 500, burst: 1000 } },
      { id: 'eu-desk', key: EU_KEY, products: ['gbsi_eu', 'pemi'] },
      { id: 'ops', sha256: sha256Hex(OPS_KEY), products: ['*'], admin: true },
    ],
  });
}

function withEntry(entry: object, more: object[] = []): string {
  return JSON.stringify({ keys: [{ id: 'first', sha256: sha256Hex('first-key'), products: ['pemi'] }, ...more, entry] });
}

function errorOf(text: string): string {
  try {
    parseKeysFile(text, 'keys.json');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected parseKeysFile to throw');
}

describe('keys file parsing', () => {
  it('accepts the contract example shape and normalises it', () => {
    const cfg = parseKeysFile(contractExample(), 'keys.json');
    expect(cfg.keys.map((k) => k.id)).toEqual(['farm-a', 'eu-desk', 'ops']);
    expect(cfg.keys[0]).toMatchObject({
      sha256: sha256Hex(FARM_KEY),
      plaintext: false,
      products: '*',
      rateLimit: { perSecond: 500, burst: 1000 },
      admin: false,
    });
    expect(cfg.keys[1]).toMatchObject({ sha256: sha256Hex(EU_KEY), plaintext: true, products: ['gbsi_eu', 'pemi'], rateLimit: null });
    expect(cfg.keys[2]).toMatchObject({ admin: true, rateLimit: null });
  });

  it('accepts bare "*" for products and defaults burst to one second of rate, at least 1', () => {
    const cfg = parseKeysFile(
      JSON.stringify({
        keys: [
          { id: 'a', key: 'ka', products: '*', rate_limit: { per_second: 2.5 } },
          { id: 'b', key: 'kb', products: ['glmi'], rate_limit: { per_second: 0.2 } },
        ],
      }),
      'k',
    );
    expect(cfg.keys[0]).toMatchObject({ products: '*', rateLimit: { perSecond: 2.5, burst: 3 } });
    expect(cfg.keys[1]!.rateLimit).toEqual({ perSecond: 0.2, burst: 1 });
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['not JSON', '{"keys": [ {"id": "x", "key": "hunter2" ', /^keys\.json: invalid keys file at \(root\): not valid JSON/],
    ['bad hex', withEntry({ id: 'x', sha256: 'zz'.repeat(32), products: ['pemi'] }), /at keys\[1\]\.sha256: must be 64 hex digits/],
    ['short hex', withEntry({ id: 'x', sha256: 'ab', products: ['pemi'] }), /at keys\[1\]\.sha256: must be 64 hex digits/],
    ['both key and sha256', withEntry({ id: 'x', key: 'k', sha256: sha256Hex('k'), products: ['pemi'] }), /at keys\[1\]: has both/],
    ['neither key nor sha256', withEntry({ id: 'x', products: ['pemi'] }), /at keys\[1\]: needs one of/],
    ['empty key', withEntry({ id: 'x', key: '', products: ['pemi'] }), /at keys\[1\]\.key: must be a non-empty string/],
    ['malformed product id', withEntry({ id: 'x', key: 'k', products: ['pemi', 'No-pe'] }), /at keys\[1\]\.products\[1\]: "No-pe" is not a product id/],
    ['empty products', withEntry({ id: 'x', key: 'k', products: [] }), /at keys\[1\]\.products: must be "\*" or a non-empty array/],
    ['"*" mixed with ids', withEntry({ id: 'x', key: 'k', products: ['*', 'pemi'] }), /at keys\[1\]\.products: "\*" must be the only entry/],
    ['missing products', withEntry({ id: 'x', key: 'k' }), /at keys\[1\]\.products: Required/],
    ['duplicate id', withEntry({ id: 'first', key: 'k', products: ['pemi'] }), /at keys\[1\]\.id: duplicate id, also used by keys\[0\]/],
    ['empty id', withEntry({ id: '', key: 'k', products: ['pemi'] }), /at keys\[1\]\.id: must be a non-empty string/],
    [
      'duplicate secret (plaintext vs hash)',
      withEntry({ id: 'x', key: 'first-key', products: ['pemi'] }),
      /at keys\[1\]\.key: same key as keys\[0\] \(id "first"\)/,
    ],
    [
      'duplicate secret (hash case)',
      withEntry({ id: 'x', sha256: sha256Hex('first-key').toUpperCase(), products: ['pemi'] }),
      /at keys\[1\]\.sha256: same key as keys\[0\]/,
    ],
    [
      'per_second zero',
      withEntry({ id: 'x', key: 'k', products: ['pemi'], rate_limit: { per_second: 0, burst: 5 } }),
      /at keys\[1\]\.rate_limit\.per_second: must be > 0/,
    ],
    [
      'burst below 1',
      withEntry({ id: 'x', key: 'k', products: ['pemi'], rate_limit: { per_second: 1, burst: 0 } }),
      /at keys\[1\]\.rate_limit\.burst: must be >= 1/,
    ],
    [
      'fractional burst',
      withEntry({ id: 'x', key: 'k', products: ['pemi'], rate_limit: { per_second: 1, burst: 1.5 } }),
      /at keys\[1\]\.rate_limit\.burst: must be an integer/,
    ],
    ['rate_limit not an object', withEntry({ id: 'x', key: 'k', products: ['pemi'], rate_limit: 10 }), /at keys\[1\]\.rate_limit: Expected object/],
    ['misspelt field', withEntry({ id: 'x', key: 'k', products: ['pemi'], rate_limt: { per_second: 1 } }), /at keys\[1\]\.rate_limt: unknown field/],
    ['admin not boolean', withEntry({ id: 'x', key: 'k', products: ['pemi'], admin: 'yes' }), /at keys\[1\]\.admin: Expected boolean/],
    ['no keys array', JSON.stringify({ key: [] }), /at keys: Required/],
    ['empty keys array', JSON.stringify({ keys: [] }), /at keys: must list at least one key/],
  ];

  it.each(malformed)('rejects %s with a one-line message naming origin and path', (_name, text, want) => {
    const message = errorOf(text);
    expect(message).toMatch(want);
    expect(message.startsWith('keys.json: ')).toBe(true);
    expect(message).not.toContain('\n');
  });

  it('never quotes a secret in an error message', () => {
    const secret = 'hunter2-very-secret';
    const cases = [
      '{"keys": [{"id": "x", "key": "' + secret + '" ,, }]}',
      withEntry({ id: 'x', key: ` ${secret}`, products: ['pemi'] }),
      withEntry({ id: 'x', key: secret, sha256: sha256Hex(secret), products: ['pemi'] }),
      withEntry({ id: 'x', sha256: secret, products: ['pemi'] }),
      withEntry({ id: 'x', key: secret, products: ['pemi'] }, [{ id: 'y', key: secret, products: ['glmi'] }]),
    ];
    for (const text of cases) {
      const message = errorOf(text);
      expect(message).not.toContain(secret);
      expect(message).not.toContain(sha256Hex(secret));
    }
  });

  it('loads a local file by path or file:// URL and names the location when it cannot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pitcache-keys-'));
    const path = join(dir, 'keys.json');
    writeFileSync(path, contractExample());
    expect((await loadKeysFile(path)).keys).toHaveLength(3);
    expect((await loadKeysFile(pathToFileURL(path).href)).origin).toBe(pathToFileURL(path).href);
    await expect(loadKeysFile(join(dir, 'missing.json'))).rejects.toThrow(/missing\.json: cannot read keys file \(ENOENT\)/);
    await expect(loadKeysFile('s3://bucket/keys.json')).rejects.toThrow(/not supported by the local reader/);
    const viaReader = await loadKeysFile('s3://bucket/keys.json', async () => contractExample());
    expect(viaReader.origin).toBe('s3://bucket/keys.json');
  });
});

describe('KeyRegistry', () => {
  const registry = new KeyRegistry(parseKeysFile(contractExample(), 'keys.json'));

  it('authenticates sha256 and plaintext keys to their dense index', () => {
    expect(registry.authenticate(FARM_KEY)).toBe(0);
    expect(registry.authenticate(EU_KEY)).toBe(1);
    expect(registry.authenticate(OPS_KEY)).toBe(2);
    expect(registry.id(1)).toBe('eu-desk');
    expect(registry.indexOfId('ops')).toBe(2);
  });

  it('answers -1 for a missing or unknown key, also when asked again (cached miss)', () => {
    for (const k of [null, undefined, '', 'nope', 'nope', FARM_KEY + ' ', sha256Hex(FARM_KEY), 'x'.repeat(1000)]) {
      expect(registry.authenticate(k)).toBe(-1);
    }
  });

  it('gives the same answers with the cache disabled or tiny', () => {
    for (const cacheSize of [0, 1]) {
      const r = new KeyRegistry(parseKeysFile(contractExample(), 'keys.json'), { cacheSize });
      for (let round = 0; round < 3; round++) {
        expect([FARM_KEY, 'bad', EU_KEY, OPS_KEY, 'bad'].map((k) => r.authenticate(k))).toEqual([0, -1, 1, 2, -1]);
      }
    }
  });

  it('entitles "*" keys to every product and listed keys to their products only', () => {
    for (const p of ['gbsi_us', 'gbsi_eu', 'pemi', 'glmi', 'wrsi', 'wssi_us']) {
      expect(registry.entitled(0, p)).toBe(true);
      expect(registry.entitled(1, p)).toBe(p === 'gbsi_eu' || p === 'pemi');
    }
    // '*' covers products a later catalog adds (contract 13); a listed key only its own.
    expect(registry.entitled(0, 'acme')).toBe(true);
    expect(registry.entitled(1, 'acme')).toBe(false);
    expect(registry.entitled(-1, 'pemi')).toBe(false);
    expect(registry.entitled(99, 'pemi')).toBe(false);
  });

  it('marks only admin keys as admin', () => {
    expect([0, 1, 2].map((i) => registry.isAdmin(i))).toEqual([false, false, true]);
  });

  it('exposes rate limits by index, null for unlimited', () => {
    expect(registry.rateLimit(0)).toEqual({ perSecond: 500, burst: 1000 });
    expect(registry.rateLimit(1)).toBeNull();
  });

  it('shows no key, hash or presented string in inspect, toString or JSON', () => {
    registry.authenticate(EU_KEY);
    registry.authenticate('someone-elses-guess');
    const shown = [inspect(registry, { depth: Infinity, showHidden: true }), String(registry), JSON.stringify(registry)];
    for (const text of shown) {
      for (const secret of [FARM_KEY, EU_KEY, OPS_KEY, 'someone-elses-guess', sha256Hex(EU_KEY), sha256Hex(FARM_KEY)]) {
        expect(text).not.toContain(secret);
      }
    }
    expect(shown[0]).toBe('KeyRegistry(3 keys)');
  });
});
