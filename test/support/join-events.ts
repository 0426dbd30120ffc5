/**
 * Events of the asof_join tests as an Arrow stream body: `at`, the series key columns as
 * strings, and the passthrough columns `id` (utf8) and `n` (float64).
 */
import { Float64, Table, TimestampMicrosecond, Utf8, makeVector, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import { parseAsOfNs } from './reference-model.js';

export interface JoinEvent {
  readonly at: string;
  readonly key: readonly string[];
  readonly id: string | null;
  readonly n: number | null;
}

/** Each event's `at` as a UTC Timestamp in microseconds. */
export function instantsVector(events: readonly JoinEvent[]): Vector {
  return makeVector({ type: new TimestampMicrosecond('UTC'), data: BigInt64Array.from(events.map((e) => parseAsOfNs(e.at)! / 1000n)) } as never);
}

/** The events as one Arrow IPC stream; `at` is given when the test wants another type for it. */
export function eventsArrow(seriesKey: readonly string[], events: readonly JoinEvent[], at: Vector = instantsVector(events)): Uint8Array {
  const children: Record<string, Vector> = { at };
  seriesKey.forEach(
    (k, i) =>
      (children[k] = vectorFromArray(
        events.map((e) => e.key[i]!),
        new Utf8(),
      )),
  );
  children.id = vectorFromArray(
    events.map((e) => e.id),
    new Utf8(),
  );
  children.n = vectorFromArray(
    events.map((e) => e.n),
    new Float64(),
  );
  return tableToIPC(new Table(children), 'stream');
}
