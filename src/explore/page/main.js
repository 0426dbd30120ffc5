// @ts-check
/**
 * The explorer page (docs/explore.md): asks for a key once, reads its state from the URL,
 * draws the column as known at each as_of, and one date's revision history on click.
 * Every message is page text: an error never leaves a blank chart.
 */
import { ApiFailure, KEY_STORAGE, get, getAllRows, getJson } from './api.js';
import { drawLines, drawSteps } from './chart.js';
import { chartSeries, chartableColumns, revisionSteps, rowsOfSeries } from './series.js';
import { dataRequest, resolvedDates, seriesChoices, seriesRequest, seriesText, vintagesRequest, withCursor } from './requests.js';
import { CURRENT, MAX_AS_OF, isAsOf, isDate, parseState, writeState } from './state.js';

/**
 * @typedef {import('./series.js').CatalogEntry} CatalogEntry
 * @typedef {import('./state.js').ExploreState} ExploreState
 */

/** An element of the page by id (index.html has them all). */
function el(/** @type {string} */ id) {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`index.html lacks #${id}`);
  return e;
}
const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (el(id));
const select = (/** @type {string} */ id) => /** @type {HTMLSelectElement} */ (el(id));

/** @type {CatalogEntry[] | null} */
let catalog = null;
/** product/dataset -> its series, as [column, value] pairs */
const seriesOf = new Map();
/** Each render's number: answers of an older one are dropped. */
let renderCount = 0;
/** @type {(() => void) | null} */
let removeChart = null;
/** @type {(() => void) | null} */
let removeSteps = null;
/** What the chart shows, for a click on a date. */
let shown = /** @type {{ entry: CatalogEntry, state: ExploreState } | null} */ (null);

const apiKey = () => sessionStorage.getItem(KEY_STORAGE) ?? '';
const entryId = (/** @type {CatalogEntry} */ e) => `${e.product_id}/${e.dataset}`;

/** Replaces the messages with these (errors first). */
function showMessages(/** @type {string[]} */ errors, /** @type {string[]} */ notes = []) {
  const box = el('messages');
  box.textContent = '';
  for (const [kind, list] of /** @type {const} */ ([
    ['error', errors],
    ['note', notes],
  ])) {
    for (const text of list) {
      const p = document.createElement('p');
      p.className = kind;
      p.textContent = text;
      box.appendChild(p);
    }
  }
}

/** In place of the chart: why there is none. */
function chartMessage(/** @type {string} */ text) {
  removeChart?.();
  removeChart = null;
  const chart = el('chart');
  chart.textContent = '';
  const p = document.createElement('p');
  p.className = 'chart-message';
  p.textContent = text;
  chart.appendChild(p);
  el('legend').textContent = '';
  el('downloads').textContent = '';
  el('floor-label').textContent = '';
  hideRevisions();
}

function hideRevisions() {
  removeSteps?.();
  removeSteps = null;
  el('revisions').hidden = true;
}

function askKey(/** @type {string} */ why) {
  el('key-form').hidden = false;
  const k = input('key-input');
  k.value = '';
  k.focus();
  if (why !== '') showMessages([], [why]);
}

/** The failure's words on the page; a refused key is forgotten and asked for again. */
function fail(/** @type {unknown} */ e) {
  const text = e instanceof Error ? e.message : String(e);
  showMessages([text]);
  chartMessage(`No chart: ${text}`);
  if (e instanceof ApiFailure && e.status === 401) {
    sessionStorage.removeItem(KEY_STORAGE);
    catalog = null;
    el('key-form').hidden = false;
    input('key-input').focus();
  }
}

/** The datasets this key may read. */
async function loadCatalog() {
  const body = await getJson('catalog', apiKey(), 'the catalog (GET /catalog)');
  const datasets = /** @type {CatalogEntry[]} */ (body.datasets ?? []);
  const sel = select('dataset');
  sel.textContent = '';
  for (const d of datasets) sel.appendChild(new Option(`${entryId(d)}${d.description ? ` (${d.description})` : ''}`, entryId(d)));
  return datasets;
}

