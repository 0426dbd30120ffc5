import type { DatasetRef, PrunableSource } from '../source/snapshot-source.js';
import type { DatasetSelection } from '../catalog/dataset-selection.js';
import { parseManifest, partsOf, type Manifest } from '../snapshot/manifest.js';
import { readManifest } from '../snapshot/read-manifest.js';

/**
 * `pitcache prune`: removes old generations of datasets from a source, their history
 * manifests (contract 12) and their objects, by count (`keep`: the newest N generations
 * stay, the live one counted) and/or age (`olderThanMs`: by the history manifest's
 * created_at). Given both, a generation goes only when both say so.
 *
 * Never removed: the live generation (the one manifest.json names) and the objects it
 * references (its parts, contract 14), an object a kept history manifest references, and anything of a generation
 * above the live one (a publish under way writes its object and history before its
 * manifest). A generation without a history manifest (published before history/ existed)
 * has no known age: only `keep` removes it. History goes before its object, so a server
 * never follows a history manifest to a missing object mid-prune.
 */
export interface PruneRequest {
  readonly source: PrunableSource;
  readonly datasets: DatasetSelection;
  readonly keep: number | null;
  readonly olderThanMs: number | null;
  readonly nowMs: number;
  readonly dryRun: boolean;
}

export interface PrunedDataset {
  readonly dataset: string;
  readonly liveGeneration: number;
  /** generation numbers removed (or that would be, with dryRun), ascending */
  readonly generations: readonly number[];
  /** paths removed (or that would be), in the order of removal */
  readonly paths: readonly string[];
  readonly bytes: number;
}

const HISTORY_RE = /^history\/(\d{8,10})\.json$/;
/**
 * A generation's one object, or one of its parts (contract 14: `snapshots/00000007/00000.arrow`),
 * under its usual name or its content's own (`snapshots/00000007-<16 hex>.arrow`, see
 * commit-generation.ts).
 */
const OBJECT_RE = /^snapshots\/(\d{8,10})(?:-[0-9a-f]{16})?(?:\.arrow|\/[^/]+\.arrow)$/;

interface Known {
  history: { path: string; bytes: number; manifest: Manifest | null } | null;
  objects: Array<{ path: string; bytes: number }>;
}

export async function prune(req: PruneRequest): Promise<PrunedDataset[]> {
  if (req.keep === null && req.olderThanMs === null) throw new Error('prune needs --keep, --older-than or both');
  const out: PrunedDataset[] = [];
  for (const ref of await req.source.listDatasets()) {
    if (!req.datasets.has(ref.productId, ref.dataset)) continue;
    const done = await pruneDataset(req, ref);
    if (done !== null) out.push(done);
  }
  return out;
}

async function pruneDataset(req: PruneRequest, ref: DatasetRef): Promise<PrunedDataset | null> {
  const { source } = req;
  const check = await readManifest(source, ref, null);
  if (check.status !== 'ok') return null;
  const live = check.manifest;
  const folder = `${ref.productId}/${ref.dataset}/`;
  const known = new Map<number, Known>();
  const entry = (g: number): Known => {
    let k = known.get(g);
    if (k === undefined) known.set(g, (k = { history: null, objects: [] }));
    return k;
  };
  for (const o of await source.listObjects(folder)) {
    const rel = o.path.slice(folder.length);
    const h = HISTORY_RE.exec(rel);
    const a = OBJECT_RE.exec(rel);
    if (h !== null) entry(Number(h[1])).history = { path: o.path, bytes: o.bytes, manifest: null };
    else if (a !== null) entry(Number(a[1])).objects.push({ path: o.path, bytes: o.bytes });
  }
  // Only generations below the live one are candidates; the newest `keep` (live included) stay.
  const older = [...known.keys()].filter((g) => g < live.generation).sort((a, b) => b - a);
  const keptByCount = new Set(req.keep === null ? [] : older.slice(0, Math.max(0, req.keep - 1)));
  const protectedObjects = new Set(partsOf(live).map((p) => `${folder}${p.object}`));
  const doomed: number[] = [];
  for (const g of older) {
    const k = known.get(g)!;
    if (k.history !== null) k.history.manifest = await readHistory(source, k.history.path);
    const byCount = req.keep === null || !keptByCount.has(g);
    const createdMs = k.history?.manifest === null || k.history === null ? NaN : Date.parse(k.history.manifest.created_at);
    const byAge = req.olderThanMs === null || (Number.isFinite(createdMs) && createdMs < req.nowMs - req.olderThanMs);
    if (byCount && byAge) doomed.push(g);
    else if (k.history?.manifest) for (const p of partsOf(k.history.manifest)) protectedObjects.add(`${folder}${p.object}`);
  }
  const paths: string[] = [];
  let bytes = 0;
  for (const g of doomed.sort((a, b) => a - b)) {
    const k = known.get(g)!;
    const targets = [...(k.history === null ? [] : [k.history]), ...k.objects.filter((o) => !protectedObjects.has(o.path))];
    for (const t of targets) {
      if (!req.dryRun) await source.deleteObject(t.path);
      paths.push(t.path);
      bytes += t.bytes;
    }
  }
  return { dataset: `${ref.productId}/${ref.dataset}`, liveGeneration: live.generation, generations: doomed, paths, bytes };
}

/** A history manifest, or null when it is unreadable (it is still removed with its generation). */
async function readHistory(source: PrunableSource, path: string): Promise<Manifest | null> {
  try {
    return parseManifest(await source.readObject(path));
  } catch {
    return null;
  }
}
