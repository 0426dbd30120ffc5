import { PartAssembly } from './part-assembly.js';
import type { SnapshotExpectations } from './read-part.js';

export { checkSha256, readPart, sha256Hex, type PartExpectation, type SnapshotExpectations } from './read-part.js';
import type { Table } from './table.js';

/**
 * A generation's objects (in memory) -> a serving table, or an Error saying why the
 * generation is refused: each part checked (sha256 included) and decoded into the
 * generation's columns in turn (part-assembly.ts). Pure CPU work: the CLI and tests; a
 * server streams parts into a PartAssembly on a build thread instead (load-generation.ts).
 */
export function snapshotToTable(parts: readonly Uint8Array[], want: SnapshotExpectations): Table {
  if (parts.length !== want.parts.length) throw new Error(`snapshotToTable: ${parts.length} objects for ${want.parts.length} parts`);
  const assembly = new PartAssembly(want);
  for (const bytes of parts) assembly.add(bytes, false);
  return assembly.finish();
}
