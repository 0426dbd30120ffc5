/* global process, console */
// Self time by function of a .cpuprofile (from `PROF=file node bench/hand/in-process.mjs ...`
// or `node --cpu-prof`), as shares of the busy (non-idle) time, largest first.
// SKIP=s / LAST=s: only the samples from s seconds after the start / in the last s seconds
// before the end (a server's profile: leave its load out, or its shutdown).
// Usage: node bench/hand/profile-summary.mjs FILE [top=40]
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 40);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
const times = [];
for (let i = 0, t = profile.startTime; i < profile.samples.length; i++) times.push((t += profile.timeDeltas[i] ?? 0));
// the window of samples counted, in the profile's µs
const from = Math.max(
  profile.startTime + Number(process.env.SKIP ?? 0) * 1e6,
  process.env.LAST === undefined ? -Infinity : profile.endTime - Number(process.env.LAST) * 1e6,
);
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i] < from) continue;
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
