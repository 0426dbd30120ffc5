import type { OutputColumn } from '../page-view.js';
import { BatchHeader } from './batch-header.js';
import { SchemaMessage } from './schema-message.js';

/**
 * What an Arrow answer of one output layout reuses from the last one: its schema message
 * (all but the per-answer envelope), its record-batch header template, and the longest
 * UTF-8 value of each string column (how much room its bytes can need), all computed once
 * per layout.
 */
export class ArrowLayout {
  readonly schema: SchemaMessage;
  readonly batch: BatchHeader;
  /** per output column: bytes of its longest dictionary value (string columns), else 0 */
  readonly maxUtf8: Int32Array;

  constructor(columns: readonly OutputColumn[], metadata: ReadonlyArray<readonly [string, string]>, lastKey: string | null) {
    this.schema = new SchemaMessage(columns, metadata, lastKey);
    let buffers = 0;
    this.maxUtf8 = new Int32Array(columns.length);
    columns.forEach(({ column: c, arrow }, i) => {
      if (arrow !== undefined) {
        // an Arrow passthrough: the buffers it was given
        buffers += arrow.array.buffers.length;
        return;
      }
      // validity + values, and Utf8's bytes
      buffers += c.kind === 'string' ? 3 : 2;
      if (c.kind !== 'string') return;
      const offsets = c.dict.utf8Offsets;
      let max = 0;
      for (let k = 1; k < offsets.length; k++) max = Math.max(max, offsets[k]! - offsets[k - 1]!);
      this.maxUtf8[i] = max;
    });
    this.batch = new BatchHeader(columns.length, buffers);
  }
}
