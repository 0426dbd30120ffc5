export type CatalogEntry = import("./series.js").CatalogEntry;
export type ExploreState = import("./state.js").ExploreState;
