import type { ArrowPassthrough } from '../arrow-passthrough.js';
import type { FlatField, FlatWriter } from './flat-writer.js';

/**
 * The schema Field of an Arrow passthrough column (format/arrow-passthrough.ts): its type
 * table as given, and for a dictionary its DictionaryEncoding (Schema.fbs: id, indexType,
 * isOrdered), the type being the values' type. `dictionaryId` is the id the stream's
 * dictionary batch carries (ipc-stream.ts gives each dictionary column its column index).
 */
export function writePassthroughField(w: FlatWriter, name: string, arrow: ArrowPassthrough, dictionaryId: number, from: number): void {
  const fields: FlatField[] = [
    { id: 0, kind: 'ref' },
    { id: 1, kind: 'u8', value: 1 }, // nullable
    { id: 2, kind: 'u8', value: arrow.type.tag },
    { id: 3, kind: 'ref' },
    { id: 5, kind: 'ref' },
  ];
  if (arrow.dictionary !== null) fields.push({ id: 4, kind: 'ref' });
  const [nameRef, , , typeRef, children, dictionary] = w.table(fields, from);
  w.point(nameRef!);
  w.string(name);
  // Timestamp's zone (field 1) is a string placed after the type's table.
  const zoneField = { id: 1, kind: 'ref' } as const;
  const [zone] = w.table(arrow.type.timezone === null ? arrow.type.scalars : [zoneField, ...arrow.type.scalars], typeRef!);
  if (arrow.type.timezone !== null) {
    w.point(zone!);
    w.string(arrow.type.timezone);
  }
  // Readers (Arrow C++, polars) require the children vector, even empty.
  w.point(children!);
  w.refVector(0);
  const dict = arrow.dictionary;
  if (dict === null) return;
  const [, indexType] = w.table(
    [
      { id: 0, kind: 'i64', value: dictionaryId },
      { id: 1, kind: 'ref' },
      { id: 2, kind: 'u8', value: dict.ordered ? 1 : 0 },
    ],
    dictionary!,
  );
  w.table(
    [
      { id: 0, kind: 'i32', value: dict.indexBits },
      { id: 1, kind: 'u8', value: dict.indexSigned ? 1 : 0 },
    ],
    indexType!,
  );
}
