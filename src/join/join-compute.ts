import type { ProductSpec } from '../catalog/catalog.js';
import { ApiError } from '../errors.js';
import { ArrowFormatWriter } from '../format/arrow/arrow-writer.js';
import { CsvFormatWriter } from '../format/csv/csv-writer.js';
import type { FormatWriter } from '../format/format-writer.js';
import { JsonFormatWriter } from '../format/json/json-writer.js';
import type { Format } from '../format/negotiate.js';
import { parseProjection } from '../format/projection.js';
import type { ExtensionValue, PageMeta, RequestStamp, ResolvedPage } from '../format/resolved-page.js';
import { beforeFloorError, type BeforeFloor } from '../query/query-params.js';
import { ByteWriter } from '../format/bytes/byte-writer.js';
import type { Table } from '../store/table.js';
import { formatIsoMicros } from '../time/instant.js';
import { arrowEvents } from './arrow-events.js';
import { asofJoin } from './asof-join.js';
import { csvEvents } from './csv-events.js';
import { MAX_EVENTS, type EventBatch, type EventSchema } from './event-batch.js';
import { joinColumns } from './join-answer.js';
import { jsonEvents } from './json-events.js';

export type BodyFormat = 'csv' | 'json' | 'arrow';

/**
 * Everything a join needs besides the table and the body, as plain data: it crosses to a
 * join worker by structured clone (docs/decisions.md#join-off-thread) and the answer
 * computed there is the same bytes as one computed on the serving thread.
 */
export interface JoinRequest {
  readonly bodyFormat: BodyFormat;
  /** the answer's format */
  readonly format: Format;
  /** the `columns` parameter as given, or absent */
  readonly columns: string | undefined;
  readonly maxAgeDays: number | null;
  readonly beforeFloor: BeforeFloor;
  readonly product: ProductSpec;
  /** the end of the floor day, µs (contract 16) */
  readonly floorUs: number;
  /** the generation answering */
  readonly generation: number;
  readonly retrievedAtUs: number;
  readonly recordId: string;
}

/** A computed answer: its body (owned) and what its headers say. */
export interface JoinOutcome {
  readonly body: Uint8Array;
  readonly count: number;
  readonly matched: number;
  readonly anyBeforeFloor: boolean;
}

const JOIN_EXTENSIONS = ['generation', 'vintage_floor', 'floor_applied'] as const;

const writers: Readonly<Record<Format, FormatWriter>> = { json: new JsonFormatWriter(), csv: new CsvFormatWriter(), arrow: new ArrowFormatWriter() };

/** Called between the steps of a join (and within a long parse): throws to stop it (the client went away). */
export type StepCheck = () => void;

const noCheck: StepCheck = () => {};

/**
 * The join of contract 15, body bytes (gzip undone) in, answer bytes out: events parsed,
 * the before_floor and projection checks, the one-pass join, the answer's columns gathered
 * and written whole. `check` runs between steps so an abandoned join stops early.
 */
export function computeJoin(table: Table, bytes: Uint8Array, req: JoinRequest, check: StepCheck = noCheck): JoinOutcome {
  const reserved = new Set<string>([...table.columns.map((c) => c.name), 'floor_applied']);
  const schema: EventSchema = { seriesKey: table.seriesKey, reserved };
  const events = parseEvents(req, bytes, schema, check);
  check();
  if (events.count > MAX_EVENTS) throw new ApiError('payload_too_large', `at most ${MAX_EVENTS} events per request`);
  const floorUs = req.floorUs;
  if (req.beforeFloor === 'error') {
    const first = firstBefore(events, floorUs);
    if (first >= 0) throw beforeFloorError(req.product, `event ${first} (at ${formatIsoMicros(events.atUs[first]!)}) is`);
  }
  const projection =
    req.columns === undefined
      ? null
      : parseProjection(
          req.columns,
          table.columns.map((c) => c.name),
          table.seriesKey,
        );
  const stored = projection === null ? table.columns : projection.map((i) => table.columns[i]!);
  const join = asofJoin(table, events, {
    maxAgeDays: req.maxAgeDays,
    floorUs,
    skipBeforeFloor: req.beforeFloor === 'skip',
    filters: req.product.filters,
  });
  check();
  const columns = joinColumns(events, stored, table.seriesKey, join);
  check();
  const meta = joinMeta(table, req, events.count, join.matched, join.anyBeforeFloor);
  const page: ResolvedPage = { meta, view: { columns, rows: join.rows, count: events.count, seriesKey: table.seriesKey } };
  const stamp: RequestStamp = { retrievedAtUs: req.retrievedAtUs, recordId: req.recordId };
  const writer = writers[req.format];
  const out = new ByteWriter(Math.max(64 * 1024, events.count * 64));
  writer.writePrefix(out, meta, writer.shapeOf(page.view), stamp);
  writer.writeMiddle(out, page);
  writer.writeSuffix(out, meta, stamp);
  return { body: out.view(), count: events.count, matched: join.matched, anyBeforeFloor: join.anyBeforeFloor };
}

/** The envelope's metadata (and the headers') of a join's answer. */
export function joinMeta(table: Table, req: JoinRequest, count: number, matched: number, anyBeforeFloor: boolean): PageMeta {
  const extensionValues: ExtensionValue[] = [req.generation, req.product.floor, anyBeforeFloor];
  return {
    productId: req.product.id,
    count,
    totalCount: matched,
    nextCursor: null,
    generation: req.generation,
    dataLatestDate: table.latestDateByThr.query(Infinity),
    maxObservedUs: table.maxObservedByThr.query(Infinity),
    asOfUs: null,
    floorApplied: anyBeforeFloor,
    extensionKeys: JOIN_EXTENSIONS,
    extensionValues,
  };
}

function parseEvents(req: JoinRequest, bytes: Uint8Array, schema: EventSchema, check: StepCheck): EventBatch {
  switch (req.bodyFormat) {
    case 'csv':
      return csvEvents(bytes, schema, check);
    case 'json':
      return jsonEvents(bytes, schema);
    case 'arrow':
      // An Arrow answer carries the event columns as given (contract 15: "in their type").
      return arrowEvents(bytes, schema, req.format === 'arrow');
  }
}

/** The first event before the floor, or -1. */
function firstBefore(events: EventBatch, floorUs: number): number {
  for (let i = 0; i < events.count; i++) if (events.atUs[i]! < floorUs) return i;
  return -1;
}
