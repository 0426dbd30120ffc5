import type { DatasetSelection } from '../catalog/dataset-selection.js';
import { isNamedDataset } from '../catalog/products.js';
import { ApiError } from '../errors.js';
import type { NotFound } from './router.js';

/** What may follow `/{product}/{dataset}` on a data path (api-routes.ts). */
const SUB_RESOURCES: ReadonlySet<string> = new Set(['walk_forward', 'vintages']);

/**
 * The 404 of a dataset that the catalog names but this replica does not serve
 * (`--datasets`): it says which datasets are served here, so a request routed to the wrong
 * shard is diagnosed from its answer. Any other unknown path keeps the plain 404.
 */
export function notServedHere(selection: DatasetSelection): NotFound {
  const served = selection.list().join(', ');
  return (path) => {
    const parts = path.split('/');
    if (parts.length !== 3 && !(parts.length === 4 && SUB_RESOURCES.has(parts[3]!))) return null;
    const product = parts[1]!;
    const dataset = parts[2]!;
    if (!isNamedDataset(product, dataset) || selection.has(product, dataset)) return null;
    return new ApiError('not_found', `${product}/${dataset} is not served by this replica (--datasets ${selection.text}); it serves ${served}`);
  };
}
