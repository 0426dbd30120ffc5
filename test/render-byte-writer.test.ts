import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/render/byte-writer.js';

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
