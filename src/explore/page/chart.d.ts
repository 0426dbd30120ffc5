/**
 * The lines of a chartSeries() in `el`, sized to it; `onDate` gets the date clicked.
 * @param {HTMLElement} el
 * @param {import('./series.js').Chart} chart
 * @param {{ column: string, floor: string | null, onDate: (date: string) => void }} opts
 * @returns {() => void} removes the chart
 */
export function drawLines(el: HTMLElement, chart: import("./series.js").Chart, opts: {
    column: string;
    floor: string | null;
    onDate: (date: string) => void;
}): () => void;
/**
 * A revision history (revisionSteps()) as a step line of value over visible_from.
 * @param {HTMLElement} el
 * @param {import('./series.js').RevisionSteps} steps
 * @param {{ column: string, colour: string }} opts
 * @returns {() => void}
 */
export function drawSteps(el: HTMLElement, steps: import("./series.js").RevisionSteps, opts: {
    column: string;
    colour: string;
}): () => void;
