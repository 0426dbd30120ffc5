import { z } from 'zod';
import { OpsError } from '../ops-errors.js';

/** `manifest.json` of contract 6: the only object of a dataset folder that ever changes. */
export const MANIFEST_FORMAT = 'pitcache-snapshot/1';

export const manifestSchema = z
  .object({
    format: z.literal(MANIFEST_FORMAT),
    product_id: z.string().min(1),
    dataset: z.string().min(1),
    generation: z.number().int().nonnegative().max(0xffff_ffff),
    object: z
      .string()
      .min(1)
      .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'object must be a relative path inside the dataset folder'),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits'),
    rows: z.number().int().nonnegative(),
    created_at: z.string().min(1),
  })
  .passthrough();

export type Manifest = z.infer<typeof manifestSchema>;

/** Parses manifest bytes; throws an OpsError (manifest_invalid) with a one-line reason when they are not a manifest. */
export function parseManifest(bytes: Uint8Array): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (e) {
    throw new OpsError('manifest_invalid', `manifest.json is not JSON: ${(e as Error).message}`);
  }
  const r = manifestSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new OpsError('manifest_invalid', `manifest.json is invalid at ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

/** Dataset folder names inside a source: `<product_id>/<dataset_name>/manifest.json`. */
export function manifestPath(productId: string, dataset: string): string {
  return `${productId}/${dataset}/manifest.json`;
}

/**
 * `<product>/<dataset>/history/00000007.json`: generation 7's manifest, kept unchanged and
 * immutable (contract 12) so any server can load that generation again later.
 */
export function historyPath(productId: string, dataset: string, generation: number): string {
  return `${productId}/${dataset}/history/${String(generation).padStart(8, '0')}.json`;
}

/** The text a manifest is written as, in manifest.json and history/ alike (byte for byte). */
export function manifestBytes(manifest: Manifest): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(manifest, null, 2) + '\n');
}

export function objectPath(productId: string, dataset: string, object: string): string {
  return `${productId}/${dataset}/${object}`;
}
