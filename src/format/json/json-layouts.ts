import type { RowCache } from '../arenas/row-cache.js';
import { ROW_FORMAT_JSON } from '../arenas/row-owner.js';
import { RowRenderer } from './row-renderer.js';
import { LayoutCache } from '../layout-cache.js';
import type { OutputColumn } from '../page-view.js';
import { JsonRowLayout } from './json-row-layout.js';

export { MAX_LAYOUTS_PER_TABLE } from '../layout-cache.js';

/**
 * The compiled JSON row writers of one serving thread, one per (table, output layout)
 * (LayoutCache), not per request: generating code per request would cost more than the
 * request. Layouts with the same stored columns share one RowRenderer, so a walk-forward
 * page and a plain page of one generation share the row cache's text of their rows. With
 * a row cache, each renderer is tagged with the owner its columns have on every thread.
 */
export class JsonLayouts {
  private readonly renderers = new LayoutCache<RowRenderer>((stored) => {
    const columns = stored.map((c) => c.column);
    return new RowRenderer({ columns }, this.rowCache?.owners.ownerOf(columns, ROW_FORMAT_JSON) ?? null);
  });
  private readonly layouts = new LayoutCache<JsonRowLayout>((columns) => {
    const stored = columns.filter((c) => c.at === 'row');
    return new JsonRowLayout(columns, stored.length === 0 ? null : this.renderers.of(stored));
  });

  constructor(private readonly rowCache: RowCache | null = null) {}

  of(columns: readonly OutputColumn[]): JsonRowLayout {
    return this.layouts.of(columns);
  }
}
