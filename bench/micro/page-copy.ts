/**
 * What copying a walk-forward page's shared rows costs: 91 rows of 430 bytes (wssi_us, a
 * loop step), the way src/format/arenas/page-cache.ts copies a run of them against the way the
 * row arena copies them row by row (src/format/arenas/row-cache.ts), all out of a
 * SharedArrayBuffer into an ordinary Buffer. Run: `npx tsx bench/micro/page-copy.ts`.
 *
 * V8 copies out of shared memory with relaxed atomics: eight bytes a load only when source
 * and destination agree modulo 8, else byte by byte. So a run is copied to the offset that
 * agrees and moved down to its place (copyRun). The last two cases are the C library's
 * memmove on ordinary memory: glibc 2.36 copies above a few KiB with `rep movsb`, which this
 * VM's AMD EPYC runs about 14x slower when the destination lies a few bytes past the source
 * modulo 4096 (8 here; 1000 is fast); GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295
 * turns `rep movsb` off.
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';

const ROWS = 91;
const ROW = 430;
const RUN = ROWS * (ROW + 1) - 1; // rows and the commas between them
const SLOT = 512;

function cases(): Array<[string, () => void]> {
  const memory = new SharedArrayBuffer(64 << 20);
  const bytes = new Uint8Array(memory);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + (i % 90);
  const doubles = new Float64Array(memory);
  const shared = Buffer.from(memory);
  // Both large and unpooled: mapped on their own, so they start at the same offset modulo 4096.
  const plain = Buffer.alloc(4 << 20, 'x');
  const dst = Buffer.alloc(4 << 20);
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  // A page's text in the page arena (8-aligned + 3) and where it lands in the output (an odd offset).
  const src = 4096 + 3;
  const p = 1001;
  return [
    [
      'run: copy to the offset agreeing mod 8, then memmove down (copyRun)',
      () => {
        const q = p + ((src - dst.byteOffset - p) & 7);
        dst.set(bytes.subarray(src, src + RUN), q);
        if (q !== p) dst.copyWithin(p, q, q + RUN);
      },
    ],
    [
      'run: one copy, source and destination agreeing mod 8 (an output realigned to the page)',
      () => {
        const q = p + ((src - dst.byteOffset - p) & 7);
        dst.set(bytes.subarray(src, src + RUN), q);
      },
    ],
    ['run: one copy, source and destination disagreeing mod 8', () => shared.copy(dst, p, src, src + RUN)],
    [
      'rows: one slot each, eight bytes a turn through doubles (RowCache.copyFrom)',
      () => {
        let at = p;
        for (let r = 0; r < ROWS; r++) {
          let w = ((1 << 20) + r * SLOT) >> 3;
          let k = 0;
          for (; k + 32 <= ROW; k += 32, w += 4) {
            dv.setFloat64(at + k, doubles[w]!, true);
            dv.setFloat64(at + k + 8, doubles[w + 1]!, true);
            dv.setFloat64(at + k + 16, doubles[w + 2]!, true);
            dv.setFloat64(at + k + 24, doubles[w + 3]!, true);
          }
          for (; k + 8 <= ROW; k += 8) dv.setFloat64(at + k, doubles[w++]!, true);
          for (; k < ROW; k++) dst[at + k] = bytes[(1 << 20) + r * SLOT + k]!;
          at += ROW + 1;
        }
      },
    ],
    ['ordinary memory: Buffer.copy, destination 1000 bytes past the source mod 4096', () => plain.copy(dst, 1000, 0, RUN)],
    ['ordinary memory: Buffer.copy, destination 8 bytes past the source mod 4096', () => plain.copy(dst, 8, 0, RUN)],
  ];
}

export async function runPageCopy(): Promise<Array<{ name: string; usPerPage: number }>> {
  const bench = new Bench({ time: 1000, warmupTime: 300 });
  for (const [name, fn] of cases()) bench.add(name, fn);
  await bench.run();
  return bench.tasks.map((t) => {
    const r = t.result;
    return { name: t.name, usPerPage: r !== undefined && 'latency' in r ? r.latency.mean * 1e3 : NaN };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const x of await runPageCopy()) console.log(`${x.name.padEnd(82)} ${x.usPerPage.toFixed(2).padStart(6)} µs per page of ${ROWS} rows`);
}
