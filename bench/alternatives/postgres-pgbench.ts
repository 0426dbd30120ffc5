/**
 * Drives PostgreSQL with pgbench: 64 clients, prepared statements, one statement per request.
 * pgbench variables are numbers only, so the bench's query list is loaded into a helper table
 * per query shape (id, p1..pN with the bound values); the script draws a random id and its
 * statement reads the row in a MATERIALIZED CTE whose columns stand in for bind parameters
 * (each `(SELECT pN FROM q)` is an InitPlan: a constant for the index scan). The extra cost
 * is one primary-key probe inside the same statement, no extra round trip.
 *
 * A page walk is a chain (each page starts after the last row of the one before). Its chain
 * is computed once up front (every limit-th row's key), so each page is an independent keyset
 * query, the same SQL a client following the chain would send.
 *
 * Latency comes from pgbench's per-transaction log (--log); rows are estimated as each
 * script's transactions times the mean rows of (a sample of) its requests, pgbench not
 * reporting rows.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { BenchDataset, BenchQuery, RunOptions, RunResult, WorkloadName } from './types.js';
import { percentile } from './types.js';
import type { KeysetAfter, QueryPlan, SqlParam } from './duckdb-postgres-plan.js';
import { ParamList, findDataset, formatDay, formatUs, ident, parseDay, planQuery, planShape } from './duckdb-postgres-plan.js';
import type { PgServer, PsqlSession } from './postgres-server.js';
import { runCommand } from './postgres-server.js';
import { PG_BEFORE_ALL, literalParams, pgBody, pgQuery } from './postgres-sql.js';

interface Request {
  readonly ds: BenchDataset;
  readonly plan: QueryPlan;
  readonly after: KeysetAfter | null;
  /** rows this request returns, when known without asking (page walks) */
  readonly rows: number | null;
}

interface Group {
  readonly table: string;
  readonly requests: Request[];
  sql: string;
  rowsPerRequest: number;
}

/** page-walk chains whose pages are loaded for pgbench (env BENCH_PG_PAGE_CHAINS) */
const PAGE_CHAINS = Number(process.env.BENCH_PG_PAGE_CHAINS ?? 20);
/** requests per script whose rows are counted to estimate rows per request (env BENCH_PG_COUNT_SAMPLE) */
const COUNT_SAMPLE = Number(process.env.BENCH_PG_COUNT_SAMPLE ?? 200);

const HELPER_TYPE: Record<SqlParam['type'], string> = { text: 'text COLLATE "C"', date: 'date', timestamp: 'timestamptz', int: 'bigint' };

function csvValue(p: SqlParam): string {
  if (p.type === 'text') return '"' + p.value.replaceAll('"', '""') + '"';
  if (p.type === 'date') return formatDay(p.value);
  if (p.type === 'timestamp') return formatUs(p.value);
  return String(p.value);
}

/** The pages of one page-walk query: the first from before everything, then after every limit-th row. */
async function pageChain(session: PsqlSession, ds: BenchDataset, plan: QueryPlan): Promise<Request[]> {
  const unlimited = `(${pgBody(ds, plan, null, literalParams())})`;
  const key = ['"date"', ...ds.seriesKey.map(ident)];
  const sql =
    `SELECT json_build_object('total', coalesce(max(n), 0), 'keys', coalesce(json_agg(json_build_array(${key.join(', ')}) ORDER BY rn) FILTER (WHERE rn % ${plan.limit} = 0 AND rn < n), '[]')) ` +
    `FROM (SELECT ${key.map((k) => 'x.' + k).join(', ')}, row_number() OVER (ORDER BY ${key.map((k) => 'x.' + k).join(', ')}) AS rn, count(*) OVER () AS n FROM ${unlimited} AS x) AS y`;
  const out = JSON.parse((await session.query(sql)).trim()) as { total: number; keys: [string, ...string[]][] };
  const afters: KeysetAfter[] = [PG_BEFORE_ALL(ds), ...out.keys.map(([d, ...keys]) => ({ date: parseDay(d), keys }))];
  return afters.map((after, i) => ({ ds, plan, after, rows: i < afters.length - 1 ? plan.limit : out.total - i * plan.limit }));
}

