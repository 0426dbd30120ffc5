import type { SnapshotSource } from '../source/snapshot-source.js';
import { BUILTIN_CATALOG } from '../catalog/builtin.js';
import { floorUsOf, type Catalog } from '../catalog/catalog.js';
import { readCatalog } from '../catalog/catalog-source.js';
import { refloorTable } from '../store/build-table.js';
import { makeGeneration, nextGenerationUid, type Generation } from './generation.js';
import type { Logger } from '../log/logger.js';
import { opsCodeOf, type OpsErrorCode } from '../ops-errors.js';
import type { Manifest } from '../snapshot/manifest.js';
import { readManifest } from '../snapshot/read-manifest.js';
import type { Clock } from '../time/clock.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import { loadGeneration } from './load-generation.js';
import { runPooled } from './run-pooled.js';
import type { CacheStage, SnapshotCache } from './snapshot-cache.js';
import { noObserver, type SlotObserver } from './slot-observer.js';
import type { TableBuilder } from './table-builder.js';
import { sleep, type Timers } from '../time/timers.js';

export interface LoaderOptions {
  readonly source: SnapshotSource;
  readonly registry: DatasetRegistry;
  readonly builder: TableBuilder;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: Logger;
  /** how often manifests are polled; 0 = never (only POST /admin/refresh) */
  readonly refreshIntervalMs: number;
  /** how long start-up keeps retrying an unreachable source */
  readonly startupTimeoutMs: number;
  readonly cache: SnapshotCache | null;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** told after every check of a dataset and when start-up is over (serving threads mirror the slots) */
  readonly observer?: SlotObserver;
  /** snapshots fetched and built at once (default: the builder's parallelism) */
  readonly parallelLoads?: number;
  /** told of every settled check's outcome (metrics) */
  readonly checks?: CheckListener;
  /** the etag of the catalog.json in force at start (null: the built-in catalog, no catalog.json) */
  readonly catalogEtag?: string | null;
  /** false when the source could not be asked at start (the built-in catalog stands in): catalog.json is read at the first check */
  readonly catalogKnown?: boolean;
}

/** What /admin/status says of the catalog (contract 13). */
export interface CatalogStatus {
  /** 'source': catalog.json; 'builtin': there is none */
  readonly origin: 'source' | 'builtin';
  readonly products: number;
  readonly datasets: number;
  readonly lastCheckMs: number | null;
  /** why the last catalog.json read was refused (the catalog in force stayed); null after a good one */
  readonly lastError: string | null;
  readonly rejected: number;
}

/** Hears how each check of a dataset ended: the source answered well, or failed with a stable code. */
export interface CheckListener {
  succeeded(slot: DatasetSlot, atMs: number): void;
  failed(slot: DatasetSlot, code: OpsErrorCode): void;
  /** an invalid catalog.json was refused */
  catalogRejected?(): void;
}

export type Outcome = 'unchanged' | 'loaded' | 'missing' | 'refused' | 'unreachable';

export interface CheckReport {
  readonly dataset: string;
  readonly outcome: Outcome;
  readonly generationBefore: number | null;
  readonly generationAfter: number | null;
  readonly error: string | null;
  /** the stable code of `error` (ops-errors.ts); null when there is none */
  readonly code: OpsErrorCode | null;
}

interface SlotSchedule {
  /** etag of the manifest last acted on (loaded, or refused: a refused manifest is not fetched again until it changes) */
  etag: string | null;
  failures: number;
  nextAtMs: number;
  /** what the last failure was: an outage clears on the next good answer, a refusal only on a new manifest */
  lastFailure: OpsErrorCode | null;
}

/** A check that found a new manifest: its snapshot is to be fetched and built. */
interface PendingLoad {
  readonly slot: DatasetSlot;
  readonly manifest: Manifest;
  readonly etag: string;
  readonly before: number | null;
}

/** How a failure shows in /admin/refresh and the slot's state: an outage, no manifest, or a refusal. */
function outcomeOf(code: OpsErrorCode): 'missing' | 'refused' | 'unreachable' {
  if (code === 'source_unreachable') return 'unreachable';
  if (code === 'manifest_missing') return 'missing';
  return 'refused';
}

