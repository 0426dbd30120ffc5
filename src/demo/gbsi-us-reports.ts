/** GBSI-US weekly datasets: EIA storage surprise events and the strategy backtest summary. */
import type { DemoDatasetDef, ValueRow } from './dataset-def.js';
import { num } from './dataset-def.js';
import type { Rng } from './prng.js';
import { Ar1, clamp, f32, round } from './signal-math.js';

const STORAGE_REGIONS = ['east', 'midwest', 'mountain', 'pacific', 'south_central'] as const;
const STORAGE_SHARE = [0.22, 0.27, 0.06, 0.07, 0.38] as const;
/** Consensus error, Bcf, by region; the Lower 48 error is their sum. */
const SURPRISE_SD = STORAGE_SHARE.map((s) => 7 * Math.sqrt(s));
const L48_SD = Math.sqrt(SURPRISE_SD.reduce((a, s) => a + s * s, 0));
const sdOf = (series: number): number => (series === 0 ? L48_SD : SURPRISE_SD[series - 1]!);

/** Working gas in storage follows the injection/withdrawal season: low in April, high in November. */
function normalStorage(day: number): number {
  return 2770 - 786 * Math.sin((2 * Math.PI * (day - 25)) / 365.2425);
}

/** storage_bcf, net_change_bcf, consensus_change_bcf, surprise_bcf, surprise_zscore, five_year_avg_bcf, deficit_vs_5y_bcf, surprise_event */
function storageRow(storage: number, change: number, consensus: number, fiveYear: number, sd: number): ValueRow {
  const surprise = change - consensus;
  const z = round(surprise / sd, 3);
  return [storage, change, consensus, surprise, z, fiveYear, fiveYear - storage, Math.abs(z) >= 1.5];
}

export const gbsiUsStorageSurprise: DemoDatasetDef = {
  productId: 'gbsi_us',
  dataset: 'storage_surprise',
  description: 'Weekly EIA storage report vs consensus per storage region (week ending Friday, released the next Thursday)',
  cadence: 'weekly-friday',
  timeUnit: 's',
  effectiveType: 'date32',
  lag: { days: 6, releaseMinute: 14 * 60 + 30 },
  observedDelayMinutes: [1, 20],
  keyColumns: [{ name: 'region', type: 'dict-utf8' }],
  series: ['lower48', ...STORAGE_REGIONS].map((r) => [r]),
  valueColumns: [
    { name: 'storage_bcf', type: 'float64', description: 'working gas in storage, Bcf' },
    { name: 'net_change_bcf', type: 'float64', description: 'implied net injection (+) or withdrawal (-), Bcf' },
    { name: 'consensus_change_bcf', type: 'float64', description: 'analyst consensus for the net change, Bcf' },
    { name: 'surprise_bcf', type: 'float64', description: 'net change minus consensus, Bcf' },
    { name: 'surprise_zscore', type: 'float64', description: 'surprise in standard deviations of consensus error' },
    { name: 'five_year_avg_bcf', type: 'float64', description: '5-year average storage for the week, Bcf' },
    { name: 'deficit_vs_5y_bcf', type: 'float64', description: '5-year average minus storage, Bcf' },
    { name: 'surprise_event', type: 'bool', description: '|surprise_zscore| >= 1.5' },
  ],
  revisionShare: 0.15,
  revisionDelayDays: [7, 28],
  revisionStepDays: 7,
  simulate(days, rng) {
    const dev = STORAGE_SHARE.map((s) => new Ar1(0, 0, 0.97, 25 * s));
    const prev = STORAGE_SHARE.map((s, r) => Math.round(s * normalStorage((days[0] ?? 0) - 7) + dev[r]!.value));
    const out: ValueRow[][] = [[], ...STORAGE_REGIONS.map(() => [])];
    for (const day of days) {
      const regional = STORAGE_SHARE.map((s, r) => {
        const storage = Math.round(s * normalStorage(day) + dev[r]!.step(rng));
        const change = storage - prev[r]!;
        prev[r] = storage;
        const consensus = Math.round(change - SURPRISE_SD[r]! * rng.normal());
        return { storage, change, consensus, fiveYear: Math.round(s * (normalStorage(day) + 40)) };
      });
      const sum = (f: (x: (typeof regional)[number]) => number): number => regional.reduce((a, x) => a + f(x), 0);
      out[0]!.push(
        storageRow(
          sum((x) => x.storage),
          sum((x) => x.change),
          sum((x) => x.consensus),
          sum((x) => x.fiveYear),
          L48_SD,
        ),
      );
      regional.forEach((x, r) => out[r + 1]!.push(storageRow(x.storage, x.change, x.consensus, x.fiveYear, SURPRISE_SD[r]!)));
    }
    return out;
  },
  revise(row, series, rng) {
    // EIA restates the week in a later report: storage and the implied change move together.
    const d = Math.round(rng.nudge(1, 6));
    return storageRow(num(row, 0) + d, num(row, 1) + d, num(row, 2), num(row, 5), sdOf(series));
  },
};

