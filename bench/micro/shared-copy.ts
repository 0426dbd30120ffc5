/**
 * What copying one kept row (330 bytes) costs out of shared memory, against the same copy
 * out of an ordinary ArrayBuffer: the row arena (issue 11.4) must live in a
 * SharedArrayBuffer so every serving thread reads it, and this says what that costs per
 * row. Run: `npx tsx bench/micro/shared-copy.ts`.
 *
 * Cases, each on both kinds of memory: an Int32 word loop into a DataView (the arena's
 * copy until 2026-11-27), a Float64 word loop into a DataView (half the loads, allocates
 * nothing), the same unrolled by four words (RowCache.copyFrom's loop since the 27th's
 * afternoon: 5-8% less time per walk-forward-loop request in process), Uint8Array.set from a
 * subarray (native, but a view per row), Buffer.copy (native), and copyWithin inside one
 * buffer (native, no view: possible only if the output lived in the arena's buffer).
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';

const ROW = 330;
const SLOT = 512;
const SLOTS = 2048;

function cases(shared: boolean): Array<[string, () => void]> {
  const memory = shared ? new SharedArrayBuffer(SLOT * SLOTS * 2) : new ArrayBuffer(SLOT * SLOTS * 2);
  const bytes = new Uint8Array(memory);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + (i % 90);
  const words = new Int32Array(memory);
  const doubles = new Float64Array(memory);
  const src = Buffer.from(memory);
  const dst = Buffer.allocUnsafe(1 << 20);
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  const half = SLOT * SLOTS;
  let i = 0;
  const next = (): [number, number] => {
    i = (i + 1) & (SLOTS - 1);
    return [i * SLOT, (i * (ROW + 1)) & 0x7ffff];
  };
  return [
    [
      'word loop into a DataView',
      () => {
        const [at, p] = next();
        let w = at >> 2;
        let k = 0;
        for (; k + 4 <= ROW; k += 4) dv.setInt32(p + k, words[w++]!, true);
        for (; k < ROW; k++) dst[p + k] = bytes[at + k]!;
      },
    ],
    [
      'double-word loop into a DataView (the arena)',
      () => {
        const [at, p] = next();
        let w = at >> 3;
        let k = 0;
        for (; k + 8 <= ROW; k += 8) dv.setFloat64(p + k, doubles[w++]!, true);
        for (; k < ROW; k++) dst[p + k] = bytes[at + k]!;
      },
    ],
    [
      'double-word loop unrolled by 4 into a DataView',
      () => {
        const [at, p] = next();
        let w = at >> 3;
        let k = 0;
        for (; k + 32 <= ROW; k += 32, w += 4) {
          dv.setFloat64(p + k, doubles[w]!, true);
          dv.setFloat64(p + k + 8, doubles[w + 1]!, true);
          dv.setFloat64(p + k + 16, doubles[w + 2]!, true);
          dv.setFloat64(p + k + 24, doubles[w + 3]!, true);
        }
        for (; k + 8 <= ROW; k += 8) dv.setFloat64(p + k, doubles[w++]!, true);
        for (; k < ROW; k++) dst[p + k] = bytes[at + k]!;
      },
    ],
    [
      'Uint8Array.set of a subarray',
      () => {
        const [at, p] = next();
        dst.set(bytes.subarray(at, at + ROW), p);
      },
    ],
    [
      'Buffer.copy',
      () => {
        const [at, p] = next();
        src.copy(dst, p, at, at + ROW);
      },
    ],
    [
      'copyWithin (output in the same buffer)',
      () => {
        const [at, p] = next();
        bytes.copyWithin(half + p, at, at + ROW);
      },
    ],
  ];
}

export async function runSharedCopy(): Promise<Array<{ name: string; nsPerRow: number }>> {
  const bench = new Bench({ time: 1000, warmupTime: 300 });
  for (const shared of [false, true]) for (const [name, fn] of cases(shared)) bench.add(`${name}, ${shared ? 'SharedArrayBuffer' : 'ArrayBuffer'}`, fn);
  await bench.run();
  return bench.tasks.map((t) => {
    const r = t.result;
    return { name: t.name, nsPerRow: r !== undefined && 'latency' in r ? r.latency.mean * 1e6 : NaN };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const x of await runSharedCopy()) console.log(`${x.name.padEnd(64)} ${x.nsPerRow.toFixed(0).padStart(6)} ns per ${ROW}-byte row`);
}
