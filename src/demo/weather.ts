/** Shared weather shapes of WRSI and WSSI-US: temperature anomalies and the degree-day anomalies they imply. */
import { round, winterWeight } from './signal-math.js';

export interface DegreeDays {
  readonly hdd: number;
  readonly cdd: number;
}

/**
 * Degree-day anomalies (°C·day) of a temperature anomaly: a cold spell adds heating
 * degree days in winter, a warm one adds cooling degree days in summer; `heat` scales how
 * much a region cools with air conditioning.
 */
export function degreeDays(day: number, tempAnomaly: number, heat: number): DegreeDays {
  const w = winterWeight(day);
  return { hdd: round(-tempAnomaly * w, 2), cdd: round(tempAnomaly * (1 - w) * heat, 2) };
}

export function riskLabel(dd: DegreeDays): string {
  return dd.hdd > 1.5 ? 'cold' : dd.cdd > 1.5 ? 'heat' : 'none';
}
