import { createServer } from 'node:net';
import type { Worker } from 'node:worker_threads';
import type { KeysConfig } from '../auth/keys-file.js';
import type { RateLimiterState } from '../auth/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import type { MetricsSnapshot } from '../metrics/aggregate.js';
import { tableToTransfer } from '../store/table-transfer.js';
import type { Catalog } from '../catalog/catalog.js';
import { catalogDocument } from '../catalog/catalog-document.js';
import type { AdminOps } from '../api/admin.js';
import type { CatalogChange, DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { Generation } from '../generations/generation.js';
import { GenerationUnavailableError, type GenerationSupply } from '../generations/generation-supply.js';
import type { RetainedListener } from '../generations/retained-generations.js';
import type { AdminOp, FromServing, GenerationMessage, ServingCall, ServingInit, ToServing } from './serving-messages.js';
import type { SlotObserver } from '../generations/slot-observer.js';
import { spawnModuleWorker } from '../generations/table-builder.js';

/**
 * The serving threads of `--workers N`, seen from the loading thread: starts them on one
 * port, hands every new generation and dataset state to each (it is the loader's
 * SlotObserver), and answers their admin requests (the loader lives here).
 *
 * Built before the loader (which is told of it at construction), started once the admin
 * operations over that loader exist.
 */
export class ServingPool implements SlotObserver, RetainedListener {
  private workers: Worker[] = [];
  /** generation number last sent per dataset, so a state update never resends a table */
  private readonly sent = new Map<string, number>();
  private admin: AdminOps | null = null;
  /** the loading thread's generations (memory budget + history loads), for the threads' fetches and touches */
  private supply: GenerationSupply | null = null;
  /** calls to the threads awaiting their reply, by id */
  private readonly calls = new Map<number, (value: MetricsSnapshot | null) => void>();
  private nextCall = 0;

  constructor(
    private readonly log: Logger,
    private readonly registry: DatasetRegistry,
  ) {}

  /**
   * Starts `workers` threads on one port (SO_REUSEPORT: the kernel spreads connections). Threads
   * cannot join a socket bound to port 0, so an ephemeral port is chosen first; should
   * another process take it in between, a fresh one is tried. Resolves to the port.
   */
  async start(init: Omit<ServingInit, 'type' | 'thread' | 'port'>, admin: AdminOps, supply: GenerationSupply): Promise<number> {
    this.admin = admin;
    this.supply = supply;
    const { host, port: given, workers } = init.options;
    for (let attempt = 1; ; attempt++) {
      const port = given === 0 ? await freePort(host) : given;
      try {
        for (let i = 0; i < workers; i++) await this.spawn({ type: 'init', ...init, port, thread: String(i) });
        return port;
      } catch (e) {
        await this.close();
        this.workers = [];
        if (given !== 0 || attempt >= 3) throw e;
      }
    }
  }

  /** After a check of a slot: its state, and its table when the generation is new. */
  slotChecked(slot: DatasetSlot): void {
    const g = slot.current;
    if (g !== null && this.sent.get(slot.id) !== g.number) {
      this.sent.set(slot.id, g.number);
      this.broadcast(generationMessage('generation', slot, g));
    }
    this.broadcast({ type: 'slot', dataset: slot.id, status: slot.status() });
  }

  /** A new catalog: every thread applies it whole, with the changed datasets' generations (a removed dataset's tables are sent again should it come back). */
  catalogChanged(change: CatalogChange, catalog: Catalog): void {
    for (const slot of change.removed) this.sent.delete(slot.id);
    const changed = change.changed.map(({ slot }) => {
      const g = slot.current;
      if (g === null) this.sent.delete(slot.id);
      return { dataset: slot.id, generation: g === null ? null : generationMessage('generation', slot, g), status: slot.status() };
    });
    this.broadcast({ type: 'catalog', catalog: catalogDocument(catalog), changed });
  }

  /** A generation loaded from history: every thread keeps it beside its live one (one load serves them all). */
  adopted(slot: DatasetSlot, g: Generation): void {
    this.broadcast(generationMessage('retained', slot, g));
  }

  /** The budget let it go: every thread drops its reference. */
  released(slot: DatasetSlot, number: number): void {
    this.broadcast({ type: 'release', dataset: slot.id, number });
  }

  ready(): void {
    this.broadcast({ type: 'ready' });
  }

  /** SIGTERM: every thread's /readyz answers 503. */
  drain(): void {
    this.broadcast({ type: 'drain' });
  }

  /** A reloaded keys file, with the rate-limit buckets every thread shares for it. */
  replaceKeys(keys: KeysConfig, limiter: RateLimiterState): void {
    this.broadcast({ type: 'keys', keys, limiter });
  }

  /** Each thread's request metrics, for one scrape. */
  async metricsSnapshots(): Promise<MetricsSnapshot[]> {
    return (await this.callAll('metrics')).filter((s): s is MetricsSnapshot => s !== null);
  }

  /** Every thread stops accepting connections (open ones are still answered). */
  async stopListening(): Promise<void> {
    await this.callAll('stop-listening');
  }

  /** Resolves once no thread has a response in flight. */
  async idle(): Promise<void> {
    await this.callAll('idle');
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

  private callAll(op: ServingCall): Promise<Array<MetricsSnapshot | null>> {
    return Promise.all(
      this.workers.map(
        (w) =>
          new Promise<MetricsSnapshot | null>((resolve) => {
            const id = this.nextCall++;
            this.calls.set(id, resolve);
            w.postMessage({ type: 'call', id, op } satisfies ToServing);
          }),
      ),
    );
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
        else if (m.type === 'fetch') void this.answerFetch(w, m.id, m.dataset, m.number);
        else if (m.type === 'touch') this.touch(m.dataset, m.number);
        else if (m.type === 'call-reply') {
          this.calls.get(m.id)?.(m.value);
          this.calls.delete(m.id);
        }
      });
      w.postMessage(init);
    });
  }

  /**
   * A thread lacks a generation: load it here (one load, whoever asks), then send it to the
   * asking thread before the reply, even if the budget released it at once or the others
   * had it already (messages to a thread arrive in order, so the reply finds it there).
   */
  private async answerFetch(w: Worker, id: number, dataset: string, number: number): Promise<void> {
    const slot = this.registry.byName(dataset);
    try {
      if (this.supply === null || slot === undefined) throw new GenerationUnavailableError('gone', `${dataset} is not served here`);
      const g = await this.supply.fetch(slot, number);
      w.postMessage(generationMessage('retained', slot, g));
      w.postMessage({ type: 'fetched', id, error: null } satisfies ToServing);
      // Released at once (over budget): the asking request has it; the thread must not keep it.
      if (slot.find(number) === null) w.postMessage({ type: 'release', dataset: slot.id, number } satisfies ToServing);
    } catch (e) {
      const error = e instanceof GenerationUnavailableError ? { kind: e.kind, message: e.message } : { kind: 'refused' as const, message: String(e) };
      w.postMessage({ type: 'fetched', id, error } satisfies ToServing);
    }
  }

  private touch(dataset: string, number: number): void {
    const slot = this.registry.byName(dataset);
    if (slot !== undefined) this.supply?.touched(slot, number);
  }

  private async answerAdmin(w: Worker, id: number, op: AdminOp): Promise<void> {
    try {
      const admin = this.admin;
      if (admin === null) throw new Error('the serving pool is not started');
      const body = await admin[op]();
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

function generationMessage(type: GenerationMessage['type'], slot: DatasetSlot, g: Generation): GenerationMessage {
  return {
    type,
    dataset: slot.id,
    number: g.number,
    uid: g.uid,
    manifest: g.manifest,
    table: tableToTransfer(g.table),
    loadedAtMs: g.loadedAtMs,
    loadMs: g.loadMs,
  };
}
