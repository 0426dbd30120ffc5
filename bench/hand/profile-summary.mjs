/* global process, console */
// Self time by function of a .cpuprofile (from `PROF=file node bench/hand/in-process.mjs ...`
// or `node --cpu-prof`), as shares of the busy (non-idle) time, largest first.
// Usage: node bench/hand/profile-summary.mjs FILE [top=40]
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 40);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const frame = nodes.get(profile.samples[i]).callFrame;
  const dt = profile.timeDeltas[i] ?? 0;
  const key = `${frame.functionName || '(anon)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  total += dt;
}
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
const busy = total - idle;
console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms`);
for (const [k, v] of [...self]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top)) {
  console.log(`${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
}
