import { describe, expect, it } from 'vitest';
import { AskIndex, type Asked } from '../src/cache/ask-index.js';

const entry = (name: string): Asked & { name: string } => ({ ask: null, name });
const TEXT = ['/gbsi_eu/system_stress', 'country=DE&as_of=2026-04-10', 'application/json', 'gzip'] as const;

describe('AskIndex (response-cache entries by the exact text of a request they answered)', () => {
  it('finds an entry by the very text it was remembered under, and by no text that differs in one part', () => {
    const index = new AskIndex<ReturnType<typeof entry>>();
    const a = entry('a');
    index.remember(a, ...TEXT);
    expect(index.recall(...TEXT)).toBe(a);
    for (let part = 0; part < TEXT.length; part++) {
      const other = [...TEXT] as [string, string, string, string];
      other[part] = `${other[part]}x`;
      expect(index.recall(...other), `part ${part}`).toBeUndefined();
      other[part] = '';
      expect(index.recall(...other), `part ${part} empty`).toBeUndefined();
    }
    expect(index.recall('/gbsi_eu/system_stres', `s${TEXT[1]}`, TEXT[2], TEXT[3])).toBeUndefined();
  });

  it('keeps one entry per text: the same query in JSON and in CSV, or plain and compressed, are found apart', () => {
    const index = new AskIndex<ReturnType<typeof entry>>();
    const json = entry('json');
    const csv = entry('csv');
    const gzip = entry('gzip');
    index.remember(json, TEXT[0], TEXT[1], 'application/json', '');
    index.remember(csv, TEXT[0], TEXT[1], 'text/csv', '');
    index.remember(gzip, TEXT[0], TEXT[1], 'application/json', 'gzip');
    expect(index.size).toBe(3);
    expect(index.recall(TEXT[0], TEXT[1], 'application/json', '')).toBe(json);
    expect(index.recall(TEXT[0], TEXT[1], 'text/csv', '')).toBe(csv);
    expect(index.recall(TEXT[0], TEXT[1], 'application/json', 'gzip')).toBe(gzip);
  });

  it('moves an entry remembered again to its new text, and forgets it there', () => {
    const index = new AskIndex<ReturnType<typeof entry>>();
    const a = entry('a');
    index.remember(a, ...TEXT);
    const ask = a.ask;
    index.remember(a, TEXT[0], 'as_of=2026-04-10&country=DE', TEXT[2], TEXT[3]);
    // Refilled, not made again.
    expect(a.ask).toBe(ask);
    expect(index.recall(...TEXT)).toBeUndefined();
    expect(index.recall(TEXT[0], 'as_of=2026-04-10&country=DE', TEXT[2], TEXT[3])).toBe(a);
    expect(index.size).toBe(1);
    index.forget(a);
    expect(index.recall(TEXT[0], 'as_of=2026-04-10&country=DE', TEXT[2], TEXT[3])).toBeUndefined();
    expect(index.size).toBe(0);
  });

  it('lets a newer entry take a text, and then forgetting the older one leaves the newer', () => {
    const index = new AskIndex<ReturnType<typeof entry>>();
    const older = entry('older');
    const newer = entry('newer');
    index.remember(older, ...TEXT);
    index.remember(newer, ...TEXT);
    expect(index.recall(...TEXT)).toBe(newer);
    index.forget(older);
    expect(index.recall(...TEXT)).toBe(newer);
    index.forget(newer);
    expect(index.recall(...TEXT)).toBeUndefined();
    // An entry never remembered is nothing to forget.
    index.forget(entry('never'));
    expect(index.size).toBe(0);
  });

  it('tells apart texts whose hashes collide, whichever part differs', () => {
    // Pairs that FNV-1a maps to one slot, in the place each part takes in the hash (found by a
    // birthday search): only the comparison of the texts themselves can tell them apart.
    const path = '/gbsi_eu/system_stress';
    const query = 'country=DE&as_of=2026-04-10';
    const accept = 'application/json';
    const colliding: Array<[[string, string, string, string], [string, string, string, string]]> = [
      [
        ['/gbsi_eu/system_stress/46vu', query, accept, 'gzip'],
        ['/gbsi_eu/system_stress/fyea', query, accept, 'gzip'],
      ],
      [
        [path, 'country=DE&as_of=2026-04-10&x=6uzx', accept, 'gzip'],
        [path, 'country=DE&as_of=2026-04-10&x=d2ad', accept, 'gzip'],
      ],
      [
        [path, query, 'application/json;v=153zx', 'gzip'],
        [path, query, 'application/json;v=1cpad', 'gzip'],
      ],
      [
        [path, query, accept, 'gzip;q=16pwu'],
        [path, query, accept, 'gzip;q=1d5fa'],
      ],
    ];
    for (const [one, other] of colliding) {
      const index = new AskIndex<ReturnType<typeof entry>>();
      const a = entry('a');
      index.remember(a, ...one);
      expect(index.recall(...one)).toBe(a);
      expect(index.recall(...other), other.join(' ')).toBeUndefined();
      // The other takes the slot; the first is then not found, and forgetting it leaves the other.
      const b = entry('b');
      index.remember(b, ...other);
      expect(index.recall(...one)).toBeUndefined();
      index.forget(a);
      expect(index.recall(...other)).toBe(b);
    }
  });
});
