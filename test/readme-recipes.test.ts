/**
 * The README's backtest recipes run for real against a server on the demo data: its pandas
 * blocks (walk_forward as CSV, then the asof_join of an events DataFrame sent as CSV) with
 * python3 and pandas (Debian's python3-pandas, which scripts/ensure-tools.sh installs), and
 * its polars asof_join recipe's steps (events built in polars, Arrow both ways) through
 * nodejs-polars, the same Rust polars (Python's polars is not among Debian's packages). Each
 * result is checked against the JSON answer to the same request.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, demoKeysConfig, ensureDemoData } from '../src/demo/index.js';
import { silentLogger } from '../src/log/logger.js';
import { LocalSource } from '../src/source/local-source.js';
import { startServer, type RunningServer } from '../src/threads/start.js';
import { TEST_SERVER } from './support/harness.js';

/** Debian's python3, which python3-pandas installs into (a python3 earlier on PATH may be another one). */
const PYTHON = process.env.PITCACHE_PYTHON ?? '/usr/bin/python3';

/** The README's ```python blocks, in order. */
async function pythonBlocks(): Promise<string[]> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  return [...readme.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The pandas part of a block (up to its polars part). */
const pandasPart = (block: string): string => block.split('\n# polars:')[0]!;

describe('README recipes', () => {
  let dir: string;
  let server: RunningServer;
  let base: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-recipes-'));
    await ensureDemoData(dir, silentLogger);
    server = await startServer({ ...TEST_SERVER, source: new LocalSource(dir), keys: demoKeysConfig(), host: '127.0.0.1', port: 0, build: 'inline' });
    base = `http://127.0.0.1:${server.port}`;
  }, 120_000);
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs python code (the README's, its port moved to the test server's) and returns what it printed as JSON; not sync: the server answers on this thread's loop. */
  async function python(code: string, print: string): Promise<unknown> {
    const script = `${code.replaceAll('http://127.0.0.1:8080', base)}\nimport json\nprint(json.dumps(${print}))\n`;
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    return JSON.parse(stdout);
  }

  const joinJson = async (query: string, body: string): Promise<Array<Record<string, unknown>>> => {
    const r = await fetch(`${base}/gbsi_eu/system_stress/asof_join?${query}`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': DEMO_KEY, 'content-type': 'text/csv' },
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Array<Record<string, unknown>> }).data;
  };

  it('pandas, walk_forward: the rows of each decision date after the floor, the last known stress_index per country', async () => {
    const block = (await pythonBlocks()).find((b) => b.includes('/walk_forward?'))!;
    const code = pandasPart(block)
      .replace(/\n\s*\.\.\.\s*#[^\n]*/, '\n    last[str(decision.date())] = signal.to_dict()')
      .replace('for decision', 'last = {}\nfor decision');
    const last = (await python(code, 'last')) as Record<string, Record<string, number>>;
    const r = await fetch(`${base}/gbsi_eu/system_stress/walk_forward?country=DE,FR&decision_from=2026-01-05&decision_to=2026-03-31&window=90&limit=100000`, {
      headers: { 'x-api-key': DEMO_KEY },
    });
    const rows = ((await r.json()) as { data: Array<{ decision_date: string; date: string; country: string; stress_index: number; floor_applied: boolean }> })
      .data;
    const want: Record<string, Record<string, number>> = {};
    for (const row of rows.filter((x) => !x.floor_applied).sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)))
      (want[row.decision_date] ??= {})[row.country] = row.stress_index;
    expect(Object.keys(want).length).toBeGreaterThan(10);
    expect(Object.keys(want)[0]! >= '2026-01-13').toBe(true);
    expect(last).toEqual(want);
  });

  it('pandas, asof_join: the events DataFrame as a CSV body, the answer as a DataFrame equal to the JSON answer', async () => {
    const block = (await pythonBlocks()).find((b) => b.includes('/asof_join?'))!;
    const known = (await python(
      pandasPart(block),
      'known.assign(at=known["at"].astype(str), date=known["date"].dt.strftime("%Y-%m-%d")).to_dict(orient="records")',
    )) as Array<Record<string, unknown>>;
    const want = await joinJson('columns=stress_index&max_age=7', 'at,country,qty\n2026-03-02T15:30:00+01:00,DE,100\n2026-03-03T09:00:00Z,FR,-50\n');
    const kept = want.filter((r) => r.floor_applied === false);
    expect(kept.length).toBe(2);
    expect(known.map((r) => [r.country, String(r.qty), r.date, r.stress_index, r.floor_applied])).toEqual(
      kept.map((r) => [r.country, r.qty, r.date, r.stress_index, r.floor_applied]),
    );
    expect(known.map((r) => String(r.at))).toEqual(['2026-03-02 14:30:00+00:00', '2026-03-03 09:00:00+00:00']);
  });

  it('polars, asof_join: events built in polars sent as Arrow, the answer read by polars, equal to the JSON answer', async () => {
    const block = (await pythonBlocks()).find((b) => b.includes('/asof_join?') && b.includes('import polars'))!;
    // the recipe's steps, in nodejs-polars
    expect(block).toContain('write_ipc_stream');
    expect(block).toContain('read_ipc_stream');
    const events = pl
      .DataFrame({ at: ['2026-03-02T14:30:00Z', '2026-03-03T09:00:00Z'], country: ['DE', 'FR'] })
      // (nodejs-polars parses to ms only: then cast, as the recipe's to_datetime(time_unit="us", time_zone="UTC"))
      .withColumns(pl.col('at').str.strptime(pl.Datetime('ms'), '%Y-%m-%dT%H:%M:%SZ').cast(pl.Datetime('us', 'UTC')));
    const body = events.writeIPCStream();
    const r = await fetch(`${base}/gbsi_eu/system_stress/asof_join?format=arrow`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': DEMO_KEY, 'content-type': 'application/vnd.apache.arrow.stream' },
    });
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(r.status, bytes.toString()).toBe(200);
    const known = pl.readIPCStream(bytes);
    const want = await joinJson('', 'at,country\n2026-03-02T14:30:00Z,DE\n2026-03-03T09:00:00Z,FR\n');
    expect(known.columns).toEqual(Object.keys(want[0]!));
    expect(known.getColumn('country').toArray()).toEqual(['DE', 'FR']);
    expect(known.getColumn('stress_index').toArray()).toEqual(want.map((w) => w.stress_index));
    expect(known.getColumn('floor_applied').toArray()).toEqual(want.map((w) => w.floor_applied));
    expect(String(known.getColumn('at').dtype)).toBe(String(events.getColumn('at').dtype));
  });
});
