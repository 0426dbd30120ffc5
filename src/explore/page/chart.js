// @ts-check
/**
 * The explorer's two charts, drawn by uPlot (loaded by the page as a classic script,
 * the global `uPlot`): the column as known at each as_of, and one date's revision history
 * as a step line (docs/explore.md). Legend and labels are page text, not canvas pixels.
 */
import { dateSeconds } from './series.js';

/** Times on the axes are UTC, as the API's dates and instants are. */
const utc = (/** @type {number} */ ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

/** Chart height for a width: shorter on narrow screens. */
function heightFor(/** @type {number} */ width) {
  return width < 600 ? 280 : 380;
}

/**
 * The vintage floor as a dashed vertical line on the canvas, with its text label beside it
 * (an element over the plot, so that it is page text).
 * @param {uPlot} u
 * @param {string | null} floor
 * @param {HTMLElement} label
 */
function drawFloor(u, floor, label) {
  if (floor === null) return;
  const sec = dateSeconds(floor);
  const min = u.scales.x?.min ?? 0;
  const max = u.scales.x?.max ?? 0;
  if (sec < min || sec > max) {
    label.hidden = true;
    return;
  }
  const x = Math.round(u.valToPos(sec, 'x', true));
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = '#444';
  ctx.lineWidth = Math.max(1, devicePixelRatio);
  ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
  ctx.beginPath();
  ctx.moveTo(x, u.bbox.top);
  ctx.lineTo(x, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.restore();
  label.hidden = false;
  const left = u.valToPos(sec, 'x');
  label.style.left = `${left}px`;
  // Near the right edge the label goes to the line's left, so it stays on the chart.
  label.classList.toggle('left', left > u.over.clientWidth * 0.6);
}

/**
 * The lines of a chartSeries() in `el`, sized to it; `onDate` gets the date clicked.
 * @param {HTMLElement} el
 * @param {import('./series.js').Chart} chart
 * @param {{ column: string, floor: string | null, onDate: (date: string) => void }} opts
 * @returns {() => void} removes the chart
 */
export function drawLines(el, chart, opts) {
  el.textContent = '';
  const width = Math.max(280, el.clientWidth);
  const floorLabel = document.createElement('div');
  floorLabel.className = 'floor-mark';
  floorLabel.textContent = `vintage floor ${opts.floor ?? ''}`;
  floorLabel.hidden = true;
  /** @type {uPlot.Options} */
  const options = {
    width,
    height: heightFor(width),
    tzDate: utc,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true } },
    axes: [{}, { label: opts.column, size: 60 }],
    series: [{ label: 'date' }, ...chart.lines.map((l) => ({ label: l.label, stroke: l.colour, width: l.width, points: { show: false } }))],
    hooks: { draw: [(/** @type {uPlot} */ u) => drawFloor(u, opts.floor, floorLabel)] },
  };
  const u = new uPlot(options, [chart.x, ...chart.lines.map((l) => l.values)], el);
  u.over.appendChild(floorLabel);
  u.over.addEventListener('click', () => {
    const i = u.cursor.idx;
    const sec = i === null || i === undefined ? undefined : chart.x[i];
    if (sec !== undefined) opts.onDate(new Date(sec * 1000).toISOString().slice(0, 10));
  });
  const resize = new ResizeObserver(() => {
    const w = Math.max(280, el.clientWidth);
    if (w !== u.width) u.setSize({ width: w, height: heightFor(w) });
  });
  resize.observe(el);
  return () => {
    resize.disconnect();
    u.destroy();
  };
}

/**
 * A revision history (revisionSteps()) as a step line of value over visible_from.
 * @param {HTMLElement} el
 * @param {import('./series.js').RevisionSteps} steps
 * @param {{ column: string, colour: string }} opts
 * @returns {() => void}
 */
export function drawSteps(el, steps, opts) {
  el.textContent = '';
  const width = Math.max(280, el.clientWidth);
  /** @type {uPlot.Options} */
  const options = {
    width,
    height: 220,
    tzDate: utc,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true } },
    axes: [{}, { label: opts.column, size: 60 }],
    series: [
      { label: 'visible_from' },
      {
        label: opts.column,
        stroke: opts.colour,
        width: 2,
        paths: uPlot.paths.stepped?.({ align: 1 }),
        // A dot where each version starts; none at the line's end, which is no version.
        points: { show: true, size: 7, filter: () => steps.table.map((_, i) => i) },
      },
    ],
  };
  const u = new uPlot(options, [steps.x, steps.y], el);
  const resize = new ResizeObserver(() => {
    const w = Math.max(280, el.clientWidth);
    if (w !== u.width) u.setSize({ width: w, height: 220 });
  });
  resize.observe(el);
  return () => {
    resize.disconnect();
    u.destroy();
  };
}
