import { z } from 'zod';
import { OpsError } from '../ops-errors.js';

/** `manifest.json` of contract 6: the only object of a dataset folder that ever changes; one object. */
export const MANIFEST_FORMAT = 'pitcache-snapshot/1';
/** Contract 14: a generation of many parts, each an Arrow object, in series order. */
export const PARTS_MANIFEST_FORMAT = 'pitcache-snapshot/2';

const objectName = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'object must be a relative path inside the dataset folder');
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits');
const rowCount = z.number().int().nonnegative();

const common = {
  product_id: z.string().min(1),
  dataset: z.string().min(1),
  generation: z.number().int().nonnegative().max(0xffff_ffff),
  rows: rowCount,
  created_at: z.string().min(1),
};

export const manifestSchema = z.object({ format: z.literal(MANIFEST_FORMAT), ...common, object: objectName, sha256 }).passthrough();

export const partSchema = z.object({ object: objectName, sha256, rows: rowCount, bytes: z.number().int().nonnegative() }).passthrough();

export const partsManifestSchema = z
  .object({ format: z.literal(PARTS_MANIFEST_FORMAT), ...common, parts: z.array(partSchema).min(1) })
  .passthrough()
  .superRefine((m, ctx) => {
    let sum = 0;
    for (const p of m.parts) sum += p.rows;
    if (sum !== m.rows) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['rows'], message: `rows is ${m.rows}, the parts hold ${sum}` });
    const names = new Set(m.parts.map((p) => p.object));
    if (names.size !== m.parts.length) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['parts'], message: 'a part object is named twice' });
  });

export type SingleManifest = z.infer<typeof manifestSchema>;
export type PartsManifest = z.infer<typeof partsManifestSchema>;
export type Manifest = SingleManifest | PartsManifest;

/** One object of a generation: what it must hash to and hold. `bytes` is null for a `/1` manifest (it does not say). */
export interface PartRef {
  readonly object: string;
  readonly sha256: string;
  readonly rows: number;
  readonly bytes: number | null;
}

/** The objects of a generation in series order: a `/1` manifest's one object is its one part. */
export function partsOf(m: Manifest): readonly PartRef[] {
  if (m.format === MANIFEST_FORMAT) return [{ object: m.object, sha256: m.sha256, rows: m.rows, bytes: null }];
  return m.parts.map((p) => ({ object: p.object, sha256: p.sha256, rows: p.rows, bytes: p.bytes }));
}

/** Validates a manifest already parsed from JSON; throws an OpsError (manifest_invalid) with a one-line reason. */
export function checkManifest(json: unknown): Manifest {
  const format = typeof json === 'object' && json !== null ? (json as { format?: unknown }).format : undefined;
  const schema = format === PARTS_MANIFEST_FORMAT ? partsManifestSchema : format === MANIFEST_FORMAT ? manifestSchema : null;
  if (schema === null) {
    throw new OpsError('manifest_invalid', `manifest.json is invalid at format: expected "${MANIFEST_FORMAT}" or "${PARTS_MANIFEST_FORMAT}"`);
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new OpsError('manifest_invalid', `manifest.json is invalid at ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

/** Parses manifest bytes; throws an OpsError (manifest_invalid) with a one-line reason when they are not a manifest. */
export function parseManifest(bytes: Uint8Array): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (e) {
    throw new OpsError('manifest_invalid', `manifest.json is not JSON: ${(e as Error).message}`);
  }
  return checkManifest(json);
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
