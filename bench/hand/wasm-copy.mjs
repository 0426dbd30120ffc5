/* global process, console, WebAssembly, Buffer */
// Hand experiment (issue 11, 2026-11-27): would a WebAssembly copy make a row-arena hit
// cheaper than row-cache.ts' copy through doubles? A 330-byte row (about 13 bytes shorter
// every 13th) copied from 512-byte slots of shared memory to an odd offset of an output
// region, 70 rows a page, as a loop answer copies them: the JS loop of RowCache.copyFrom
// (four doubles a turn through a DataView) against a hand-assembled wasm function (16
// bytes a turn with v128.load/store, then 8, then bytes) on a shared WebAssembly.Memory.
// The wasm path needs its destination in the same memory, so the output buffers would move
// into wasm memory: worth it only for a large gain. Prints ns per row, two rounds each.
// Usage: taskset -c 0 node bench/hand/wasm-copy.mjs
const leb = (n) => {
  const o = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    o.push(b);
  } while (n);
  return o;
};
const sec = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const str = (s) => [s.length, ...Buffer.from(s)];
const code = [
  0x02, 0x40, 0x03, 0x40, 0x20, 0x02, 0x41, 0x10, 0x49, 0x0d, 0x01, 0x20, 0x00, 0x20, 0x01, 0xfd, 0x00, 0x00, 0x00, 0xfd, 0x0b, 0x00, 0x00, 0x20, 0x00, 0x41,
  0x10, 0x6a, 0x21, 0x00, 0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, 0x20, 0x02, 0x41, 0x10, 0x6b, 0x21, 0x02, 0x0c, 0x00, 0x0b, 0x0b,
  // if len >= 8: one i64
  0x20, 0x02, 0x41, 0x08, 0x4f, 0x04, 0x40, 0x20, 0x00, 0x20, 0x01, 0x29, 0x00, 0x00, 0x37, 0x00, 0x00, 0x20, 0x00, 0x41, 0x08, 0x6a, 0x21, 0x00, 0x20, 0x01,
  0x41, 0x08, 0x6a, 0x21, 0x01, 0x20, 0x02, 0x41, 0x08, 0x6b, 0x21, 0x02, 0x0b, 0x02, 0x40, 0x03, 0x40, 0x20, 0x02, 0x45, 0x0d, 0x01, 0x20, 0x00, 0x20, 0x01,
  0x2d, 0x00, 0x00, 0x3a, 0x00, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x20, 0x02, 0x41, 0x01, 0x6b, 0x21,
  0x02, 0x0c, 0x00, 0x0b, 0x0b, 0x0b,
];
const body = [0x00, ...code];
const bytes = new Uint8Array([
  0,
  0x61,
  0x73,
  0x6d,
  1,
  0,
  0,
  0,
  ...sec(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]),
  ...sec(2, [1, ...str('m'), ...str('mem'), 0x02, 0x03, ...leb(1), ...leb(65536)]),
  ...sec(3, [1, 0]),
  ...sec(7, [1, ...str('copy'), 0, 0]),
  ...sec(10, [1, ...leb(body.length), ...body]),
]);
const mem = new WebAssembly.Memory({ initial: 4096, maximum: 65536, shared: true });
const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { m: { mem } });
const copy = inst.exports.copy;
const sab = mem.buffer;
const u8 = new Uint8Array(sab);
for (let i = 0; i < 64 << 20; i++) u8[i] = (i * 131) & 0x7f;
const words = new Float64Array(sab, 0, 8 << 20);
const dstBuf = Buffer.from(sab, 128 << 20, 1 << 20);
const dv = new DataView(sab, 128 << 20, 1 << 20);
const ROW = 512,
  LEN = 330,
  N = 70;
function jsCopy(slot, p, len) {
  let w = slot * (ROW >> 3),
    k = 0;
  for (; k + 32 <= len; k += 32, w += 4) {
    dv.setFloat64(p + k, words[w], true);
    dv.setFloat64(p + k + 8, words[w + 1], true);
    dv.setFloat64(p + k + 16, words[w + 2], true);
    dv.setFloat64(p + k + 24, words[w + 3], true);
  }
  for (; k + 8 <= len; k += 8) dv.setFloat64(p + k, words[w++], true);
  const at = slot * ROW;
  for (; k < len; k++) dstBuf[p + k] = u8[at + k];
  return p + len;
}
function page(f) {
  let p = 3;
  for (let i = 0; i < N; i++) {
    const slot = (i * 7919) & 16383;
    const len = LEN - (i % 13);
    p = f(slot, p, len) + 1;
  }
  return p;
}
const wa = (slot, p, len) => {
  copy((128 << 20) + p, slot * ROW, len);
  return p + len;
};
// correctness
page(wa);
const a = Buffer.from(dstBuf.subarray(0, 30000));
dstBuf.fill(0);
page(jsCopy);
console.log('equal', a.equals(dstBuf.subarray(0, 30000)));
for (const [name, f] of [
  ['js', jsCopy],
  ['wasm', wa],
  ['js', jsCopy],
  ['wasm', wa],
]) {
  for (let i = 0; i < 2000; i++) page(f);
  const t = process.hrtime.bigint();
  const R = 20000;
  for (let i = 0; i < R; i++) page(f);
  console.log(name, (Number(process.hrtime.bigint() - t) / R / N).toFixed(1), 'ns/row');
}
