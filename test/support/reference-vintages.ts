/**
 * Vintages (contract 11) read naively from the contract's text, sharing nothing with
 * src/query: for each key, sweep time over every instant at which a version's visibility
 * can change (its effective and observed times), pick the version `as_of` = T would
 * answer at each (contract 1: visible when effective <= T and observed <= max(T, F);
 * greatest by (observed, ingested, snapshot position)), and merge consecutive instants
 * with the same pick into one interval [visible_from, visible_to). Exact BigInt ns.
 */
import { FLOOR_DATE, type GeneratedSnapshot, type Row } from './random-snapshot.js';
import { formatTimestamp, instantNs, parseAsOfNs, parseDateDays, renderCell, type JsonValue } from './reference-model.js';

export interface VintageParams {
  readonly date_from?: string;
  readonly date_to?: string;
  readonly as_of?: string;
  readonly release?: 'all' | 'first';
  readonly filters?: Readonly<Record<string, string>>;
}

const NS_PER_DAY = 86_400_000_000_000n;

interface Version {
  readonly pos: number;
  readonly row: Row;
  readonly eff: bigint;
  readonly obs: bigint;
  readonly ing: bigint;
}

export function referenceVintages(snap: GeneratedSnapshot, p: VintageParams): Array<Record<string, JsonValue>> {
  const col = (name: string) => snap.columns.find((c) => c.name === name)!;
  const [effC, obsC, ingC] = [col('str_effective_at'), col('str_observed_at'), col('str_ingested_at')];
  const floorEnd = BigInt(parseDateDays(FLOOR_DATE[snap.productId]!)! + 1) * NS_PER_DAY - 1n;
  const from = p.date_from === undefined ? null : parseDateDays(p.date_from);
  const to = p.date_to === undefined ? null : parseDateDays(p.date_to);
  const t = p.as_of === undefined ? null : parseAsOfNs(p.as_of);

  const keys = new Map<string, Version[]>();
  snap.rows.forEach((row, pos) => {
    const date = row.date as number;
    if ((from !== null && date < from) || (to !== null && date > to)) return;
    for (const [param, list] of Object.entries(p.filters ?? {})) if (!list.split(',').includes(row[param] as string)) return;
    const key = JSON.stringify([date, ...snap.seriesKey.map((k) => row[k])]);
    const v = { pos, row, eff: instantNs(effC, row.str_effective_at!), obs: instantNs(obsC, row.str_observed_at!), ing: instantNs(ingC, row.str_ingested_at!) };
    keys.set(key, [...(keys.get(key) ?? []), v]);
  });

  const out: Array<{ row: Row; from: bigint; to: bigint | null }> = [];
  for (const versions of keys.values()) {
    const pickAt = (at: bigint): Version | null => {
      let best: Version | null = null;
      for (const v of versions) {
        if (!(v.eff <= at && v.obs <= (at > floorEnd ? at : floorEnd))) continue;
        if (best === null || v.obs > best.obs || (v.obs === best.obs && (v.ing > best.ing || (v.ing === best.ing && v.pos > best.pos)))) best = v;
      }
      return best;
    };
    const instants = [...new Set(versions.flatMap((v) => [v.eff, v.obs]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const intervals: Array<{ v: Version; from: bigint; to: bigint | null }> = [];
    for (const at of instants) {
      const v = pickAt(at);
      const open = intervals[intervals.length - 1];
      if (open !== undefined && open.to === null && open.v === v) continue;
      if (open !== undefined && open.to === null) open.to = at;
      if (v !== null) intervals.push({ v, from: at, to: null });
    }
    let kept = intervals
      .filter((i) => t === null || i.from <= t)
      .map((i) => ({ row: i.v.row, from: i.from, to: t !== null && i.to !== null && i.to > t ? null : i.to }));
    if (p.release === 'first') kept = kept.slice(0, 1);
    out.push(...kept);
  }

  const bytes = (r: Row) => snap.seriesKey.map((k) => Buffer.from(r[k] as string, 'utf8'));
  out.sort((a, b) => {
    const d = (a.row.date as number) - (b.row.date as number);
    if (d !== 0) return d;
    const [ka, kb] = [bytes(a.row), bytes(b.row)];
    for (let i = 0; i < ka.length; i++) {
      const c = Buffer.compare(ka[i]!, kb[i]!);
      if (c !== 0) return c;
    }
    return a.from < b.from ? -1 : a.from > b.from ? 1 : 0;
  });
  return out.map(({ row, from, to }) => {
    const rendered: Record<string, JsonValue> = {};
    for (const c of snap.columns) rendered[c.name] = renderCell(c, row[c.name] ?? null);
    rendered.visible_from = formatTimestamp(from, 'us');
    rendered.visible_to = to === null ? null : formatTimestamp(to, 'us');
    return rendered;
  });
}
