/**
 * Code comments cite the rules they implement as `contract N`, `spec X.Y` or `PIT-N`
 * (a newcomer must be able to read why every rule exists without files outside the
 * repository). Every citation in src/ must be listed in docs/README.md's table, and every
 * page and anchor that table links to must exist. Reasons that are not rules of the
 * contract are cited as `docs/decisions.md#anchor`; issue numbers, which a reader of the
 * repository cannot open, are never cited.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (p.endsWith('.ts') && !p.endsWith('openapi-types.ts')) out.push(p);
  }
  return out;
}

/** `contract 9`, `spec 2.4`, `spec section 1` (= spec 1), `PIT-4`, as the table writes them. */
function citations(text: string): string[] {
  return [...text.matchAll(/\b(contract|spec)(?: section)? (\d+(?:\.\d+)?)\b|\bPIT-(\d)\b/g)].map((m) =>
    m[3] !== undefined ? `PIT-${m[3]}` : `${m[1]} ${m[2]}`,
  );
}

describe('docs/README.md explains every rule the code cites', () => {
  it('every citation in src/ has a row, and every link of the table resolves', async () => {
    const table = await readFile(join(root, 'docs/README.md'), 'utf8');
    const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| cited as'));
    const cited = new Set<string>();
    for (const f of await sources(join(root, 'src'))) for (const c of citations(await readFile(f, 'utf8'))) cited.add(c);
    expect(cited.size).toBeGreaterThan(10);
    const listed = (c: string): boolean =>
      rows.some(
        (r) =>
          r
            .split('|')[1]!
            .split(/[(,]/)
            .some((part) => part.trim() === c) || r.split('|')[1]!.includes(`${c} (`),
      );
    expect([...cited].filter((c) => !listed(c)).sort()).toEqual([]);
    for (const [, file, anchor] of table.matchAll(/\]\(([a-z-]+\.md)(?:#([a-z0-9-]+))?\)/g)) {
      const page = await readFile(join(root, 'docs', file!), 'utf8');
      if (anchor !== undefined) expect(page, `${file}#${anchor}`).toContain(`<a id="${anchor}"></a>`);
    }
  });
});

describe('comments cite docs/, never an issue', () => {
  it('no comment in src/ names an issue number', async () => {
    const found: string[] = [];
    for (const f of await sources(join(root, 'src')))
      for (const [i, line] of (await readFile(f, 'utf8')).split('\n').entries())
        if (/\bissues? #?\d+/i.test(line)) found.push(`${f.slice(root.length)}:${i + 1}`);
    expect(found).toEqual([]);
  });

  it('every docs/<page>.md#<anchor> cited in src/ exists', async () => {
    let count = 0;
    for (const f of await sources(join(root, 'src'))) {
      for (const [, file, anchor] of (await readFile(f, 'utf8')).matchAll(/docs\/([a-z-]+\.md)#([a-z0-9-]+)/g)) {
        const page = await readFile(join(root, 'docs', file!), 'utf8');
        expect(page, `${f.slice(root.length)} cites docs/${file}#${anchor}`).toContain(`<a id="${anchor}"></a>`);
        count++;
      }
    }
    expect(count).toBeGreaterThan(10);
  });
});
