/**
 * The last terms of the physical order: inside each key, versions by (observed, ingested,
 * snapshot position), PIT-4 plus the contract's final tie-break.
 *
 * Rows are already in (series, date) order with ties in snapshot order, and observed and
 * ingested are already decoded in that order. Each key's run is checked, and only a run out
 * of order is sorted: observed and ingested move in place, and perm/rank follow the rows.
 */
export interface Placement {
  /** perm[i] = snapshot row at physical position i; null = snapshot order */
  readonly perm: Int32Array | null;
  /** rank[j] = physical position of snapshot row j (inverse of perm) */
  readonly rank: Int32Array | null;
}

export function orderVersions(seriesStart: Int32Array, date: Int32Array, obs: Float64Array, ing: Float64Array, placed: Placement): Placement {
  let { perm, rank } = placed;
  const seriesCount = seriesStart.length - 1;
  for (let s = 0; s < seriesCount; s++) {
    const end = seriesStart[s + 1]!;
    let a = seriesStart[s]!;
    while (a < end) {
      let b = a + 1;
      while (b < end && date[b] === date[a]) b++;
      if (b - a > 1 && !inOrder(a, b, obs, ing)) {
        if (perm === null || rank === null) {
          perm = identity(obs.length);
          rank = identity(obs.length);
        }
        sortRun(a, b, obs, ing, perm, rank);
      }
      a = b;
    }
  }
  return { perm, rank };
}

/** Ties on both stamps are in snapshot order already (the run still is). */
function inOrder(a: number, b: number, obs: Float64Array, ing: Float64Array): boolean {
  for (let i = a + 1; i < b; i++) {
    if (obs[i]! > obs[i - 1]!) continue;
    if (obs[i]! < obs[i - 1]! || ing[i]! < ing[i - 1]!) return false;
  }
  return true;
}

function sortRun(a: number, b: number, obs: Float64Array, ing: Float64Array, perm: Int32Array, rank: Int32Array): void {
  if (b - a <= 16) insertionSort(a, b, obs, ing, perm);
  else {
    const order = Array.from({ length: b - a }, (_, k) => a + k);
    order.sort((x, y) => obs[x]! - obs[y]! || ing[x]! - ing[y]! || perm[x]! - perm[y]!);
    const o = order.map((i) => obs[i]!);
    const g = order.map((i) => ing[i]!);
    const p = order.map((i) => perm[i]!);
    for (let k = 0; k < order.length; k++) {
      obs[a + k] = o[k]!;
      ing[a + k] = g[k]!;
      perm[a + k] = p[k]!;
    }
  }
  for (let i = a; i < b; i++) rank[perm[i]!] = i;
}

/** Most keys hold a few versions: sorted in place, no allocation per key. */
function insertionSort(a: number, b: number, obs: Float64Array, ing: Float64Array, perm: Int32Array): void {
  for (let i = a + 1; i < b; i++) {
    const o = obs[i]!;
    const g = ing[i]!;
    const p = perm[i]!;
    let j = i - 1;
    while (j >= a && (o < obs[j]! || (o === obs[j] && (g < ing[j]! || (g === ing[j] && p < perm[j]!))))) {
      obs[j + 1] = obs[j]!;
      ing[j + 1] = ing[j]!;
      perm[j + 1] = perm[j]!;
      j--;
    }
    obs[j + 1] = o;
    ing[j + 1] = g;
    perm[j + 1] = p;
  }
}

function identity(n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}
