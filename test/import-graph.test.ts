/**
 * The import graph of src/ (every relative import, export-from and dynamic import, type-only
 * ones included, as TypeScript's own pre-processor reads them): no cycle between files or
 * between folders, and every folder imports only the folders its README.md names on its
 * `May import:` line.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TREES = ['src'];

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

/** `src/a/x.ts` -> `a`; a file directly in src/ -> null (the root files every folder may use). */
function folderOf(file: string): string | null {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : null;
}

/** folder -> the folders its files import (itself and the root files left out). */
export function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    const from = folderOf(file);
    if (from === null) continue;
    const set = out.get(from) ?? new Set<string>();
    out.set(from, set);
    for (const d of deps) {
      const to = folderOf(d);
      if (to !== null && to !== from) set.add(to);
    }
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

/** The folders a folder's README.md allows: its `May import:` line, up to the first `(` or `:`. */
export function declaredImports(readme: string): string[] | null {
  const line = /^May import: (.*)$/m.exec(readme)?.[1];
  if (line === undefined) return null;
  const list = line.split(/[(:]/)[0]!.trim().replace(/\.$/, '');
  return list === 'nothing' ? [] : list.split(',').map((s) => s.trim());
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('covers the code base', () => {
    // A resolver that found nothing would pass every rule below.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/threads/start.ts')).toContain('src/generations/snapshot-loader.ts');
    expect(graph.get('src/source/s3-source.ts')).toContain('src/time/timers.ts');
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    expect(cycles(folderGraph(graph)).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it("every folder opens with a README.md whose 'May import:' line covers what it imports", () => {
    const folders = folderGraph(graph);
    expect(folders.size).toBeGreaterThan(15);
    const undeclared: string[] = [];
    for (const [folder, imports] of folders) {
      const path = join(ROOT, 'src', folder, 'README.md');
      expect(existsSync(path), `src/${folder}/README.md`).toBe(true);
      const allowed = declaredImports(readFileSync(path, 'utf8'));
      expect(allowed, `src/${folder}/README.md has a 'May import:' line`).not.toBeNull();
      for (const to of imports) if (!allowed!.includes(to)) undeclared.push(`${folder} -> ${to}`);
    }
    expect(undeclared).toEqual([]);
  });

  it('the publisher, the client and the demo generator import nothing of the serving side', () => {
    for (const from of ['src/publish/', 'src/client/', 'src/demo/'])
      for (const to of ['src/api/', 'src/pipeline/', 'src/cache/', 'src/generations/', 'src/threads/', 'src/http/'])
        expect(crossings(graph, from, to)).toEqual([]);
  });

  it('config/ imports nothing from cli/ (the command line is built on the configuration, not the reverse)', () => {
    expect(crossings(graph, 'src/config/', 'src/cli/')).toEqual([]);
  });
});

describe('the folder rules', () => {
  it("folds files into folders, leaving out the root files and a folder's own imports", () => {
    const g = new Map([
      ['src/a/x.ts', ['src/a/y.ts', 'src/b/z.ts', 'src/errors.ts']],
      ['src/a/y.ts', ['src/c/w.ts']],
      ['src/b/z.ts', []],
      ['src/errors.ts', ['src/b/z.ts']],
    ]);
    expect([...folderGraph(g)]).toEqual([
      ['a', ['b', 'c']],
      ['b', []],
    ]);
  });

  it("reads a README's 'May import:' line", () => {
    expect(declaredImports('# x/\n\nOwns: x.\n\nMay import: a, b, c (and the root files).\n')).toEqual(['a', 'b', 'c']);
    expect(declaredImports('May import: nothing: it ships alone.')).toEqual([]);
    expect(declaredImports('May import: a.')).toEqual(['a']);
    expect(declaredImports('# no line')).toBeNull();
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
