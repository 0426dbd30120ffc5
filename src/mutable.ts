/**
 * T with its fields writable: for the per-thread scratch objects a hot path refills instead
 * of allocating (PageScratch, a data endpoint's answer), handed out under T's readonly view.
 */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