/**
 * Keeps every dataset's serving generation in step with the source: loads at start (retrying
 * an unreachable source until the start-up timeout, falling back to the local cache), polls
 * manifests with conditional reads, loads new generations off the serving thread and swaps
 * them in. Any failure keeps the last good generation, is logged once per change of reason,
 * and is retried with capped exponential backoff.
 *
 * One round of checks runs at a time. Inside a round, every manifest is read first, in
 * order; then the new snapshots are fetched and built a few at once (as many as the builder
 * runs), the largest first, so that the longest build does not start last. Each dataset is
 * swapped in on its own, as soon as its build succeeds.
 */
export class SnapshotLoader {
  private readonly schedule = new Map<DatasetSlot, SlotSchedule>();
  private chain: Promise<unknown> = Promise.resolve();
  private timer: unknown = null;
  private stopped = false;
  /** the local cache is read once per dataset: it does not change while start-up retries */
  private readonly cacheTried = new Set<DatasetSlot>();
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly observer: SlotObserver;
  /** the etag of the last catalog.json read (valid or not: an invalid one is not read again until it changes) */
  private catalogEtag: string | null;
  /** whether the catalog in force came from catalog.json (else it is the built-in one) */
  private catalogFromSource: boolean;
  private catalogNextAtMs: number;
  private catalogCheckMs: number | null = null;
  private catalogError: string | null = null;
  private catalogRejected = 0;
  /** why the last catalog read failed to reach the source (logged once per reason) */
  private catalogUnreachable: string | null = null;

  constructor(private readonly o: LoaderOptions) {
    this.observer = o.observer ?? noObserver;
    this.baseMs = o.backoffBaseMs ?? 1000;
    this.maxMs = o.backoffMaxMs ?? 300_000;
    for (const slot of o.registry.slots) this.schedule.set(slot, { etag: null, failures: 0, nextAtMs: 0, lastFailure: null });
    this.catalogEtag = o.catalogEtag ?? null;
    this.catalogFromSource = this.catalogEtag !== null;
    this.catalogNextAtMs = o.catalogKnown === false ? 0 : o.refreshIntervalMs > 0 ? o.clock.now() + o.refreshIntervalMs : Infinity;
  }

  /** The catalog in force and its last check (for /admin/status). */
  catalogStatus(): CatalogStatus {
    const c = this.o.registry.catalog;
    return {
      origin: this.catalogFromSource ? 'source' : 'builtin',
      products: c.products.length,
      datasets: c.entries.length,
      lastCheckMs: this.catalogCheckMs,
      lastError: this.catalogError,
      rejected: this.catalogRejected,
    };
  }

  /** Start-up: every named dataset is tried; resolves once all are loaded or settled (contract 8). */
  async start(): Promise<void> {
    const { registry, clock, log } = this.o;
    await this.warnAboutUnnamed();
    const deadline = clock.now() + this.o.startupTimeoutMs;
    let pending = [...registry.slots];
    for (let attempt = 0; ; attempt++) {
      const round = pending;
      const reports = await this.serial(() => this.checkAll(round));
      for (const [i, r] of reports.entries()) {
        const slot = pending[i]!;
        if (r.outcome === 'unreachable' && slot.current === null) await this.fromCache(slot);
      }
      pending = pending.filter((s, i) => reports[i]!.outcome === 'unreachable' && s.current === null);
      const left = deadline - clock.now();
      if (pending.length === 0 || left <= 0 || this.stopped) break;
      log.warn('source unreachable at start; retrying', { datasets: pending.map((s) => s.id), attempt: attempt + 1 });
      await sleep(this.o.timers, Math.min(left, this.backoff(attempt + 1)));
    }
    registry.markReady();
    this.observer.ready();
    this.arm();
  }

  /** POST /admin/refresh: check the catalog, then every dataset now, whatever its backoff. */
  refreshNow(): Promise<CheckReport[]> {
    return this.serial(async () => {
      await this.checkCatalog();
      return this.checkAll(this.o.registry.slots);
    }).finally(() => this.arm());
  }

  /** When each dataset is checked next (for /admin/status). */
  nextCheckMs(slot: DatasetSlot): number | null {
    return this.o.refreshIntervalMs > 0 ? (this.schedule.get(slot)?.nextAtMs ?? null) : null;
  }

