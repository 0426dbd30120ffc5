/**
 * Where a loaded generation's bytes go, per row: every typed array of the table built from a
 * generation on disk (as a server builds it: part by part into its columns), grouped by what
 * it is, in bytes a row, against the generation's Arrow bytes a row (under the built-in
 * catalog's vintage floor of the product).
 *
 *   npx tsx bench/large/table-bytes.ts <source folder> <product> <dataset>
 */
import { readFile } from 'node:fs/promises';
import { BUILTIN_CATALOG } from '../../src/catalog/builtin.js';
import { floorUsOf } from '../../src/catalog/catalog.js';
import { join } from 'node:path';
import { objectPath, parseManifest, partsOf } from '../../src/snapshot/manifest.js';
import { snapshotToTable } from '../../src/store/snapshot-to-table.js';
import { tableArrays } from '../../test/support/table-arrays.js';

const [source, product, dataset] = process.argv.slice(2) as [string, string, string];
const manifest = parseManifest(await readFile(join(source, product, dataset, 'manifest.json')));
const refs = partsOf(manifest);
const parts = await Promise.all(refs.map((r) => readFile(join(source, objectPath(product, dataset, r.object)))));
const arrow = parts.reduce((n, p) => n + p.byteLength, 0);
// The product's vintage floor, as a server of the built-in catalog loads it.
const floorUs = floorUsOf(BUILTIN_CATALOG.product(product)?.floor ?? null);
const table = snapshotToTable(parts, { parts: refs, filterColumns: [], floorUs });
parts.length = 0;
const rows = table.rows;
const per = (b: number): string => (b / rows).toFixed(2);
let total = 0;
console.log(`${product}/${dataset}: ${rows} rows, ${table.keyCount} keys (${(table.keyCount / rows).toFixed(3)} a row), ${table.seriesCount} series`);
console.log('| array | bytes a row |\n|---|---:|');
for (const [path, b] of tableArrays(table)) {
  total += b;
  console.log(`| ${path} | ${per(b)} |`);
}
console.log(`| **all arrays** | **${per(total)}** |`);
console.log(`| Arrow | ${per(arrow)} |`);
console.log(`arrays ÷ Arrow ${(total / arrow).toFixed(3)}; table.byteSize ÷ Arrow ${(table.byteSize / arrow).toFixed(3)}`);
