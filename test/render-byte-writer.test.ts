import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';

const text = (out: ByteWriter): string => Buffer.from(out.view()).toString('utf8');

describe('ByteWriter', () => {
  it('keeps every byte across growth from a tiny buffer, on short and long paths alike', () => {
    const out = new ByteWriter(16);
    const long = 'abcdefghij'.repeat(20);
    const longBytes = Buffer.from('0123456789'.repeat(30));
    out.ascii('short,');
    out.ascii(long);
    out.bytes(Buffer.from('[x]'));
    out.bytes(longBytes);
    out.bytes(longBytes, 5, 12);
    out.byte(0x21);
    out.utf8('é中😀');
    out.int(-9007199254740992);
    out.float(0.1);
    out.null();
    expect(text(out)).toBe(`short,${long}[x]${'0123456789'.repeat(30)}5678901!é中😀-90071992547409920.1null`);
  });

  it('hands back one view per length while its storage stays, and views of the new storage once it grows', () => {
    const out = new ByteWriter(64);
    out.ascii('header: 1');
    const first = out.view();
    out.reset();
    out.ascii('header: 2');
    // The same length: the same view, showing the bytes written now.
    expect(out.view()).toBe(first);
    expect(text(out)).toBe('header: 2');
    out.reset();
    out.ascii('header: 12');
    const longer = out.view();
    expect(longer).not.toBe(first);
    expect(text(out)).toBe('header: 12');
    // Lengths 256 apart share a slot: each gets a view of its own length.
    out.reset();
    out.ascii('h'.repeat(9 + 256));
    expect(out.view().length).toBe(9 + 256);
    out.reset();
    out.ascii('header: 3');
    expect(out.view().length).toBe(9);
    expect(text(out)).toBe('header: 3');
    // After growing, a view of the old storage is never handed out again.
    const beforeGrowth = out.view();
    out.reset();
    out.ascii('g'.repeat(1000));
    out.reset();
    out.ascii('header: 4');
    const after = out.view();
    expect(after).not.toBe(beforeGrowth);
    expect(after.buffer).toBe(out.buf.buffer);
    expect(text(out)).toBe('header: 4');
  });

  it('starts over at reset, reusing its storage', () => {
    const out = new ByteWriter(16);
    out.ascii('x'.repeat(100));
    const grown = out.buf;
    out.reset();
    expect(out.view().length).toBe(0);
    out.ascii('again');
    expect(text(out)).toBe('again');
    expect(out.buf).toBe(grown);
  });
});
