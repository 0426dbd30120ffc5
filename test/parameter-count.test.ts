/**
 * No function on the request path takes more than five positional parameters
 * (docs/decisions.md#parameters): past five, call sites pass values in the wrong order
 * without the types noticing (several are numbers), and the per-request state belongs in
 * a small typed object or a class holding it, per request or per page, never per row.
 * The request path is the folders a request goes through, from the transport to the bytes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REQUEST_PATH = ['pipeline', 'format', 'query', 'api', 'cache', 'http'];
const MAX_PARAMETERS = 5;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Functions, methods, constructors, accessors, arrows and function expressions with more than `max` parameters, as `file:line name (n)`. */
export function longParameterLists(fileName: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && !ts.isConstructorTypeNode(node) && node.parameters.length > max) {
      const named = node.name ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyDeclaration(node.parent) ? node.parent.name : undefined);
      const name = ts.isConstructorDeclaration(node) ? 'constructor' : named === undefined ? '(anonymous)' : named.getText(source);
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${fileName}:${line} ${name} (${node.parameters.length})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the request path', () => {
  it(`has no function with more than ${MAX_PARAMETERS} positional parameters`, () => {
    const files = REQUEST_PATH.flatMap((folder) => sourceFiles(join(ROOT, 'src', folder)));
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => longParameterLists(relative(ROOT, file), readFileSync(file, 'utf8'), MAX_PARAMETERS));
    expect(found).toEqual([]);
  });
});

describe('the parameter counter', () => {
  it('names declarations, methods, constructors, arrows and function expressions past the limit, and nothing within it', () => {
    const text = [
      'function six(a, b, c, d, e, f) {}',
      'function five(a, b, c, d, e) {}',
      'class K { constructor(a, b, c, d, e, f) {} m(a, b, c, d, e, f) {} ok(a) {} }',
      'const arrow = (a, b, c, d, e, f) => 0;',
      'const expr = function (a, b, c, d, e, f) {};',
      'type T = (a, b, c, d, e, f) => void;',
      'interface I { sig(a, b, c, d, e, f): void }',
    ].join('\n');
    expect(longParameterLists('x.ts', text, 5)).toEqual([
      'x.ts:1 six (6)',
      'x.ts:3 constructor (6)',
      'x.ts:3 m (6)',
      'x.ts:4 arrow (6)',
      'x.ts:5 expr (6)',
      'x.ts:7 sig (6)',
    ]);
  });
});
