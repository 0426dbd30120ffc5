// The explorer page's committed .d.ts (what the unit tests import the page's modules
// through) are what TypeScript makes of its JavaScript today (scripts/explore-types.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_DIR, explorePageDeclarations } from '../scripts/explore-types.js';

describe('src/explore/page/*.d.ts', { timeout: 120_000 }, () => {
  it('match the JavaScript they declare (regenerate: npx tsx scripts/explore-types.ts --write)', () => {
    const made = explorePageDeclarations();
    expect([...made.keys()]).toEqual(
      readdirSync(PAGE_DIR)
        .filter((n) => n.endsWith('.d.ts'))
        .sort(),
    );
    for (const [name, text] of made) expect(readFileSync(join(PAGE_DIR, name), 'utf8'), name).toBe(text);
  });
});
