/**
 * PostgreSQL (the Debian server package) as its users would run this: a table per dataset
 * loaded with COPY FROM STDIN from the CSV side file, btree indexes that answer the as-of
 * query in index order, ANALYZE, and the load driven by pgbench (C client, prepared
 * statements, 64 connections, 2 threads) rather than a Node driver, so the client is not the
 * bottleneck. See postgres-pgbench.ts for how the query list reaches pgbench.
 */
import { createReadStream } from 'node:fs';
import type { Alternative, BenchData, BenchDataset, BenchQuery, RunOptions, RunResult, SetupInfo, WorkloadName } from './types.js';
import type { CanonicalRow, KeysetAfter, PageFetcher } from './duckdb-postgres-plan.js';
import { canonicalCell, findDataset, keysetOf, planQuery, storedType } from './duckdb-postgres-plan.js';
import type { PsqlSession } from './postgres-server.js';
import { PgServer, findPgBin, runCommand } from './postgres-server.js';
import { literalParams, pgCopy, pgCreateTable, pgIndexStatements, pgQuery } from './postgres-sql.js';
import { runPgbench } from './postgres-pgbench.js';

export interface PostgresOptions {
  /** shared_buffers (default env BENCH_PG_SHARED_BUFFERS or 2GB) */
  readonly sharedBuffers?: string;
}

export function createPostgresAlternative(options: PostgresOptions = {}): Alternative & PageFetcher {
  let server: PgServer | null = null;
  let session: PsqlSession | null = null;
  let datasets: readonly BenchDataset[] = [];

  const ready = (): { server: PgServer; session: PsqlSession } => {
    if (server === null || session === null) throw new Error('postgres: setup() first');
    return { server, session };
  };

  return {
    name: 'postgresql (pgbench)',

    async available() {
      const bin = findPgBin();
      if (bin === null) return { ok: false, reason: 'PostgreSQL server binaries not found (apt-get install postgresql)' };
      const r = await runCommand(`${bin}/pgbench`, ['--version']).catch((e: Error) => ({ code: -1, stdout: '', stderr: e.message }));
      return r.code === 0 ? { ok: true } : { ok: false, reason: `pgbench does not run: ${r.stderr}` };
    },

    async setup(data: BenchData): Promise<SetupInfo> {
      datasets = data.datasets;
      // The CSV side file is the input (as the Arrow file is pitcache's); writing it is the
      // harness's job and not PostgreSQL's load time.
      const csv = new Map<string, string>();
      for (const ds of datasets) csv.set(ds.id, await ds.csvPath());
      const t0 = performance.now();
      server = await PgServer.start({ sharedBuffers: options.sharedBuffers });
      const t1 = performance.now();
      for (const ds of datasets) await server.psql([pgCreateTable(ds), pgCopy(ds)], createReadStream(csv.get(ds.id)!));
      const t2 = performance.now();
      for (const ds of datasets) for (const sql of pgIndexStatements(ds)) await server.psql(sql);
      const t3 = performance.now();
      session = server.session();
      const size = Number((await session.query('SELECT pg_database_size(current_database())')).trim());
      const s = (ms: number): string => (ms / 1000).toFixed(1);
      return {
        loadSeconds: (t3 - t0) / 1000,
        rssBytes: server.memoryBytes(),
        version: `PostgreSQL ${await server.version()}`,
        note:
          `initdb+start ${s(t1 - t0)} s, COPY ${s(t2 - t1)} s, indexes+CLUSTER+ANALYZE ${s(t3 - t2)} s; ` +
          `database ${(size / 2 ** 20).toFixed(0)} MiB on disk; memory = PSS of the server processes ` +
          `(shared buffers they touched), the OS page cache holding the rest of the files`,
      };
    },

    async run(workload: WorkloadName, queries: readonly BenchQuery[], opts: RunOptions): Promise<RunResult> {
      const { server: pg, session: s } = ready();
      return runPgbench(pg, s, datasets, workload, queries, opts);
    },

    async totalRows(query: BenchQuery): Promise<number> {
      const { session: s } = ready();
      const ds = findDataset(datasets, query);
      return Number((await s.query(pgQuery(ds, planQuery(ds, query), null, 'count', literalParams()))).trim());
    },

    async fetchPage(query: BenchQuery, after: KeysetAfter | null) {
      const { session: s } = ready();
      const ds = findDataset(datasets, query);
      const plan = planQuery(ds, query);
      const sql = pgQuery(ds, plan, after, 'rows', literalParams(), 1);
      const json = JSON.parse((await s.query(`SELECT coalesce(json_agg(x), '[]') FROM (${sql}) AS x`)).trim()) as Record<string, unknown>[];
      const rows = json.slice(0, plan.limit).map((r) => {
        const row: CanonicalRow = {};
        for (const c of ds.columns) row[c.name] = canonicalCell(storedType(c), r[c.name]);
        return row;
      });
      return { rows, next: json.length > plan.limit ? keysetOf(ds, rows[rows.length - 1]!) : null };
    },

    async teardown() {
      session?.close();
      session = null;
      await server?.stop();
      server = null;
    },
  };
}

export default createPostgresAlternative;
