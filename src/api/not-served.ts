import { ApiError } from '../errors.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { NotFound } from './router.js';

/** What may follow `/{product}/{dataset}` on a data path (api-routes.ts). */
const SUB_RESOURCES: ReadonlySet<string> = new Set(['walk_forward', 'vintages']);

/**
 * The 404 of a dataset that the catalog in force names but this replica does not serve
 * (`--datasets`): it says which datasets are served here, so a request routed to the wrong
 * shard is diagnosed from its answer. Any other unknown path keeps the plain 404.
 */
export function notServedHere(registry: DatasetRegistry): NotFound {
  const { selection } = registry;
  return (path) => {
    const parts = path.split('/');
    if (parts.length !== 3 && !(parts.length === 4 && SUB_RESOURCES.has(parts[3]!))) return null;
    const product = parts[1]!;
    const dataset = parts[2]!;
    if (!registry.catalog.has(product, dataset) || selection.has(product, dataset)) return null;
    const served = registry.slots.map((s) => s.id).join(', ');
    return new ApiError('not_found', `${product}/${dataset} is not served by this replica (--datasets ${selection.text}); it serves ${served}`);
  };
}
