/* global process, console */
// A bulk workload's CPU profile (PROF=dir node bench/hand/bulk.mjs ...) split into the stages
// of issue 39's breakdown, as shares of the busy time and µs per row (ROWS_US: the run's µs
// per row, from bulk.mjs, to turn shares into µs). A function's self time goes to the stage
// its file or name belongs to:
//   selection: choosing series and resolving versions (select-series, resolveKey, min-tree,
//     the resolvers' own loops, the count of the total, the date order's reads)
//   merge: the (date, series) merge of the runs (key-merge, sweep, heapMerge, sorts)
//   cursor: re-positioning on each page (lowerBoundDate, positionAfter, dayPosition, cursor codec)
//   writing: rendering rows (format/ but the arenas' copies)
//   etag: hashing (etag, hash, crc32)
//   copies: moving bytes (page arena, row cache copies, body assembly, Buffer/TypedArray copies)
//   other: the rest (parsing, routing, the harness, GC)
// Usage: node bench/hand/bulk-stages.mjs FILE.cpuprofile [µs per row]
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const usPerRow = Number(process.argv[3] ?? NaN);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));

function stageOf(frame) {
  const f = frame.functionName;
  const u = frame.url;
  if (/lowerBoundDate|positionAfter|dayPosition|decodeCursor|encodeCursor|orderedRange/.test(f)) return 'cursor';
  if (/key-merge|KeyMerge/.test(u) || /heapMerge|sweep|siftDown|orderLatest|^sort$|Sort/.test(f)) return 'merge';
  if (/etag|\/hash\.js|crc32/.test(u) || /crc32|fnv1a|etagOf/.test(f)) return 'etag';
  if (/page-arena|row-arena|row-cache|body-assembler|release-bytes|encoded-body/.test(u) || /copy|Copy|^set$|subarray|slice/.test(f)) return 'copies';
  if (/\/query\/|\/store\//.test(u)) return 'selection';
  if (/\/format\/|\/render\//.test(u) || (u === '' && /^write/.test(f))) return 'writing';
  return 'other';
}

const by = new Map();
let busy = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const frame = nodes.get(profile.samples[i]).callFrame;
  // the profiler's own start and stop (an in-process inspector session), and the harness's clock
  if (frame.functionName === '(idle)' || frame.functionName === '(program)' || (frame.functionName === 'dispatch' && frame.url === '')) continue;
  if (frame.functionName === 'cpuUsage' || /hand\/bulk\.mjs/.test(frame.url)) continue;
  const dt = profile.timeDeltas[i] ?? 0;
  const s = stageOf(frame);
  by.set(s, (by.get(s) ?? 0) + dt);
  busy += dt;
}
const order = ['selection', 'merge', 'cursor', 'writing', 'etag', 'copies', 'other'];
console.log(
  order
    .map((s) => {
      const share = (by.get(s) ?? 0) / busy;
      return `${s} ${(share * 100).toFixed(1)}%${Number.isNaN(usPerRow) ? '' : ` ${(share * usPerRow).toFixed(3)} µs/row`}`;
    })
    .join(', '),
);
