/**
 * The declarations (.d.ts) of the explorer page's browser modules (src/explore/page/*.js),
 * generated from their JSDoc by TypeScript, so that the unit tests (TypeScript) can import
 * the page's own files. test/explore-types.test.ts fails when the committed ones differ
 * from what this makes; `npx tsx scripts/explore-types.ts --write` rewrites them.
 *
 * The .js files are compiled from a copy in a temporary folder: beside the committed
 * .d.ts, TypeScript would read those instead of the sources.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import ts from 'typescript';

export const PAGE_DIR = resolve(import.meta.dirname, '../src/explore/page');

/** name (`state.d.ts`) -> its text, for every .js module of the page. */
export function explorePageDeclarations(): Map<string, string> {
  const tmp = mkdtempSync(join(tmpdir(), 'explore-types-'));
  try {
    const sources = readdirSync(PAGE_DIR).filter((n) => n.endsWith('.js'));
    for (const n of sources) cpSync(join(PAGE_DIR, n), join(tmp, n));
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(PAGE_DIR, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
    );
    if (parsed === undefined) throw new Error('src/explore/page/tsconfig.json does not parse');
    const options: ts.CompilerOptions = { ...parsed.options, noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: tmp };
    const program = ts.createProgram(
      sources.map((n) => join(tmp, n)),
      options,
    );
    const out = new Map<string, string>();
    const result = program.emit(undefined, (file, text) => out.set(basename(file), text), undefined, true);
    const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0)
      throw new Error(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => tmp, getNewLine: () => '\n' }));
    return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv.includes('--write')) {
  for (const [name, text] of explorePageDeclarations()) writeFileSync(join(PAGE_DIR, name), text);
}