/** @returns {Promise<Array<Array<[string, string]>>>} */
async function loadSeries(/** @type {CatalogEntry} */ entry) {
  const known = seriesOf.get(entryId(entry));
  if (known !== undefined) return known;
  const { rows } = await getAllRows(seriesRequest(entry), apiKey(), `the series of ${entryId(entry)}`, withCursor);
  const choices = seriesChoices(rows, entry.series_key ?? []);
  seriesOf.set(entryId(entry), choices);
  return choices;
}

/** The series and column choices of a dataset in the controls. */
async function fillChoices(/** @type {CatalogEntry} */ entry) {
  const choices = await loadSeries(entry);
  const s = select('series');
  s.textContent = '';
  for (const c of choices) s.appendChild(new Option(seriesText(c), seriesText(c)));
  const col = select('column');
  col.textContent = '';
  for (const c of chartableColumns(entry)) col.appendChild(new Option(c, c));
  return choices;
}

/** The state's series in the dataset's series-key order, or null when the dataset has no such series. */
function matchSeries(/** @type {Array<Array<[string, string]>>} */ choices, /** @type {Array<[string, string]>} */ series) {
  const want = new Map(series);
  return choices.find((c) => c.length === want.size && c.every(([k, v]) => want.get(k) === v)) ?? null;
}

/** Everything the URL left out, from the catalog; throws what the URL named that is not there. */
async function complete(/** @type {ExploreState} */ state) {
  if (catalog === null || catalog.length === 0) throw new Error('This key may read no dataset (GET /catalog lists none).');
  const first = /** @type {CatalogEntry} */ (catalog[0]);
  const named = state.product === '' && state.dataset === '' ? first : catalog.find((d) => d.product_id === state.product && d.dataset === state.dataset);
  if (named === undefined) {
    select('dataset').value = entryId(first);
    await fillChoices(first);
    throw new Error(
      `Unknown dataset ${state.product}/${state.dataset}: this key's catalog has no such dataset. Pick one of: ${catalog.map(entryId).join(', ')}.`,
    );
  }
  const entry = named;
  if (entry.columns === null || entry.series_key === null) {
    throw new Error(`${entryId(entry)} is not loaded yet (state: ${entry.state ?? 'unknown'}); try again in a moment.`);
  }
  select('dataset').value = entryId(entry);
  const choices = await fillChoices(entry);
  const series = state.series.length === 0 ? (choices[0] ?? null) : matchSeries(choices, state.series);
  if (series === null) throw new Error(`Unknown series ${seriesText(state.series) || '(none)'} in ${entryId(entry)}.`);
  const columns = chartableColumns(entry);
  const column = state.column === '' ? (columns[0] ?? '') : state.column;
  if (!columns.includes(column))
    throw new Error(`Unknown column ${column || '(none)'} of ${entryId(entry)}: it has ${columns.join(', ') || 'no numeric column'}.`);
  const asOf = state.asOf.length === 0 ? [CURRENT] : state.asOf;
  const full = { ...state, product: entry.product_id, dataset: entry.dataset, series, column, asOf };
  return { entry, state: { ...full, ...resolvedDates(full, entry, Date.now()) } };
}

/** The controls show the state. */
function fillControls(/** @type {ExploreState} */ state) {
  select('series').value = seriesText(state.series);
  select('column').value = state.column;
  input('date-from').value = state.dateFrom;
  input('date-to').value = state.dateTo;
  input('as-of').value = state.asOf.join(', ');
}

