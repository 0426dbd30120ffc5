import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { restampEnvelopeMetadata, writeEnvelope, writeEnvelopeHead, writeEnvelopeMetadata, type EnvelopeMeta } from '../src/format/json/envelope.js';
import { RequestIds } from '../src/api/request-ids.js';
import { renderError } from '../src/format/json/error-body.js';
import { ageIsFixed, dataAgeHours, InstantMicros, type PageMeta } from '../src/format/resolved-page.js';
import { pageMeta } from './support/page-meta.js';

const retrievedAtUs = Date.UTC(2026, 2, 4, 10, 20, 30, 456) * 1000 + 789;

function meta(over: Partial<EnvelopeMeta> = {}): EnvelopeMeta {
  return {
    productId: 'gbsi_eu',
    count: 2,
    nextCursor: 'abc_DEF-123',
    retrievedAtUs,
    totalCount: 57,
    recordId: 'req_0123456789abcdef',
    dataLatestDate: Date.UTC(2026, 2, 3) / 86_400_000,
    dataAgeHours: 12.5,
    extensionKeys: [],
    extensionValues: [],
    ...over,
  };
}

function render(m: EnvelopeMeta, data = '[1,2]'): { text: string; body: Record<string, unknown> } {
  const out = new ByteWriter(16);
  writeEnvelope(out, m, (o) => o.ascii(data));
  const text = new TextDecoder('utf-8', { fatal: true }).decode(out.view());
  return { text, body: JSON.parse(text) as Record<string, unknown> };
}

