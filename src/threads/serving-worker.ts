import { parentPort } from 'node:worker_threads';
import { KeyRegistry } from '../auth/key-registry.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import { listen, type UwsServer } from '../http/uws-server.js';
import { AccessLog } from '../log/access-log.js';
import { createLogger } from '../log/logger.js';
import type { MetricsSnapshot } from '../metrics/aggregate.js';
import { tableFromTransfer } from '../store/table-transfer.js';
import { clockFromShared } from '../time/clock.js';
import { realTimers } from '../time/timers.js';
import type { AdminOps } from '../api/admin.js';
import { DatasetRegistry } from '../generations/dataset-registry.js';
import { makeGeneration, type Generation } from '../generations/generation.js';
import { GenerationReaper } from '../generations/generation-reaper.js';
import { catalogFromJson } from '../catalog/catalog-document.js';
import type { AdminOp, FromServing, GenerationMessage, ServingCall, ToServing } from './serving-messages.js';
import { ServingMetrics } from './serving-metrics.js';
import { serveThread } from './serving-thread.js';
import { ThreadSupply } from './thread-supply.js';

/**
 * A serving thread: its own uWS app on the shared port (the kernel spreads connections
 * over the threads) and its own handler over generations that the loading thread built.
 * Tables arrive on shared memory, so N threads hold one copy of the data.
 */
const port = parentPort!;
const send = (m: FromServing): void => port.postMessage(m);

let registry: DatasetRegistry | null = null;
let server: UwsServer | null = null;
let accessLog: AccessLog | null = null;
let metrics: ServingMetrics | null = null;
let keys: KeyRegistry | null = null;
let limiter: RateLimiter | null = null;
let supply: ThreadSupply | null = null;
/** this thread's wrappers of the shared tables it lets go are collected at once, not at some later GC */
const reaper = new GenerationReaper(realTimers);
const pending = new Map<number, { resolve(b: Uint8Array): void; reject(e: Error): void }>();
let nextId = 0;

const admin: AdminOps = {
  refresh: () => ask('refresh'),
  status: () => ask('status'),
  metrics: () => ask('metrics'),
};

/** A generation the loading thread sent, made here (its table on shared memory: nothing copied). */
function generationOf(m: GenerationMessage): Generation {
  return makeGeneration({ number: m.number, uid: m.uid, manifest: m.manifest, table: tableFromTransfer(m.table), loadedAtMs: m.loadedAtMs, loadMs: m.loadMs });
}

function ask(op: AdminOp): Promise<Uint8Array> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ type: 'admin', id, op });
  });
}

async function answer(op: ServingCall): Promise<MetricsSnapshot | null> {
  switch (op) {
    case 'metrics':
      return metrics === null ? [] : metrics.snapshot();
    case 'stop-listening':
      server?.stopListening();
      return null;
    case 'idle':
      await server?.idle();
      return null;
  }
}

port.on('message', (m: ToServing) => {
  switch (m.type) {
    case 'init': {
      const { options } = m;
      const selection = DatasetSelection.parse(options.datasets);
      registry = new DatasetRegistry(selection, catalogFromJson(m.catalog));
      const clock = clockFromShared(m.clock);
      supply = new ThreadSupply(send, clock);
      keys = new KeyRegistry(m.keys);
      limiter = new RateLimiter(keys, clock, m.limiter);
      const log = createLogger({ level: options.logLevel, clock });
      accessLog = options.accessLog ? new AccessLog({ clock }) : null;
      metrics = new ServingMetrics(
        registry.slots.map((s) => s.id),
        m.thread,
      );
      serveThread(
        {
          registry,
          supply,
          rowArena: m.rowArena,
          keys,
          limiter,
          authFailures: m.authFailures,
          clock,
          log,
          admin,
          options,
          port: m.port,
          metrics,
          accessLog,
        },
        listen,
      ).then(
        (s) => {
          server = s;
          send({ type: 'listening', port: s.port });
        },
        (e: Error) => send({ type: 'listen-failed', error: e.message }),
      );
      return;
    }
    case 'generation':
    case 'retained': {
      const slot = registry?.byName(m.dataset);
      if (slot === undefined) return;
      // A generation this thread holds already keeps its object (and the caches keyed by it);
      // the message's copy of the table is let go.
      if (m.type === 'retained' && slot.find(m.number) !== null) return reaper.dropped(m.table);
      const g = generationOf(m);
      if (m.type === 'generation') slot.swap(g);
      else slot.adopt(g);
      return;
    }
    case 'release': {
      const slot = registry?.byName(m.dataset);
      if (slot === undefined) return;
      const g = slot.release(m.number);
      if (g !== null) reaper.dropped(g);
      supply?.released(slot, m.number);
      return;
    }
    case 'fetched':
      supply?.fetched(m.id, m.error);
      return;
    case 'catalog': {
      if (registry === null) return;
      const changed = new Map(m.changed.map((c) => [c.dataset, c]));
      const change = registry.apply(catalogFromJson(m.catalog), (slot) => {
        const g = changed.get(slot.id)?.generation ?? null;
        return g === null ? null : generationOf(g);
      });
      const dropped = [...change.dropped];
      for (const c of m.changed) {
        const slot = registry.byName(c.dataset);
        if (slot === undefined) continue;
        if (c.generation === null && slot.current !== null) dropped.push(...slot.unload(c.status.lastError ?? 'unloaded by the catalog in force'));
        slot.mirror(c.status);
      }
      // Removed datasets', unloaded and superseded generations: this thread collects them at once.
      for (const g of dropped) reaper.dropped(g);
      return;
    }
    case 'slot': {
      registry?.byName(m.dataset)?.mirror(m.status);
      return;
    }
    case 'ready':
      registry?.markReady();
      return;
    case 'drain':
      registry?.markDraining();
      return;
    case 'keys':
      // Both in one message turn: no request sees new keys with old buckets.
      keys?.replace(new KeyRegistry(m.keys));
      if (keys !== null) limiter?.replace(keys, m.limiter);
      return;
    case 'call':
      void answer(m.op).then((value) => send({ type: 'call-reply', id: m.id, value }));
      return;
    case 'admin-reply': {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.body !== null) p?.resolve(m.body);
      else p?.reject(new Error(m.error ?? 'admin request failed'));
      return;
    }
    case 'close':
      reaper.stop();
      server?.close();
      accessLog?.close();
      metrics?.close();
      send({ type: 'closed' });
      port.close();
      return;
  }
});
