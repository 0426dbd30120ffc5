import { parentPort } from 'node:worker_threads';
import { snapshotToTable, type SnapshotExpectations } from '../store/snapshot-to-table.js';
import { tableToTransfer } from '../store/table-transfer.js';

/** Worker thread: snapshot bytes in, a table on shared memory out (see table-builder.ts). */
parentPort!.on('message', (msg: { bytes: Uint8Array; want: SnapshotExpectations }) => {
  try {
    const table = snapshotToTable(msg.bytes, msg.want);
    parentPort!.postMessage({ ok: true, table: tableToTransfer(table) });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
