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
for (const [name, paths] of Object.entries(workloads)) await writePathsFile(`${dir}/${name}.paths`, paths);
// "repeated": the first 500 random-date paths, cycled (response-cache hits after the first round)
await writePathsFile(`${dir}/repeated.paths`, workloads['walk-forward-series'].slice(0, 500));
console.log(`${Object.keys(workloads).join(', ')}, repeated -> ${dir}`);
