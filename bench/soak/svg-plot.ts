/** A line chart as a standalone SVG: the bench draws its own pictures, no service or package needed. */
export interface Series {
  readonly name: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface Plot {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const W = 800;
const H = 420;
const M = { left: 70, right: 20, top: 40, bottom: 60 };
const COLORS = ['#1f77b4', '#2ca02c', '#d62728', '#9467bd', '#ff7f0e'];

export function svgLines(p: Plot): string {
  const all = p.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xMax = Math.max(1, ...all.map(([x]) => x));
  const yMax = niceCeil(Math.max(1, ...all.map(([, y]) => y)));
  const px = (x: number): number => M.left + (x / xMax) * (W - M.left - M.right);
  const py = (y: number): number => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${esc(p.title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const y = (yMax * i) / 5;
    parts.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${M.left - 6}" y="${py(y) + 4}" text-anchor="end">${fmt(y)}</text>`);
    const x = (xMax * i) / 5;
    parts.push(`<text x="${px(x)}" y="${H - M.bottom + 18}" text-anchor="middle">${fmt(x)}</text>`);
  }
  parts.push(`<text x="${W / 2}" y="${H - 18}" text-anchor="middle">${esc(p.xLabel)}</text>`);
  parts.push(`<text x="16" y="${H / 2}" text-anchor="middle" transform="rotate(-90 16 ${H / 2})">${esc(p.yLabel)}</text>`);
  p.series.forEach((s, i) => {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length === 0) return;
    const color = COLORS[i % COLORS.length]!;
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
    );
    parts.push(`<rect x="${M.left + 10}" y="${M.top + 6 + i * 18}" width="12" height="3" fill="${color}"/>`);
    parts.push(`<text x="${M.left + 28}" y="${M.top + 11 + i * 18}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}
