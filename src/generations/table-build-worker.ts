import { parentPort } from 'node:worker_threads';
import { opsCodeOf } from '../ops-errors.js';
import { snapshotToTable } from '../store/snapshot-to-table.js';
import { packShared } from '../store/pack-shared.js';
import { tableToTransfer } from '../store/table-transfer.js';
import { realTimers } from '../time/timers.js';
import { GenerationReaper } from './generation-reaper.js';
import { releaseBytes } from './release-bytes.js';
import type { BuildRequest } from './table-builder.js';

/**
 * Worker thread: snapshot bytes in, a table on shared memory out (see table-builder.ts). The
 * table holds copies only, so the bytes go back when asked for and are freed otherwise.
 */
/** The table is the asking thread's once sent: this thread's wrappers of its shared memory are collected at once. */
const reaper = new GenerationReaper(realTimers);

parentPort!.on('message', (msg: BuildRequest) => {
  try {
    const table = snapshotToTable(msg.parts, msg.want);
    // What is sent is one buffer (pack-shared.ts); the build's own arrays are this thread's garbage.
    const sent = packShared(tableToTransfer(table));
    reaper.dropped(table);
    if (msg.keepBytes) {
      parentPort!.postMessage(
        { ok: true, table: sent, parts: msg.parts },
        msg.parts.map((b) => b.buffer as ArrayBuffer),
      );
      return;
    }
    parentPort!.postMessage({ ok: true, table: sent, parts: null });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e), code: opsCodeOf(e) });
  }
  for (const b of msg.parts) releaseBytes(b);
});
