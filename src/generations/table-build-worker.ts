import { parentPort } from 'node:worker_threads';
import { opsCodeOf } from '../ops-errors.js';
import { snapshotToTable } from '../store/snapshot-to-table.js';
import { tableToTransfer } from '../store/table-transfer.js';
import { releaseBytes } from './release-bytes.js';
import type { BuildRequest } from './table-builder.js';

/**
 * Worker thread: snapshot bytes in, a table on shared memory out (see table-builder.ts). The
 * table holds copies only, so the bytes go back when asked for and are freed otherwise.
 */
parentPort!.on('message', (msg: BuildRequest) => {
  try {
    const table = snapshotToTable(msg.bytes, msg.want);
    if (msg.keepBytes) {
      parentPort!.postMessage({ ok: true, table: tableToTransfer(table), bytes: msg.bytes }, [msg.bytes.buffer as ArrayBuffer]);
      return;
    }
    parentPort!.postMessage({ ok: true, table: tableToTransfer(table), bytes: null });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e), code: opsCodeOf(e) });
  }
  releaseBytes(msg.bytes);
});
