/** Where things are, whether the bench runs from dist/ or from the sources (tsx). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | null = null;

/** The folder of pitcache's package.json. */
export function repoRoot(): string {
  if (root !== null) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'pitcache') return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the pitcache package root');
    dir = up;
  }
}

/** The built CLI; the bench measures the built server, never tsx. */
export function cliPath(): string {
  return join(repoRoot(), 'dist/src/cli/main.js');
}

export function distScript(rel: string): string {
  return join(repoRoot(), 'dist', rel);
}
