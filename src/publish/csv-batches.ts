import { createReadStream } from 'node:fs';
import type { BatchInput } from './arrow-input.js';
import { checkCsvHeader, csvTable, CsvTypeInference } from './csv-input.js';
import { CsvParser, type CsvBatch } from './csv-parse.js';
import type { DatasetSchema } from './dataset-schema.js';
import type { VersionTable } from './version-table.js';

/** Characters of text parsed at a time. */
const CHUNK = 1 << 20;

/** The text of a CSV input, chunk by chunk, as many times as asked (a first publish reads it twice). */
export type CsvText = () => AsyncIterable<string>;

export function csvFileText(path: string): CsvText {
  return () => createReadStream(path, { encoding: 'utf8', highWaterMark: CHUNK }) as AsyncIterable<string>;
}

export function csvStringText(text: string): CsvText {
  return async function* () {
    for (let at = 0; at < text.length; at += CHUNK) yield text.slice(at, at + CHUNK);
  };
}

/**
 * A CSV input read a batch of records at a time. In the dataset's schema when there is one;
 * for a first publish the types are inferred by a first pass over the text (csv-input.ts),
 * then the text is read again as those types. Only a chunk of text and one batch of records
 * are in memory at once.
 */
export async function csvBatchInput(text: CsvText, schema: DatasetSchema | null, seriesKey: readonly string[]): Promise<BatchInput> {
  let target = schema;
  if (target === null) {
    let inference: CsvTypeInference | null = null;
    const parser: CsvParser = new CsvParser((b) => (inference ??= new CsvTypeInference(parser.header!, seriesKey)).add(b.rows));
    for await (const chunk of text()) parser.push(chunk);
    parser.end();
    inference ??= new CsvTypeInference(parser.header!, seriesKey);
    target = inference.schema();
  }
  const dataset = target;
  return {
    schema: dataset,
    async *batches(): AsyncGenerator<VersionTable> {
      const queue: CsvBatch[] = [];
      const parser = new CsvParser((b) => queue.push(b));
      let checked = false;
      const ready = function* (): Generator<VersionTable> {
        if (!checked && parser.header !== null) {
          checkCsvHeader(parser.header, dataset);
          checked = true;
        }
        while (queue.length > 0) {
          const b = queue.shift()!;
          yield csvTable({ header: parser.header!, rows: b.rows, lines: b.lines }, dataset);
        }
      };
      for await (const chunk of text()) {
        parser.push(chunk);
        yield* ready();
      }
      parser.end();
      yield* ready();
    },
    close: async () => {},
  };
}