  failures(slot: DatasetSlot): number {
    return this.schedule.get(slot)?.failures ?? 0;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private arm(): void {
    if (this.stopped || this.o.refreshIntervalMs <= 0) return;
    if (this.timer !== null) this.o.timers.clearTimeout(this.timer);
    // catalog.json is read with the round of the datasets due (catalog first); it sets the
    // time of a round only when no dataset is served (an empty catalog still changes).
    let next = this.schedule.size === 0 ? this.catalogNextAtMs : Infinity;
    for (const s of this.schedule.values()) next = Math.min(next, s.nextAtMs);
    this.timer = this.o.timers.setTimeout(
      () => {
        this.timer = null;
        void this.serial(async () => {
          // The catalog first (contract 13): a dataset it adds is checked in this round.
          if (!this.stopped && this.catalogNextAtMs <= this.o.clock.now()) await this.checkCatalog();
          const now = this.o.clock.now();
          const due = [...this.schedule].filter(([, s]) => s.nextAtMs <= now).map(([slot]) => slot);
          if (!this.stopped) await this.checkAll(due);
        }).finally(() => this.arm());
      },
      Math.max(0, next - this.o.clock.now()),
    );
  }

  private backoff(failures: number): number {
    return Math.min(this.maxMs, this.baseMs * 2 ** Math.max(0, failures - 1));
  }

  /** Checks each slot once; reports in the order of `slots`. */
  private async checkAll(slots: readonly DatasetSlot[]): Promise<CheckReport[]> {
    const reports: CheckReport[] = new Array<CheckReport>(slots.length);
    const loads: Array<PendingLoad & { readonly index: number }> = [];
    // Manifests are small: read one after another, in order, over one connection.
    for (const [index, slot] of slots.entries()) {
      const found = await this.readCheck(slot);
      if ('report' in found) {
        reports[index] = found.report;
        this.observer.slotChecked(slot);
      } else {
        loads.push({ ...found, index });
      }
    }
    loads.sort((a, b) => b.manifest.rows - a.manifest.rows || a.index - b.index);
    await runPooled(loads, this.o.parallelLoads ?? this.o.builder.parallelism, async (load) => {
      reports[load.index] = await this.load(load);
      this.observer.slotChecked(load.slot);
    });
    return reports;
  }

  /** The conditional manifest read of one dataset: a settled report, or a load to do. Never throws. */
  private async readCheck(slot: DatasetSlot): Promise<{ readonly report: CheckReport } | PendingLoad> {
    const { source, clock } = this.o;
    const s = this.schedule.get(slot)!;
    const before = slot.current?.number ?? null;
    slot.checked(clock.now());
    const ref = { productId: slot.product.id, dataset: slot.dataset };
    try {
      const m = await readManifest(source, ref, s.etag);
      if (m.status === 'missing') return { report: this.failed(slot, 'manifest_missing', 'no manifest.json at the source', before) };
      if (m.status === 'unchanged') return { report: this.succeeded(slot, 'unchanged', before) };
      if (m.manifest.generation === before) {
        s.etag = m.etag;
        return { report: this.succeeded(slot, 'unchanged', before) };
      }
      if (before !== null && m.manifest.generation < before) {
        s.etag = m.etag;
        return {
          report: this.failed(
            slot,
            'generation_regressed',
            `manifest generation ${m.manifest.generation} is below the served generation ${before}; generations only go up`,
            before,
          ),
        };
      }
      return { slot, manifest: m.manifest, etag: m.etag, before };
    } catch (e) {
      return { report: this.failure(slot, e, before) };
    }
  }

  /** Fetches, builds and swaps in the snapshot a check found. Never throws. */
  private async load({ slot, manifest, etag, before }: PendingLoad): Promise<CheckReport> {
    const { source, clock, builder } = this.o;
    const s = this.schedule.get(slot)!;
    try {
      let loaded;
      const cache = this.cacheStage(slot, manifest);
      try {
        loaded = await loadGeneration(source, slot, manifest, clock, builder, cache);
      } catch (e) {
        await cache?.discard();
        // A refused object is not fetched again until its manifest changes; a missing one
        // may still appear (publishers write the object first), so it is retried.
        const code = opsCodeOf(e);
        if (code !== 'source_unreachable' && code !== 'object_missing') s.etag = etag;
        throw e;
      }
      // The catalog may have changed the floor while this was built: serve it under the floor in force.
      const fresh = loaded.generation.table.floorUs === slot.floorUs ? loaded.generation : refloored(loaded.generation, slot.floorUs);
      slot.swap(fresh);
      s.etag = etag;
      const g = fresh;
      this.o.log.info('dataset loaded', {
        dataset: slot.id,
        generation: g.number,
        rows: g.table.rows,
        keys: g.table.keyCount,
        series: g.table.seriesCount,
        load_ms: Math.round(g.loadMs),
      });
      await cache?.commit();
      return this.succeeded(slot, 'loaded', before);
    } catch (e) {
      return this.failure(slot, e, before);
    }
  }

  /**
   * Where a load writes its verified parts (`--cache-dir`), or null. A cache that cannot be
   * written is logged and left alone: the load goes on without it.
   */
  private cacheStage(slot: DatasetSlot, manifest: Manifest): CacheStage | null {
    if (this.o.cache === null) return null;
    const stage = this.o.cache.stage(slot.product.id, slot.dataset, manifest);
    let broken = false;
    const guard = (what: () => Promise<void>) => async (): Promise<void> => {
      if (broken) return;
      await what().catch((e: Error) => {
        broken = true;
        this.o.log.warn('cannot write the snapshot cache', { dataset: slot.id, error: e.message });
      });
    };
    return {
      keep: (index, bytes) => guard(() => stage.keep(index, bytes))(),
      commit: guard(() => stage.commit()),
      discard: async () => {
        await stage.discard().catch(() => undefined);
      },
    };
  }

  private failure(slot: DatasetSlot, e: unknown, before: number | null): CheckReport {
    const reason = e instanceof Error ? e.message : String(e);
    return this.failed(slot, opsCodeOf(e), reason, before);
  }

  private succeeded(slot: DatasetSlot, outcome: Outcome, before: number | null): CheckReport {
    const s = this.schedule.get(slot)!;
    s.failures = 0;
    const now = this.o.clock.now();
    s.nextAtMs = now + this.o.refreshIntervalMs;
    this.o.checks?.succeeded(slot, now);
    // The source answers again: an outage is over. A refused manifest that is still in
    // place (unchanged) stays reported until a new one replaces it.
    if (outcome === 'loaded' || s.lastFailure === null || outcomeOf(s.lastFailure) !== 'refused') {
      if (slot.lastError !== null && outcome === 'unchanged') this.o.log.info('snapshot source answers again', { dataset: slot.id });
      slot.recovered();
      s.lastFailure = null;
    }
    return {
      dataset: slot.id,
      outcome,
      generationBefore: before,
      generationAfter: slot.current?.number ?? null,
      error: outcome === 'unchanged' ? slot.lastError : null,
      code: outcome === 'unchanged' && slot.lastError !== null ? s.lastFailure : null,
    };
  }

  private failed(slot: DatasetSlot, code: OpsErrorCode, reason: string, before: number | null): CheckReport {
    const outcome = outcomeOf(code);
    const s = this.schedule.get(slot)!;
    s.failures++;
    s.lastFailure = code;
    this.o.checks?.failed(slot, code);
    s.nextAtMs = this.o.clock.now() + this.backoff(s.failures);
    if (reason !== slot.lastError) {
      const fields = { dataset: slot.id, outcome, code, reason, serving_generation: before };
      if (outcome === 'missing') this.o.log.warn('dataset not loaded', fields);
      else this.o.log.error(outcome === 'unreachable' ? 'snapshot source unreachable' : 'snapshot refused', fields);
    }
    slot.fail(outcome, reason);
    return { dataset: slot.id, outcome, generationBefore: before, generationAfter: slot.current?.number ?? null, error: reason, code };
  }

  private async fromCache(slot: DatasetSlot): Promise<void> {
    const cache = this.o.cache;
    if (cache === null || this.cacheTried.has(slot)) return;
    this.cacheTried.add(slot);
    const manifest = await cache.manifest(slot.product.id, slot.dataset);
    if (manifest === null) return;
    try {
      const { generation: g } = await loadGeneration(cache.source(), slot, manifest, this.o.clock, this.o.builder);
      // Still failing against the source: the reason stays visible in /admin/status.
      slot.serveCached(g, 'serving the local cache: the source is unreachable');
      this.o.log.warn('serving a cached generation while the source is unreachable', { dataset: slot.id, generation: g.number });
      this.observer.slotChecked(slot);
    } catch (e) {
      this.o.log.error('cached snapshot refused', { dataset: slot.id, reason: (e as Error).message });
    }
  }

  /**
   * The conditional read of catalog.json (contract 13): a new valid catalog is put in
   * force, an invalid one refused (logged, counted, its reason in /admin/status) while the
   * catalog in force stays, no catalog.json puts the built-in one back. Never throws.
   */
  private async checkCatalog(): Promise<void> {
    const { source, clock, log, refreshIntervalMs } = this.o;
    this.catalogCheckMs = clock.now();
    this.catalogNextAtMs = refreshIntervalMs > 0 ? clock.now() + refreshIntervalMs : Infinity;
    let r;
    try {
      r = await readCatalog(source, this.catalogEtag);
    } catch (e) {
      const reason = (e as Error).message;
      if (reason !== this.catalogUnreachable) log.warn('cannot read catalog.json; the catalog in force stays', { reason });
      this.catalogUnreachable = reason;
      return;
    }
    this.catalogUnreachable = null;
    if (r.status === 'unchanged') return;
    if (r.status === 'invalid') {
      this.catalogEtag = r.etag;
      this.catalogError = r.error.message;
      this.catalogRejected++;
      this.o.checks?.catalogRejected?.();
      log.error('catalog refused; the catalog in force stays', { code: r.error.code, reason: r.error.message });
      return;
    }
    this.catalogError = null;
    if (r.status === 'absent') {
      this.catalogEtag = null;
      if (!this.catalogFromSource) return;
      this.catalogFromSource = false;
      await this.applyCatalog(BUILTIN_CATALOG);
      return;
    }
    this.catalogEtag = r.etag;
    this.catalogFromSource = true;
    await this.applyCatalog(r.catalog);
  }

  /** Puts a catalog in force here, tells the serving threads and the memory budget, and checks the datasets it adds at once. */
  private async applyCatalog(catalog: Catalog): Promise<void> {
    const { registry, log, clock } = this.o;
    const change = registry.apply(catalog, (slot, product) => {
      const g = slot.current;
      return g === null ? null : refloored(g, floorUsOf(product.floor));
    });
    for (const slot of change.removed) {
      this.schedule.delete(slot);
      this.cacheTried.delete(slot);
    }
    for (const slot of change.added) this.schedule.set(slot, { etag: null, failures: 0, nextAtMs: 0, lastFailure: null });
    for (const { slot } of change.changed) {
      // Read the manifest again: a snapshot refused under the old filters may fit the new ones.
      const s = this.schedule.get(slot);
      if (s !== undefined) Object.assign(s, { etag: null, nextAtMs: 0 });
      const g = slot.current;
      const lacking = g === null ? undefined : slot.product.filters.find((f) => !g.table.seriesKey.includes(f.param));
      if (lacking !== undefined) {
        const reason = `filter column "${lacking.param}" is not in the series key ${JSON.stringify(g!.table.seriesKey)} of generation ${g!.number}`;
        change.dropped.push(...slot.unload(reason));
        log.error('dataset unloaded: the catalog in force names a filter its snapshot lacks', { dataset: slot.id, reason });
      }
    }
    log.info('catalog applied', {
      products: catalog.products.length,
      datasets: registry.slots.length,
      added: change.added.map((s) => s.id),
      removed: change.removed.map((s) => s.id),
      changed: change.changed.map((c) => c.slot.id),
    });
    this.observer.catalogChanged?.(change, catalog);
    for (const { slot } of change.changed) this.observer.slotChecked(slot);
    if (change.added.length > 0) {
      for (const slot of change.added) slot.checked(clock.now());
      await this.checkAll(change.added);
    }
  }

  private async warnAboutUnnamed(): Promise<void> {
    try {
      for (const ref of await this.o.source.listDatasets()) {
        if (!this.o.registry.catalog.has(ref.productId, ref.dataset)) {
          this.o.log.warn('ignoring a dataset the catalog does not name', { dataset: `${ref.productId}/${ref.dataset}` });
        }
      }
    } catch (e) {
      this.o.log.warn('cannot list the snapshot source', { source: this.o.source.description, error: (e as Error).message });
    }
  }
}

/** The same generation under another floor (contract 13): same number and manifest, a new uid (caches keyed by it start afresh). */
function refloored(g: Generation, floorUs: number): Generation {
  return makeGeneration({
    number: g.number,
    uid: nextGenerationUid(),
    manifest: g.manifest,
    table: refloorTable(g.table, floorUs),
    loadedAtMs: g.loadedAtMs,
    loadMs: g.loadMs,
  });
}
