/**
 * A slow folder for crash tests, preloaded into a `pitcache publish` child process with
 * `node --import tsx --import <this file>`: when the process reaches the file operation
 * `PITCACHE_TEST_HALT_FS` names, it stops there for good (after writing half of the bytes,
 * for `half`) and says so on stderr, so the test kills it with SIGKILL at exactly that
 * point, not after a guessed sleep. Nothing of pitcache is changed: the hook replaces
 * `node:fs/promises` functions (and syncs their ES module bindings) before pitcache loads.
 *
 * `PITCACHE_TEST_HALT_FS` is JSON: `{"op": "writeFile" | "rename", "path": "<regex>", "half": true}`;
 * `path` is matched against the file written (writeFile) or the destination (rename).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { writeSync } from 'node:fs';

interface HaltAt {
  readonly op: 'writeFile' | 'rename';
  readonly path: string;
  readonly half?: boolean;
}

/** The line a halted process writes to stderr (the test waits for it). */
export const HALTED = 'HALTED-FOR-TEST';

const spec = process.env['PITCACHE_TEST_HALT_FS'];
if (spec !== undefined && spec !== '') install(JSON.parse(spec) as HaltAt);

function install(at: HaltAt): void {
  const fsp = createRequire(import.meta.url)('node:fs/promises') as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const re = new RegExp(at.path);
  const original = fsp[at.op]!;
  const halt = (what: string): Promise<never> => {
    writeSync(2, `${HALTED} ${at.op} ${what}\n`);
    // Keeps the process alive (a pending promise alone does not) until the test kills it.
    setInterval(() => undefined, 60_000);
    return new Promise<never>(() => undefined);
  };
  fsp[at.op] = async (...args: unknown[]): Promise<unknown> => {
    const target = String(at.op === 'rename' ? args[1] : args[0]);
    if (!re.test(target)) return original(...args);
    if (at.half === true && at.op === 'writeFile') {
      const bytes = args[1] as Uint8Array;
      await original(args[0], bytes.subarray(0, Math.floor(bytes.byteLength / 2)));
    }
    return halt(target);
  };
  syncBuiltinESMExports();
}