/** A link that downloads `path` with the key (a plain link could not send x-api-key). */
function downloadLink(/** @type {string} */ text, /** @type {string} */ path, /** @type {string} */ accept, /** @type {string} */ filename) {
  const a = document.createElement('a');
  a.href = new URL(path, document.baseURI).href;
  a.textContent = text;
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    get(path, apiKey(), accept, filename)
      .then((res) => res.blob())
      .then((blob) => {
        const url = URL.createObjectURL(blob);
        const save = document.createElement('a');
        save.href = url;
        save.download = filename;
        document.body.appendChild(save);
        save.click();
        save.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      })
      .catch(fail);
  });
  return a;
}

/** "as_of X: CSV, Arrow" for each line. */
function fillDownloads(/** @type {HTMLElement} */ box, /** @type {Array<{ label: string, path: (f: 'csv' | 'arrow') => string, name: string }>} */ items) {
  box.textContent = '';
  const list = document.createElement('ul');
  for (const it of items) {
    const li = document.createElement('li');
    li.append(`${it.label}: `);
    li.appendChild(downloadLink('CSV', it.path('csv'), 'text/csv', `${it.name}.csv`));
    li.append(', ');
    li.appendChild(downloadLink('Arrow', it.path('arrow'), 'application/vnd.apache.arrow.stream', `${it.name}.arrow`));
    list.appendChild(li);
  }
  box.appendChild(list);
}

const fileSafe = (/** @type {string} */ s) => s.replace(/[^A-Za-z0-9_.-]+/g, '_');

async function render() {
  const run = ++renderCount;
  const { state: asked, problems } = parseState(location.search);
  if (apiKey() === '') {
    askKey('Enter an API key to start: it is kept in this tab only and sent as x-api-key.');
    chartMessage('No chart yet: no API key.');
    return;
  }
  el('key-form').hidden = true;
  try {
    if (catalog === null) catalog = await loadCatalog();
    el('controls').hidden = false;
    const { entry, state } = await complete(asked);
    if (run !== renderCount) return;
    const query = writeState(state);
    if (location.search.slice(1) !== query) history.replaceState(null, '', `?${query}`);
    fillControls(state);
    showMessages([], problems);
    el('chart-title').textContent = `${state.column} of ${entryId(entry)}, ${seriesText(state.series)}, ${state.dateFrom} to ${state.dateTo}`;
    chartMessage(`Loading ${state.asOf.length} line(s)...`);
    const answers = await Promise.all(
      state.asOf.map(async (a) => {
        const { rows, metadata } = await getAllRows(dataRequest(entry, state, a), apiKey(), `${entryId(entry)} as_of ${a}`, withCursor);
        return { asOf: a, rows: rowsOfSeries(rows, state.series), floorApplied: metadata.floor_applied === true, floor: metadata.vintage_floor };
      }),
    );
    if (run !== renderCount) return;
    const chart = chartSeries(answers, state.column);
    const floor = typeof answers[0]?.floor === 'string' ? answers[0].floor : entry.floor;
    if (chart.x.length === 0) {
      chartMessage(`No rows of ${state.column} for ${seriesText(state.series)} between ${state.dateFrom} and ${state.dateTo}.`);
      return;
    }
    removeChart?.();
    hideRevisions();
    shown = { entry, state };
    removeChart = drawLines(el('chart'), chart, { column: state.column, floor, onDate: (d) => void showRevisions(d) });
    const legend = el('legend');
    legend.textContent = '';
    for (const line of [...chart.lines].reverse()) {
      const li = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = line.colour;
      swatch.style.height = `${Math.max(3, line.width)}px`;
      li.append(swatch, line.label);
      legend.appendChild(li);
    }
    el('floor-label').textContent =
      floor === null
        ? `${entry.product_id} has no vintage floor: every version was kept.`
        : `Vintage floor ${floor} (dashed line): versions before it were not kept; rows dated before it were backfilled on that day, so an as_of before it shows the state held at the floor.`;
    input('revision-date').value = '';
    input('revision-date').min = state.dateFrom;
    input('revision-date').max = state.dateTo;
    fillDownloads(
      el('downloads'),
      [...chart.lines].reverse().map((l) => ({
        label: l.asOf === CURRENT ? 'current' : `as_of ${l.asOf}`,
        path: (f) => dataRequest(entry, state, l.asOf, f),
        name: fileSafe(`${entry.product_id}_${entry.dataset}_${seriesText(state.series)}_${state.column}_${l.asOf}`),
      })),
    );
  } catch (e) {
    if (run === renderCount) fail(e);
  }
}

