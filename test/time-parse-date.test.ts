import { describe, expect, it } from 'vitest';
import { daysFromCivil, formatDate, parseDate } from '../src/time/instant.js';

/** The definition parseDate implements without a regex (years from 1900: Date.UTC's calendar): strict YYYY-MM-DD, ASCII digits, a real day. */
function reference(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m === null) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  return Date.UTC(y, mo - 1, d) / 86_400_000;
}

describe('parseDate (strict YYYY-MM-DD, the date parameters of every data endpoint)', () => {
  it('reads every day of 1999-2001 and a leap-day sample as days since epoch, and writes back the same text', () => {
    for (let day = daysFromCivil(1999, 1, 1); day <= daysFromCivil(2001, 12, 31); day++) expect(parseDate(formatDate(day))).toBe(day);
    expect(parseDate('2000-02-29')).toBe(daysFromCivil(2000, 2, 29));
    expect(parseDate('2024-02-29')).toBe(daysFromCivil(2024, 2, 29));
    expect(parseDate('0000-01-01')).toBe(daysFromCivil(0, 1, 1));
    expect(parseDate('9999-12-31')).toBe(daysFromCivil(9999, 12, 31));
  });

  it('refuses what is not a calendar day in exactly that form', () => {
    for (const text of [
      '',
      '2024-01-1',
      '2024-1-01',
      '24-01-01',
      ' 2024-01-01',
      '2024-01-01 ',
      '2024/01/01',
      '2024-01/01',
      '+02024-01-01',
      '2024-00-10',
      '2024-13-10',
      '2024-01-00',
      '2024-01-32',
      '2024-04-31',
      '2023-02-29',
      '1900-02-29',
      '2100-02-29',
      '２０２４-01-01',
      '2024-0a-01',
      '2024-01-0:',
      '202/-01-01',
      '2024-01-01T00:00:00Z',
    ])
      expect(parseDate(text), text).toBeNull();
  });

  it('agrees with the regex definition on random near-dates', () => {
    const alphabet = '0123456789-/:a ';
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      const chars = [...`${1900 + rnd(300)}-${String(rnd(14)).padStart(2, '0')}-${String(rnd(33)).padStart(2, '0')}`];
      if (rnd(4) === 0) chars[rnd(chars.length)] = alphabet[rnd(alphabet.length)]!;
      const text = chars.join('');
      expect(parseDate(text), text).toBe(reference(text));
    }
  });

  it('reads a date where it lies in a longer text (text[start..end)), as the date alone, and nothing past the text', () => {
    const query = 'date_from=2024-02-29&as_of=2023-02-29&x=2024-01-01';
    expect(parseDate(query, 10, 20)).toBe(daysFromCivil(2024, 2, 29));
    expect(parseDate(query, 27, 37)).toBeNull();
    expect(parseDate(query, 40, 50)).toBe(daysFromCivil(2024, 1, 1));
    // off by one either way: not a date
    expect(parseDate(query, 9, 19)).toBeNull();
    expect(parseDate(query, 11, 21)).toBeNull();
    expect(parseDate(query, 10, 21)).toBeNull();
    // a range running past the end of the text reads no digits there
    expect(parseDate('x=2024-01-0', 2, 12)).toBeNull();
    expect(parseDate('x=2024-01-', 2, 12)).toBeNull();
    for (const day of [daysFromCivil(1969, 12, 31), daysFromCivil(2000, 2, 29), daysFromCivil(2031, 7, 9)]) {
      const text = `as_of=${formatDate(day)}&y`;
      expect(parseDate(text, 6, 16)).toBe(parseDate(text.slice(6, 16)));
      expect(parseDate(text, 6, 16)).toBe(day);
    }
  });
});
