import type { PageMeta } from '../../src/format/resolved-page.js';

/** A page's meta for tests of what keeps or writes one: one row of gbsi_eu, generation 1, nothing visible, unless `over` says otherwise. */
export function pageMeta(over: Partial<PageMeta> = {}): PageMeta {
  return {
    productId: 'gbsi_eu',
    count: 1,
    totalCount: 1,
    nextCursor: null,
    generation: 1,
    dataLatestDate: null,
    maxObservedUs: null,
    asOfUs: null,
    floorApplied: false,
    extensionKeys: [],
    extensionValues: [],
    ...over,
  };
}
