import type { DecodedColumn } from '../store/decode-arrow.js';
import type { VersionTable } from './version-table.js';

/**
 * Tables in one schema (conformed already) -> one table, rows one table after the other: the
 * files of an `--input` folder, in name order. Strings get one code space: each distinct
 * value once, whichever file it came from.
 */
export function concatTables(tables: readonly VersionTable[]): VersionTable {
  if (tables.length === 1) return tables[0]!;
  const schema = tables[0]!.schema;
  for (const t of tables) if (t.schema !== schema) throw new Error('concatTables: every table must be in one schema');
  const rows = tables.reduce((n, t) => n + t.rows, 0);
  const columns = schema.columns.map((_, c) =>
    concatColumn(
      tables.map((t) => t.columns[c]!),
      rows,
    ),
  );
  return { schema, rows, columns };
}

function concatColumn(parts: readonly DecodedColumn[], rows: number): DecodedColumn {
  const first = parts[0]!;
  let validity: Uint8Array | null = null;
  if (parts.some((p) => p.validity !== null)) {
    validity = new Uint8Array(rows);
    let at = 0;
    for (const p of parts) {
      if (p.validity === null) validity.fill(1, at, at + lengthOf(p));
      else validity.set(p.validity, at);
      at += lengthOf(p);
    }
  }
  if (first.kind === 'string') {
    const strings: string[] = [];
    const codeOf = new Map<string, number>();
    const codes = new Int32Array(rows);
    let at = 0;
    for (const p of parts) {
      if (p.kind !== 'string') throw new Error(`concatTables: column "${first.name}" changes kind`);
      const remap = Int32Array.from(p.strings, (s) => {
        let code = codeOf.get(s);
        if (code === undefined) codeOf.set(s, (code = strings.push(s) - 1));
        return code;
      });
      for (let i = 0; i < p.codes.length; i++) codes[at + i] = remap[p.codes[i]!]!;
      at += p.codes.length;
    }
    return { kind: 'string', name: first.name, validity, codes, strings };
  }
  type Typed = ArrayLike<unknown> & { set(a: ArrayLike<unknown>, o: number): void };
  const arrays = parts.map((p) => (p as unknown as { values: Typed }).values);
  const Ctor = arrays[0]!.constructor as new (n: number) => Typed;
  const values = new Ctor(rows);
  let at = 0;
  for (const a of arrays) {
    values.set(a, at);
    at += a.length;
  }
  return { ...first, validity, values } as DecodedColumn;
}

function lengthOf(c: DecodedColumn): number {
  return c.kind === 'string' ? c.codes.length : c.values.length;
}