const STRATEGIES = ['stress_momentum', 'storage_surprise_fade', 'balance_carry'] as const;
const HORIZONS = [
  ['1d', 1, 4],
  ['5d', 5, 1],
  ['20d', 20, 0.25],
] as const;

/** n_trades, hit_rate, sharpe_ratio, cum_return_pct, max_drawdown_pct, avg_holding_days */
export const gbsiUsBacktestSummary: DemoDatasetDef = {
  productId: 'gbsi_us',
  dataset: 'backtest_summary',
  description: 'Walk-forward backtest of GBSI-US trading rules, weekly, per strategy and holding horizon',
  cadence: 'weekly-friday',
  timeUnit: 'us',
  effectiveType: 'timestamp',
  lag: { days: 1, releaseMinute: 6 * 60 },
  observedDelayMinutes: [2, 45],
  keyColumns: [
    { name: 'strategy', type: 'dict-utf8' },
    { name: 'horizon', type: 'utf8' },
  ],
  series: STRATEGIES.flatMap((s) => HORIZONS.map(([h]) => [s, h])),
  valueColumns: [
    { name: 'n_trades', type: 'int32', description: 'trades since inception' },
    { name: 'hit_rate', type: 'float64', description: 'share of winning trades' },
    { name: 'sharpe_ratio', type: 'float64', description: 'trailing 52-week annualized Sharpe ratio' },
    { name: 'cum_return_pct', type: 'float64', description: 'cumulative return since inception, %' },
    { name: 'max_drawdown_pct', type: 'float64', description: 'worst peak-to-trough loss since inception, % (<= 0)' },
    { name: 'avg_holding_days', type: 'float32', description: 'mean holding period, days' },
  ],
  revisionShare: 0.12,
  revisionDelayDays: [7, 28],
  revisionStepDays: 7,
  simulate(days, rng) {
    return STRATEGIES.flatMap((_, si) => HORIZONS.map(([, hold, rate]) => backtest(days, rng, hold, rate, 0.0008 * (si + 1))));
  },
  revise(row, _series, rng) {
    // A late fill correction restates the return figures.
    return [
      row[0] ?? null,
      row[1] ?? null,
      round(num(row, 2) + rng.nudge(0.01, 0.06), 3),
      round(num(row, 3) + rng.nudge(0.01, 0.2), 3),
      row[4] ?? null,
      row[5] ?? null,
    ];
  },
};

function backtest(days: readonly number[], rng: Rng, hold: number, tradeRate: number, drift: number): ValueRow[] {
  const hit = new Ar1(0.53, 0.53, 0.95, 0.01);
  const returns: number[] = [];
  let trades = 0;
  let equity = 1;
  let peak = 1;
  let maxDd = 0;
  return days.map((): ValueRow => {
    trades += rng.poisson(tradeRate);
    const r = drift + 0.012 * Math.sqrt(hold / 5) * rng.normal();
    returns.push(r);
    equity *= 1 + r;
    peak = Math.max(peak, equity);
    maxDd = Math.min(maxDd, equity / peak - 1);
    const recent = returns.slice(-52);
    const mu = recent.reduce((a, x) => a + x, 0) / recent.length;
    const sd = Math.sqrt(recent.reduce((a, x) => a + (x - mu) ** 2, 0) / recent.length) || 1;
    return [
      trades,
      round(clamp(hit.step(rng), 0, 1), 4),
      round((mu / sd) * Math.sqrt(52), 3),
      round((equity - 1) * 100, 3),
      round(maxDd * 100, 3),
      f32(round(hold * rng.uniform(0.8, 1.2), 2)),
    ];
  });
}
