import { invalidParam } from '../errors.js';

/**
 * `columns=a,b,...` (contract 9): the named columns plus `date` and the series-key columns
 * always, in schema order. Returns the stored column indices to write; null (no parameter)
 * means every column. An unknown or empty name is a 400 that lists the dataset's columns,
 * so a caller can correct the request from the error alone.
 */
export function parseProjection(text: string | undefined, columnNames: readonly string[], seriesKey: readonly string[]): readonly number[] | null {
  if (text === undefined) return null;
  const wanted = new Set<string>(['date', ...seriesKey]);
  for (const name of text.split(',')) {
    if (!columnNames.includes(name)) {
      const what = name === '' ? 'columns must be a comma-separated list of column names' : `unknown column "${name}"`;
      throw invalidParam('columns', `${what}; the columns of this dataset are: ${columnNames.join(', ')}`);
    }
    wanted.add(name);
  }
  const out: number[] = [];
  for (let c = 0; c < columnNames.length; c++) if (wanted.has(columnNames[c]!)) out.push(c);
  return out;
}

/** A stable text for a projection (cache keys, ETags): the indices, or '*' for every column. */
export function projectionKey(p: readonly number[] | null): string {
  return p === null ? '*' : p.join('.');
}