async function buildGroups(
  pg: PgServer,
  session: PsqlSession,
  datasets: readonly BenchDataset[],
  workload: WorkloadName,
  queries: readonly BenchQuery[],
): Promise<Group[]> {
  const requests: Request[] = [];
  if (workload === 'page-walk') {
    // Each chain costs one pass over its dataset to find the page starts: the first
    // PAGE_CHAINS distinct chains of the list (a random sample of it) stand for all.
    const seen = new Set<string>();
    for (const q of queries) {
      const id = q.dataset + JSON.stringify(q.params);
      if (seen.has(id) || seen.size >= PAGE_CHAINS) continue;
      seen.add(id);
      const ds = findDataset(datasets, q);
      requests.push(...(await pageChain(session, ds, planQuery(ds, q))));
    }
  } else {
    for (const q of queries) {
      const ds = findDataset(datasets, q);
      requests.push({ ds, plan: planQuery(ds, q), after: null, rows: null });
    }
  }
  const byShape = new Map<string, Group>();
  for (const r of requests) {
    const key = `${r.ds.id}|${planShape(r.plan, r.after !== null)}|${r.after?.keys.length ?? 0}`;
    let g = byShape.get(key);
    if (g === undefined) {
      g = { table: ident(`bench_q_${byShape.size + 1}`), requests: [], sql: '', rowsPerRequest: 0 };
      byShape.set(key, g);
    }
    g.requests.push(r);
  }
  const groups = [...byShape.values()];
  for (const g of groups) {
    const first = g.requests[0]!;
    const shapeParams = new ParamList((i) => `(SELECT p${i} FROM q)`);
    g.sql = pgQuery(first.ds, first.plan, first.after, 'rows', shapeParams);
    const cols = shapeParams.values.map((p, i) => `p${i + 1} ${HELPER_TYPE[p.type]}`);
    const lines = g.requests.map((r, id) => {
      const values = new ParamList(() => '');
      pgQuery(r.ds, r.plan, r.after, 'rows', values);
      return [String(id + 1), ...values.values.map(csvValue)].join(',');
    });
    await pg.psql(
      [
        `DROP TABLE IF EXISTS ${g.table}`,
        `CREATE TABLE ${g.table} (id integer PRIMARY KEY, ${cols.join(', ')})`,
        `COPY ${g.table} FROM STDIN WITH (FORMAT csv)`,
      ],
      Readable.from([lines.join('\n') + '\n']),
    );
    await pg.psql(`ANALYZE ${g.table}`);
    if (g.requests.every((r) => r.rows !== null)) g.rowsPerRequest = g.requests.reduce((a, r) => a + r.rows!, 0) / g.requests.length;
    else {
      const counted = pgQuery(first.ds, first.plan, first.after, 'rows', new ParamList((i) => `q.p${i}`));
      // ids follow the list's (random) order, so the first COUNT_SAMPLE are a fair sample
      const n = Math.min(g.requests.length, COUNT_SAMPLE);
      const total = Number(
        (await session.query(`SELECT coalesce(sum((SELECT count(*) FROM (${counted}) AS x)), 0) FROM ${g.table} AS q WHERE q.id <= ${n}`)).trim(),
      );
      g.rowsPerRequest = total / n;
    }
  }
  return groups;
}

export async function runPgbench(
  pg: PgServer,
  session: PsqlSession,
  datasets: readonly BenchDataset[],
  workload: WorkloadName,
  queries: readonly BenchQuery[],
  opts: RunOptions,
): Promise<RunResult> {
  const groups = await buildGroups(pg, session, datasets, workload, queries);
  const dir = mkdtempSync(join(pg.dir, `pgbench-${workload}-`));
  try {
    const scripts = groups.map((g, i) => {
      const file = join(dir, `script-${i}.sql`);
      writeFileSync(file, `\\set id random(1, ${g.requests.length})\nWITH q AS MATERIALIZED (SELECT * FROM ${g.table} WHERE id = :id) ${g.sql};\n`);
      return `${file}@${g.requests.length}`;
    });
    const clients = Math.max(1, opts.connections);
    const base = [
      '-h',
      '127.0.0.1',
      '-p',
      String(pg.port),
      '-U',
      'postgres',
      '-n',
      '-M',
      'prepared',
      '-c',
      String(clients),
      '-j',
      String(Math.min(2, clients)),
      ...scripts.flatMap((s) => ['-f', s]),
      'postgres',
    ];
    const pgbench = join(pg.bin, 'pgbench');
    if ((opts.warmupSec ?? 0) > 0) await runCommand(pgbench, ['-T', String(Math.max(1, Math.round(opts.warmupSec!))), ...base], { cwd: dir });
    const seconds = Math.max(1, Math.round(opts.durationSec));
    const r = await runCommand(pgbench, ['-T', String(seconds), '--log', '--log-prefix', join(dir, 'log'), ...base], { cwd: dir });
    const aborted = (r.stderr.match(/aborted/g) ?? []).length;
    if (r.code !== 0 && r.code !== 2) throw new Error(`pgbench failed (${r.code}): ${r.stderr.slice(0, 2000)}`);
    const perScript = new Array<number>(groups.length).fill(0);
    const latencies: number[] = [];
    for (const f of readdirSync(dir).filter((n) => n.startsWith('log.'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        const parts = line.split(' ');
        if (parts.length < 6) continue;
        latencies.push(Number(parts[2]) / 1000);
        perScript[Number(parts[3])]! += 1;
      }
    }
    const sorted = Float64Array.from(latencies).sort();
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(r.stdout);
    const rows = groups.reduce((a, g, i) => a + g.rowsPerRequest * perScript[i]!, 0);
    return {
      requests: sorted.length,
      seconds: tps === null ? seconds : sorted.length / Number(tps[1]),
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      rows: Math.round(rows),
      errors: aborted,
      note:
        `pgbench -c ${clients} -j ${Math.min(2, clients)} -M prepared, ${groups.length} script(s), ` +
        `${groups.reduce((a, g) => a + g.requests.length, 0)} requests drawn at random` +
        (workload === 'page-walk' ? ` (the pages of ${Math.min(PAGE_CHAINS, queries.length)} chains)` : '') +
        (aborted > 0 ? `; ${aborted} client(s) aborted: ${r.stderr.split('\n').find((l) => l.includes('aborted'))}` : ''),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const g of groups) await pg.psql(`DROP TABLE IF EXISTS ${g.table}`);
  }
}
