import { RowRenderer } from '../../render/row-renderer.js';
import { LayoutCache } from '../layout-cache.js';
import type { OutputColumn } from '../page-view.js';
import { JsonRowLayout } from './json-row-layout.js';

export { MAX_LAYOUTS_PER_TABLE } from '../layout-cache.js';

/**
 * The compiled JSON row writers of one serving thread, one per (table, output layout)
 * (LayoutCache), not per request: generating code per request would cost more than the
 * request. Layouts with the same stored columns share one RowRenderer, so a walk-forward
 * page and a plain page of one generation share the row cache's text of their rows.
 */
export class JsonLayouts {
  private readonly renderers = new LayoutCache<RowRenderer>((stored) => new RowRenderer({ columns: stored.map((c) => c.column) }));
  private readonly layouts = new LayoutCache<JsonRowLayout>((columns) => {
    const stored = columns.filter((c) => c.at === 'row');
    return new JsonRowLayout(columns, stored.length === 0 ? null : this.renderers.of(stored));
  });

  of(columns: readonly OutputColumn[]): JsonRowLayout {
    return this.layouts.of(columns);
  }
}
