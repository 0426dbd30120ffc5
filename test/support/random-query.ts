/** Random query parameters for differential tests: dates, as_of instants at the edges that matter, filters. */
import { DAY_US, FLOOR_DATE, dayOf, type GeneratedSnapshot, type Rng } from './random-snapshot.js';
import { parseAsOfNs } from './reference-model.js';

export function isoDate(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Filters on some of the snapshot's filter columns: values that occur, values that do not, case variants. */
export function randomFilters(rng: Rng, snap: GeneratedSnapshot): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const [column, pool] of Object.entries(snap.keyPools)) {
    if (column === 'tenor' || column === 'hub' || !rng.chance(0.35)) continue;
    const allowed = column === 'basin' ? ['atlantic', 'pacific', 'middle_east'] : [...pool.filter((v) => v !== ''), 'NOPE', pool[0]!.toLowerCase()];
    filters[column] = [...new Set(Array.from({ length: rng.int(1, 3) }, () => rng.pick(allowed)))].join(',');
  }
  return filters;
}

/** A date or an RFC 3339 instant, often right at a stored instant or at the floor's edge. */
export function randomAsOf(rng: Rng, snap: GeneratedSnapshot): string {
  const floorDay = dayOf(FLOOR_DATE[snap.productId]!);
  const kind = rng.int(0, 9);
  if (kind === 0) return isoDate(floorDay - rng.int(1, 40));
  if (kind === 1) return isoDate(floorDay + rng.int(-1, 1));
  if (kind === 2) return isoDate(rng.int(snap.firstDay - 3, snap.lastDay + 15));
  if (kind === 3) return rng.pick(['2019-06-30', '2031-12-31', '2026-02-28', '2028-02-29']);
  let ns: bigint;
  if (kind <= 6) {
    const base = BigInt(rng.pick(snap.instantsUs)) * 1000n;
    ns = base + rng.pick([0n, 0n, -1n, 1n, -1000n, 1000n, -1_000_000n, 1_000_000_000n, -1_000_000_000n]);
  } else if (kind === 7) {
    ns = BigInt((floorDay + 1) * DAY_US) * 1000n + rng.pick([0n, -1n, -1000n, 1000n, -3_600_000_000_000n]);
  } else {
    ns = BigInt(rng.int(snap.firstDay - 10, snap.lastDay + 20) * DAY_US + rng.int(0, DAY_US - 1)) * 1000n + BigInt(rng.int(0, 999));
  }
  const text = formatRfc3339(rng, ns);
  // The reference's own parser must read back the instant we meant.
  if (parseAsOfNs(text) !== ns) throw new Error(`reference misreads as_of ${text} (meant ${ns} ns)`);
  return text;
}

export function formatRfc3339(rng: Rng, ns: bigint): string {
  let digits = 9;
  while (digits > 0 && ns % 10n ** BigInt(10 - digits) === 0n) digits--;
  digits = Math.min(9, digits + rng.pick([0, 0, 0, 1, 3]));
  if (digits > 0 && digits < 3 && rng.chance(0.5)) digits = 3;
  const offsetMin = rng.pick([0, 0, 0, 330, -480, 840, -720, 60, 45]);
  const zone =
    offsetMin === 0
      ? rng.pick(['Z', 'Z', '+00:00', '-00:00', 'z'])
      : `${offsetMin < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMin) % 60).padStart(2, '0')}`;
  const local = ns + BigInt(offsetMin) * 60_000_000_000n;
  const secs = local / 1_000_000_000n;
  const frac = String(local % 1_000_000_000n)
    .padStart(9, '0')
    .slice(0, digits);
  const civil = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  return civil.replace('T', rng.chance(0.05) ? 't' : 'T') + (digits > 0 ? '.' + frac : '') + zone;
}
