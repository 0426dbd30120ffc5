import { parentPort, workerData } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { ApiError } from '../errors.js';
import { fullGc } from '../generations/full-gc.js';
import { computeJoin } from '../join/join-compute.js';
import { tableFromTransfer } from '../store/table-transfer.js';
import type { Table } from '../store/table.js';
import type { FromJoinWorker, JoinWorkerData, ToJoinWorker, WorkerMemory } from './join-messages.js';

/**
 * A join worker (join-runner.ts): computes one join at a time, the table on shared memory
 * (nothing copied), the body moved here and the answer moved back. Between the join's
 * steps it reads the cancel cell the serving thread sets when the client went away, and
 * stops there. After each join it runs a full collection, so what the join allocated (and
 * the wrappers of tables it let go) is given back at once, not at some later GC
 * (docs/decisions.md#join-off-thread).
 */
const port = parentPort!;
const { cancel } = workerData as JoinWorkerData;
/** the tables this worker holds, by generation uid (the runner decides which: it mirrors this map) */
const tables = new Map<number, Table>();

class Cancelled extends Error {}

const check = (): void => {
  if (Atomics.load(cancel, 0) !== 0) throw new Cancelled();
};

const send = (m: FromJoinWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

function memory(): WorkerMemory {
  const h = getHeapStatistics();
  return { heapUsed: h.used_heap_size, external: h.external_memory };
}

port.on('message', (m: ToJoinWorker) => {
  if (m.type === 'memory') {
    // Array buffers are freed by a sweeper after the collection: a second one, a turn later, reads what is left.
    fullGc();
    setTimeout(() => {
      fullGc();
      send({ type: 'memory', memory: memory() });
    }, 20);
    return;
  }
  if (m.type === 'drop') {
    for (const uid of m.uids) tables.delete(uid);
    fullGc();
    return;
  }
  for (const uid of m.evict) tables.delete(uid);
  if (m.table !== null) tables.set(m.uid, tableFromTransfer(m.table));
  const table = tables.get(m.uid);
  send({ type: 'started', id: m.id });
  try {
    if (table === undefined) throw new Error(`internal: the join worker does not hold generation uid ${m.uid}`);
    const out = computeJoin(table, m.bytes, m.request, check);
    const body = out.body;
    const owned = body.buffer instanceof ArrayBuffer ? [body.buffer] : [];
    send({ type: 'done', id: m.id, ok: true, body, count: out.count, matched: out.matched, anyBeforeFloor: out.anyBeforeFloor }, owned);
  } catch (e) {
    if (e instanceof Cancelled) send({ type: 'done', id: m.id, ok: false, cancelled: true, error: null, internal: null });
    else if (e instanceof ApiError)
      send({ type: 'done', id: m.id, ok: false, cancelled: false, error: { code: e.code, message: e.message, param: e.param ?? null }, internal: null });
    else send({ type: 'done', id: m.id, ok: false, cancelled: false, error: null, internal: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
  // After this turn, when nothing of the join (the message, its body) is reachable any more.
  setImmediate(fullGc);
});
