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
    const table = snapshotToTable(msg.parts, msg.want);
    if (msg.keepBytes) {
      parentPort!.postMessage(
        { ok: true, table: tableToTransfer(table), parts: msg.parts },
        msg.parts.map((b) => b.buffer as ArrayBuffer),
      );
      return;
    }
    parentPort!.postMessage({ ok: true, table: tableToTransfer(table), parts: null });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e), code: opsCodeOf(e) });
  }
  for (const b of msg.parts) releaseBytes(b);
});
