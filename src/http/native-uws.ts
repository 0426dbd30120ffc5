import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';

export type UwsModule = typeof Uws;

/**
 * The npm build of uWebSockets.js we depend on silently swaps in a slow, partial JS
 * imitation when its native binary does not load (wrong platform or Node ABI, or
 * UWS_USE_FALLBACK set). That imitation exports no SSLApp, which is how we tell.
 */
export function assertNativeUws(mod: unknown): asserts mod is UwsModule {
  const candidate = mod as { SSLApp?: unknown; App?: unknown } | null | undefined;
  if (typeof candidate?.SSLApp !== 'function' || typeof candidate.App !== 'function') {
    throw new Error(
      'the native uWebSockets.js binary did not load on this platform; refusing to run the slow fallback ' +
        `(platform ${process.platform}-${process.arch}, Node ABI ${process.versions.modules}; ` +
        'a supported Node 20 on linux/darwin x64/arm64 is needed, and UWS_USE_FALLBACK must be unset)',
    );
  }
}

let cached: UwsModule | undefined;

/** Loads uWebSockets.js once and returns it, or throws when only the fallback loaded. */
export function loadNativeUws(): UwsModule {
  if (cached !== undefined) return cached;
  // createRequire: the package is CommonJS whose exports come from a .node addon, so ESM
  // named-export detection cannot see them.
  const mod: unknown = createRequire(import.meta.url)('uWebSockets.js');
  assertNativeUws(mod);
  cached = mod;
  return mod;
}
