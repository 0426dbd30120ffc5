/** The built-in demo data set and its keys: what `pitcache serve --demo` runs on. */
export { generateDemo, demoSnapshotSpec, demoTimeline, demoCreatedAt, DEMO_END_DATE, DEMO_START_DATE, DEMO_SEED } from './generate.js';
export type { DemoOptions } from './generate.js';
export { DEMO_DATASETS, describeDemo } from './catalog.js';
export type { DemoDatasetSummary } from './catalog.js';
export type { DemoDatasetDef } from './dataset-def.js';
export { DEMO_KEY, DEMO_EU_KEY, DEMO_ADMIN_KEY, demoKeysFile } from './keys.js';
export { ensureDemoData, demoKeysConfig, DEMO_KEYS_FILE } from './ensure-demo.js';
export type { DemoKeyEntry } from './keys.js';