describe('writeEnvelope', () => {
  it('writes the spec fields in order, next_cursor included when has_more', () => {
    const { text, body } = render(meta());
    expect(Object.keys(body)).toEqual(['product_id', 'count', 'has_more', 'next_cursor', 'data', 'metadata']);
    expect(body).toEqual({
      product_id: 'gbsi_eu',
      count: 2,
      has_more: true,
      next_cursor: 'abc_DEF-123',
      data: [1, 2],
      metadata: {
        retrieved_at: '2026-03-04T10:20:30.456Z',
        total_count: 57,
        record_id: 'req_0123456789abcdef',
        data_latest_date: '2026-03-03',
        data_age_hours: 12.5,
      },
    });
    expect(Object.keys(body.metadata as object)).toEqual(['retrieved_at', 'total_count', 'record_id', 'data_latest_date', 'data_age_hours']);
    expect(text.startsWith('{"product_id":"gbsi_eu","count":2,"has_more":true,"next_cursor":')).toBe(true);
  });

  it("writes record_id from a serving thread's id bytes exactly as from the id's string", () => {
    const ids = new RequestIds(Uint8Array.from([9, 8, 7, 6, 5, 4, 3, 2]));
    for (let n = 0; n < 40; n++) {
      const bytes = ids.advance();
      const text = Buffer.from(bytes).toString('latin1');
      const fromBytes = new ByteWriter(16);
      const fromString = new ByteWriter(16);
      writeEnvelopeMetadata(fromBytes, meta(), retrievedAtUs, bytes, 12.5);
      writeEnvelopeMetadata(fromString, meta(), retrievedAtUs, text, 12.5);
      expect(Buffer.from(fromBytes.view()).toString('latin1')).toBe(Buffer.from(fromString.view()).toString('latin1'));
      expect(Buffer.from(fromBytes.view()).toString('latin1')).toContain(`,"record_id":"${text}",`);
    }
  });

  it('omits next_cursor when has_more is false', () => {
    const { body } = render(meta({ nextCursor: null, count: 0, totalCount: 0 }), '[]');
    expect(Object.keys(body)).toEqual(['product_id', 'count', 'has_more', 'data', 'metadata']);
    expect(body.has_more).toBe(false);
    expect(body.data).toEqual([]);
  });

  it('writes null for a missing latest date and a missing or non-finite age', () => {
    for (const age of [null, NaN, Infinity]) {
      const m = render(meta({ dataLatestDate: null, dataAgeHours: age })).body.metadata as Record<string, unknown>;
      expect(m.data_latest_date).toBeNull();
      expect(m.data_age_hours).toBeNull();
    }
  });

  it('writes retrieved_at in UTC with exactly three fraction digits, floored before 1970', () => {
    const m = render(meta({ retrievedAtUs: -1 })).body.metadata as Record<string, unknown>;
    expect(m.retrieved_at).toBe('1969-12-31T23:59:59.999Z');
    const now = render(meta({ retrievedAtUs: 1_772_619_630_456_789.5 })).body.metadata as Record<string, unknown>;
    expect(now.retrieved_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('renders an instant extension as ISO 8601 with microseconds and Z, floored before 1970', () => {
    const at = Date.UTC(2019, 1, 15, 23, 59, 59, 999) * 1000 + 999;
    const { body } = render(
      meta({
        extensionKeys: ['as_of', 'early', 'epoch'],
        extensionValues: [new InstantMicros(at), new InstantMicros(-1), new InstantMicros(0)],
      }),
    );
    const m = body.metadata as Record<string, unknown>;
    expect(m.as_of).toBe('2019-02-15T23:59:59.999999Z');
    expect(m.early).toBe('1969-12-31T23:59:59.999999Z');
    expect(m.epoch).toBe('1970-01-01T00:00:00.000000Z');
  });

  it('appends extensions after the spec fields, keeping their order and types', () => {
    const { body } = render(
      meta({
        extensionKeys: ['generation', 'applied_floor', 'as_of', 'note "q"\n', 'floor_applied', 'partial'],
        extensionValues: [7, '2026-01-13', null, 'é😀', true, false],
      }),
    );
    const m = body.metadata as Record<string, unknown>;
    expect(Object.keys(m)).toEqual([
      'retrieved_at',
      'total_count',
      'record_id',
      'data_latest_date',
      'data_age_hours',
      'generation',
      'applied_floor',
      'as_of',
      'note "q"\n',
      'floor_applied',
      'partial',
    ]);
    expect(m.generation).toBe(7);
    expect(m.applied_floor).toBe('2026-01-13');
    expect(m.as_of).toBeNull();
    expect(m['note "q"\n']).toBe('é😀');
    expect(m.floor_applied).toBe(true);
    expect(m.partial).toBe(false);
  });

  it('writes the head without the data key when asked (Arrow schema metadata: the rows are the batch)', () => {
    const out = new ByteWriter(16);
    writeEnvelopeHead(out, 'glmi', 3, 'c1', false);
    expect(Buffer.from(out.view()).toString()).toBe('{"product_id":"glmi","count":3,"has_more":true,"next_cursor":"c1"');
    out.reset();
    writeEnvelopeHead(out, 'glmi', 0, null, true);
    expect(Buffer.from(out.view()).toString()).toBe('{"product_id":"glmi","count":0,"has_more":false,"data":');
  });

  it('escapes envelope strings that need it', () => {
    const { body } = render(meta({ productId: 'a"b\\c', nextCursor: 'x\u0001y' }));
    expect(body.product_id).toBe('a"b\\c');
    expect(body.next_cursor).toBe('x\u0001y');
  });
});

describe('renderError', () => {
  it('writes status, code, message and param, then record_id', () => {
    const body = renderError(new ApiError('invalid_parameter', 'as_of must be a date', 'as_of'), 'req_abc');
    expect(Buffer.from(body).toString()).toBe(
      '{"error":{"status":400,"code":"invalid_parameter","message":"as_of must be a date","param":"as_of"},"record_id":"req_abc"}',
    );
  });

  it('leaves param out when no single parameter is at fault', () => {
    const body = renderError(new ApiError('unauthorized', 'missing or unknown API key'), 'req_xyz');
    expect(Buffer.from(body).toString()).toBe('{"error":{"status":401,"code":"unauthorized","message":"missing or unknown API key"},"record_id":"req_xyz"}');
  });
});

describe('dataAgeHours and ageIsFixed (what a kept answer may repeat of it)', () => {
  const page = (maxObservedUs: number | null, asOfUs: number | null): PageMeta => pageMeta({ maxObservedUs, asOfUs });
  const HOUR = 3_600_000_000;

  it('measures from as_of when given, else from now; nothing visible has no age', () => {
    expect(dataAgeHours(page(10 * HOUR, 13 * HOUR), 100 * HOUR)).toBe(3);
    expect(dataAgeHours(page(10 * HOUR, null), 100 * HOUR)).toBe(90);
    expect(dataAgeHours(page(null, 13 * HOUR), 100 * HOUR)).toBeNull();
  });

  it('is fixed with an as_of or with nothing visible, and moves with the clock otherwise', () => {
    expect(ageIsFixed(page(10 * HOUR, 13 * HOUR))).toBe(true);
    expect(ageIsFixed(page(null, null))).toBe(true);
    expect(ageIsFixed(page(10 * HOUR, null))).toBe(false);
  });
});

describe('restampEnvelopeMetadata (a kept answer metadata, turned into another request)', () => {
  const ids = new RequestIds(new Uint8Array(8).fill(7));
  /** writeEnvelopeMetadata's bytes, with room after them, as a hit leaves them in the arena. */
  const written = (m: EnvelopeMeta, us: number, id: Uint8Array | string): { buf: Uint8Array; end: number } => {
    const out = new ByteWriter(16);
    out.ascii('[1,2]');
    writeEnvelopeMetadata(out, m, us, id, m.dataAgeHours);
    const buf = new Uint8Array(out.pos + 64).fill(0x2a);
    buf.set(out.view());
    return { buf, end: out.pos };
  };
  const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');
  const variants: Array<Partial<EnvelopeMeta>> = [
    {},
    { totalCount: 0, dataLatestDate: null, dataAgeHours: null },
    { totalCount: 1_234_567, dataAgeHours: -61727.9996179525 },
    {
      extensionKeys: ['generation', 'as_of', 'note', 'floor_applied'],
      extensionValues: [3, new InstantMicros(1_700_000_000_123_456), 'a "quoted" \\ é', true],
    },
  ];

  it.each(variants.map((v, i) => [i, v] as const))('restamped in place equals written anew for the new stamp (variant %i)', (_i, v) => {
    const m = meta(v);
    const first = ids.advance();
    const { buf, end } = written(m, retrievedAtUs, Buffer.from(first));
    for (const us of [retrievedAtUs + 1_000, Date.UTC(2026, 10, 28, 23, 59, 59, 999) * 1000, Date.UTC(1970, 0, 1) * 1000, Date.UTC(9999, 11, 31) * 1000]) {
      const id = ids.advance();
      expect(restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs: us, recordId: id })).toBe(true);
      const anew = written(m, us, id);
      expect(latin1(buf.subarray(0, end))).toBe(latin1(anew.buf.subarray(0, anew.end)));
      // Nothing past the metadata is touched.
      expect(buf.subarray(end).every((b) => b === 0x2a)).toBe(true);
    }
  });

  it('declines, writing nothing, what would not fit where the old values are', () => {
    const m = meta();
    const id = Buffer.from(ids.advance());
    const { buf, end } = written(m, retrievedAtUs, id);
    const before = latin1(buf);
    const declined = (f: () => boolean): void => {
      expect(f()).toBe(false);
      expect(latin1(buf)).toBe(before);
    };
    // A string id (an answer finished after an await) is written anew.
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs, recordId: 'req_0000000000000000000z' }));
    // Ids of another length: one shorter, one longer.
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs, recordId: id.subarray(0, id.length - 1) }));
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs, recordId: Buffer.concat([id, Buffer.from('0')]) }));
    // An instant whose text is of another width (a year of 5 digits, or before year 0).
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs: Date.UTC(10000, 0, 1) * 1000, recordId: id }));
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs: Date.UTC(-1, 0, 1) * 1000, recordId: id }));
    // Metadata written for another meta (its total_count differs), or not where it was said to start.
    declined(() => restampEnvelopeMetadata(buf, 5, end, meta({ totalCount: 58 }), { retrievedAtUs, recordId: id }));
    declined(() => restampEnvelopeMetadata(buf, 5, end, meta({ totalCount: 5 }), { retrievedAtUs, recordId: id }));
    declined(() => restampEnvelopeMetadata(buf, 4, end, m, { retrievedAtUs, recordId: id }));
    declined(() => restampEnvelopeMetadata(buf, 6, end, m, { retrievedAtUs, recordId: id }));
    // An id two longer: where it would end, the old metadata has the quote that opens data_latest_date's key.
    declined(() => restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs, recordId: Buffer.concat([id, Buffer.from('00')]) }));
    // Any byte of the literals around the two fields, or of total_count's digits, not as written.
    const text = latin1(buf);
    for (const lit of [',"metadata":{"retrieved_at":', ',"total_count":', ',"total_count":57', ',"record_id":"']) {
      // The first and last byte of each; of ',"total_count":57', the digits' own.
      for (const k of lit.endsWith('57') ? [lit.length - 2, lit.length - 1] : [0, lit.length - 1]) {
        const p = text.indexOf(lit) + k;
        const was = buf[p]!;
        buf[p] = 0x5f;
        expect(restampEnvelopeMetadata(buf, 5, end, m, { retrievedAtUs: retrievedAtUs + 1000, recordId: id }), `${lit}[${k}]`).toBe(false);
        buf[p] = was;
      }
    }
    expect(latin1(buf)).toBe(before);
    // Cut short before the id's closing quote.
    const idEnd = latin1(buf).indexOf(latin1(id)) + id.length;
    declined(() => restampEnvelopeMetadata(buf, 5, idEnd, m, { retrievedAtUs, recordId: id }));
    expect(restampEnvelopeMetadata(buf, 5, idEnd + 1, m, { retrievedAtUs, recordId: id })).toBe(true);
  });
});
