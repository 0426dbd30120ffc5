/**
 * The import graph of src/ and loaders/ (every relative import, export-from and dynamic
 * import, type-only ones included, as TypeScript's own pre-processor reads them): no cycle,
 * and the layering rules the code relies on.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TREES = ['src', 'loaders'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative specifier -> the .ts file it names (ESM imports name the compiled .js). */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${relative(ROOT, from)} imports ${spec}, which resolves to no file`);
}

/** file (relative to the repository) -> the files it imports */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of TREES.flatMap((t) => sourceFiles(join(ROOT, t)))) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const deps = info.importedFiles.map((f) => resolveImport(file, f.fileName)).filter((d): d is string => d !== null);
    graph.set(relative(ROOT, file), [...new Set(deps.map((d) => relative(ROOT, d)))]);
  }
  return graph;
}

/** Every strongly connected component with more than one file, or a file importing itself (Tarjan). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Imports from files under `fromDir` of files under `toDir`, as `a -> b` lines. */
function crossings(graph: Map<string, string[]>, fromDir: string, toDir: string): string[] {
  return [...graph].flatMap(([file, deps]) => (file.startsWith(fromDir) ? deps.filter((d) => d.startsWith(toDir)).map((d) => `${file} -> ${d}`) : []));
}

describe('the import graph of src/ and loaders/', () => {
  const graph = importGraph();

  it('covers the code base', () => {
    // A resolver that found nothing would pass every rule below.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/server/start.ts')).toContain('src/server/snapshot-loader.ts');
    expect(graph.get('loaders/s3-source.ts')).toContain('src/time/timers.ts');
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('publish/ imports nothing from server/ (the publisher does not depend on the server)', () => {
    expect(crossings(graph, 'src/publish/', 'src/server/')).toEqual([]);
  });

  it('config/ imports nothing from cli/ (the command line is built on the configuration, not the reverse)', () => {
    expect(crossings(graph, 'src/config/', 'src/cli/')).toEqual([]);
  });
});

describe('the cycle finder', () => {
  it('finds a cycle, a self-import, and nothing in a chain', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['d']],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });
});
