/** A duration as ops write it: `10m`, `90s`, `1h`, `2d`, `250ms`, or ms as a bare number. Throws naming `flag`. */
export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text);
  if (m === null) throw new Error(`${flag}: "${text}" is not a duration (e.g. 10m, 90s, 1h)`);
  return Math.round(Number(m[1]) * { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] ?? 'ms']!);
}
