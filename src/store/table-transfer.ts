import type { CodeArray, Column, StringDictionary } from './column.js';
import { MinTree } from './min-tree.js';
import { StepMax, type StepArrays } from './step-max.js';
import type { Table } from './table.js';

/**
 * A Table as plain data for postMessage. Its typed arrays live on SharedArrayBuffers, so
 * structured clone shares them instead of copying: a worker builds a generation and the
 * serving thread adopts it without touching a byte. Only class instances (trees) and
 * per-dictionary lookup maps are rebuilt on arrival.
 */
export interface TableTransfer {
  readonly table: Omit<Table, 'keyThrTree' | 'latestDateByThr' | 'maxObservedByThr' | 'columns' | 'seriesColumns'>;
  readonly columns: readonly TransferColumn[];
  readonly keyThrTree: readonly Float64Array[];
  readonly latestDateByThr: StepArrays;
  readonly maxObservedByThr: StepArrays;
}

type TransferDictionary = Omit<StringDictionary, 'codeOf'>;
type TransferColumn =
  Exclude<Column, { kind: 'string' }> | { kind: 'string'; name: string; validity: Uint8Array | null; codes: CodeArray; dict: TransferDictionary };

export function tableToTransfer(t: Table): TableTransfer {
  const { keyThrTree, latestDateByThr, maxObservedByThr, columns, seriesColumns: _s, ...rest } = t;
  return {
    table: rest,
    columns: columns.map((c) =>
      c.kind === 'string' ? { ...c, dict: { values: c.dict.values, utf8: c.dict.utf8, utf8Offsets: c.dict.utf8Offsets, rank: c.dict.rank } } : c,
    ),
    keyThrTree: keyThrTree.arrays,
    latestDateByThr: latestDateByThr.arrays,
    maxObservedByThr: maxObservedByThr.arrays,
  };
}

export function tableFromTransfer(x: TableTransfer): Table {
  const columns: Column[] = x.columns.map((c) => {
    if (c.kind !== 'string') return c;
    const codeOf = new Map<string, number>();
    c.dict.values.forEach((v, i) => codeOf.set(v, i));
    return { ...c, dict: { ...c.dict, codeOf } };
  });
  const byName = new Map(columns.map((c) => [c.name, c]));
  return {
    ...x.table,
    columns,
    seriesColumns: x.table.seriesKey.map((k) => byName.get(k) as Extract<Column, { kind: 'string' }>),
    keyThrTree: MinTree.fromLevels(x.keyThrTree),
    latestDateByThr: StepMax.fromArrays(x.latestDateByThr),
    maxObservedByThr: StepMax.fromArrays(x.maxObservedByThr),
  };
}
