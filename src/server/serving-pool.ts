import { createServer } from 'node:net';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';
import { tableToTransfer } from '../store/table-transfer.js';
import type { AdminOps } from './admin.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { FromServing, ServingInit, ToServing } from './serving-messages.js';
import type { SlotObserver } from './slot-observer.js';
import { spawnModuleWorker } from './table-builder.js';

/**
 * The serving threads of `--workers N`, seen from the loading thread: starts them on one
 * port, hands every new generation and dataset state to each (it is the loader's
 * SlotObserver), and answers their admin requests (the loader lives here).
 *
 * Built before the loader (which is told of it at construction), started once the admin
 * operations over that loader exist.
 */
export class ServingPool implements SlotObserver {
  private workers: Worker[] = [];
  /** generation number last sent per dataset, so a state update never resends a table */
  private readonly sent = new Map<string, number>();
  private admin: AdminOps | null = null;

  constructor(private readonly log: Logger) {}

  /**
   * Starts n threads on one port (SO_REUSEPORT: the kernel spreads connections). Threads
   * cannot join a socket bound to port 0, so an ephemeral port is chosen first; should
   * another process take it in between, a fresh one is tried. Resolves to the port.
   */
  async start(n: number, init: Omit<ServingInit, 'type'>, admin: AdminOps): Promise<number> {
    this.admin = admin;
    for (let attempt = 1; ; attempt++) {
      const port = init.port === 0 ? await freePort(init.host) : init.port;
      try {
        for (let i = 0; i < n; i++) await this.spawn({ type: 'init', ...init, port });
        return port;
      } catch (e) {
        await this.close();
        this.workers = [];
        if (init.port !== 0 || attempt >= 3) throw e;
      }
    }
  }

  /** After a check of a slot: its state, and its table when the generation is new. */
  slotChecked(slot: DatasetSlot): void {
    const g = slot.current;
    if (g !== null && this.sent.get(slot.id) !== g.number) {
      this.sent.set(slot.id, g.number);
      this.broadcast({
        type: 'generation',
        dataset: slot.id,
        number: g.number,
        manifest: g.manifest,
        table: tableToTransfer(g.table),
        loadedAtMs: g.loadedAtMs,
        loadMs: g.loadMs,
      });
    }
    this.broadcast({ type: 'slot', dataset: slot.id, status: slot.status() });
  }

  ready(): void {
    this.broadcast({ type: 'ready' });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.once('exit', () => resolve());
            w.postMessage({ type: 'close' } satisfies ToServing);
          }),
      ),
    );
  }

  private broadcast(m: ToServing): void {
    for (const w of this.workers) w.postMessage(m);
  }

  private spawn(init: ServingInit): Promise<number> {
    const w = spawnModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './serving-worker.ts' : './serving-worker.js', import.meta.url));
    this.workers.push(w);
    w.on('error', (e) => this.log.error('serving thread failed', { error: e.message }));
    return new Promise((resolve, reject) => {
      w.on('message', (m: FromServing) => {
        if (m.type === 'listening') resolve(m.port);
        else if (m.type === 'listen-failed') reject(new Error(m.error));
        else if (m.type === 'admin') void this.answerAdmin(w, m.id, m.op);
      });
      w.postMessage(init);
    });
  }

  private async answerAdmin(w: Worker, id: number, op: 'refresh' | 'status'): Promise<void> {
    try {
      const admin = this.admin;
      if (admin === null) throw new Error('the serving pool is not started');
      const body = await (op === 'refresh' ? admin.refresh() : admin.status());
      w.postMessage({ type: 'admin-reply', id, body, error: null } satisfies ToServing);
    } catch (e) {
      w.postMessage({ type: 'admin-reply', id, body: null, error: e instanceof Error ? e.message : String(e) } satisfies ToServing);
    }
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
