/* global process, console */
// Writes the bench's workload paths files (the same generator `npm run bench` uses) into a
// folder, for the hand measurements of this folder. Needs `npx tsc -p tsconfig.build.json`
// and the bench data (`npm run bench` builds it). Usage: node bench/hand/paths.mjs [dir] [count]
import { mkdir } from 'node:fs/promises';
import { buildWorkloads, writePathsFile } from '../../dist/bench/workloads.js';
import { planFor } from '../../dist/bench/data/plan.js';

const dir = process.argv[2] ?? 'bench/.data/paths';
const count = Number(process.argv[3] ?? 20000);
await mkdir(dir, { recursive: true });
const workloads = buildWorkloads(planFor('main', false), { count, pageWalkCount: 1000 });
// "repeated" is one of them since the bench runs it: the first 500 random-date paths, cycled
for (const [name, paths] of Object.entries(workloads)) await writePathsFile(`${dir}/${name}.paths`, paths);
console.log(`${Object.keys(workloads).join(', ')} -> ${dir}`);
