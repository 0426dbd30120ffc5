import { parentPort } from 'node:worker_threads';
import { opsCodeOf } from '../ops-errors.js';
import { PartAssembly } from '../store/part-assembly.js';
import { packShared } from '../store/pack-shared.js';
import { tableToTransfer } from '../store/table-transfer.js';
import { realTimers } from '../time/timers.js';
import { GenerationReaper } from './generation-reaper.js';
import { releaseBytes } from './release-bytes.js';
import type { BuildReply, BuildRequest } from './table-builder.js';

/**
 * Worker thread: one generation at a time, its parts in, a table on shared memory out (see
 * table-builder.ts). Each part's bytes are freed as soon as they are decoded into the
 * generation's columns.
 */
/** The table is the asking thread's once sent: this thread's wrappers of its shared memory are collected at once. */
const reaper = new GenerationReaper(realTimers);
/** Buffers above this are sent as they are (pack-shared.ts): the Dockerfile's mmap threshold. */
const PACK_LARGEST = 4 * 1024 * 1024;

let assembly: PartAssembly | null = null;

function reply(r: BuildReply): void {
  parentPort!.postMessage(r);
}

parentPort!.on('message', (msg: BuildRequest) => {
  try {
    switch (msg.type) {
      case 'open':
        assembly = null;
        assembly = new PartAssembly(msg.want);
        return reply({ id: msg.id, ok: true, table: null });
      case 'add':
        try {
          assembly!.add(msg.bytes, msg.verified);
        } finally {
          releaseBytes(msg.bytes);
        }
        return reply({ id: msg.id, ok: true, table: null });
      case 'finish': {
        const table = assembly!.finish();
        assembly = null;
        // What is sent is one buffer for the small arrays (pack-shared.ts); the build's own are this thread's garbage.
        const sent = packShared(tableToTransfer(table), PACK_LARGEST);
        reaper.dropped(table);
        return reply({ id: msg.id, ok: true, table: sent });
      }
      case 'abort':
        assembly = null;
        return;
    }
  } catch (e) {
    if (msg.type !== 'add') assembly = null;
    reply({ id: msg.id, ok: false, error: e instanceof Error ? e.message : String(e), code: opsCodeOf(e) });
  }
});