/** One date's revision history, as a step line and a table. */
async function showRevisions(/** @type {string} */ date) {
  if (shown === null) return;
  const { entry, state } = shown;
  try {
    const { rows } = await getAllRows(vintagesRequest(entry, state, date), apiKey(), `the revision history of ${date}`, withCursor);
    const steps = revisionSteps(rowsOfSeries(rows, state.series), state.column, Date.now());
    const box = el('revisions');
    box.hidden = false;
    el('revisions-title').textContent = `Revision history of ${state.column} on ${date} (${seriesText(state.series)}): ${steps.table.length} version(s)`;
    const body = el('revision-rows');
    body.textContent = '';
    for (const r of steps.table) {
      const tr = document.createElement('tr');
      for (const cell of [r.value === null ? 'null' : String(r.value), r.visibleFrom, r.visibleTo ?? 'still the answer']) {
        const td = document.createElement('td');
        td.textContent = cell;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    removeSteps?.();
    removeSteps = steps.table.length === 0 ? null : drawSteps(el('revision-chart'), steps, { column: state.column, colour: '#332288' });
    if (steps.table.length === 0) el('revision-chart').textContent = `No version of ${date} for this series.`;
    const name = fileSafe(`${entry.product_id}_${entry.dataset}_${seriesText(state.series)}_${state.column}_${date}_vintages`);
    fillDownloads(el('revision-downloads'), [{ label: 'this history', path: (f) => vintagesRequest(entry, state, date, f), name }]);
    input('revision-date').value = date;
  } catch (e) {
    fail(e);
  }
}

/** The controls as a state; null (with the reason shown) when the as_of list is not valid. */
function controlsState() {
  const [product = '', dataset = ''] = select('dataset').value.split('/');
  const series = parseState(`series=${select('series').value}`).state.series;
  const asOf = input('as-of')
    .value.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = asOf.filter((a) => !isAsOf(a));
  if (bad.length > 0 || asOf.length > MAX_AS_OF) {
    showMessages([
      bad.length > 0 ? `As of: ${bad.join(', ')} is neither current, YYYY-MM-DD nor an RFC 3339 instant.` : `As of: at most ${MAX_AS_OF} instants.`,
    ]);
    input('as-of').focus();
    return null;
  }
  /** @type {ExploreState} */
  const state = {
    product,
    dataset,
    series,
    column: select('column').value,
    asOf: [...new Set(asOf)],
    dateFrom: input('date-from').value,
    dateTo: input('date-to').value,
  };
  return state;
}

function wire() {
  el('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const k = input('key-input').value.trim();
    if (k === '') return;
    sessionStorage.setItem(KEY_STORAGE, k);
    catalog = null;
    seriesOf.clear();
    void render();
  });
  el('change-key').addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    catalog = null;
    seriesOf.clear();
    askKey('Enter the API key to use.');
  });
  el('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = controlsState();
    if (next === null) return;
    history.pushState(null, '', `?${writeState(next)}`);
    void render();
  });
  select('dataset').addEventListener('change', () => {
    const entry = catalog?.find((d) => entryId(d) === select('dataset').value);
    if (entry !== undefined) fillChoices(entry).catch(fail);
  });
  el('revision-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const d = input('revision-date').value;
    if (isDate(d)) void showRevisions(d);
  });
  window.addEventListener('popstate', () => void render());
}

wire();
void render();
