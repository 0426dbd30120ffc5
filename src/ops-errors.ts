/**
 * Operational errors: what goes wrong between the server and its snapshot source (reading,
 * checking, building a snapshot; the local cache; publishing). Each carries a stable code
 * that logs and tools can match on; the message is for people and may change. API errors
 * answered to clients are another thing: ApiError in errors.ts.
 *
 * Errors that cross a worker thread keep their code (table-builder.ts sends it along).
 */
export const OPS_ERROR_CODES = [
  /** the source could not be reached or answered with an error: worth retrying as it is */
  'source_unreachable',
  /** no manifest.json for the dataset */
  'manifest_missing',
  /** manifest.json is not JSON, breaks its schema, or names another dataset */
  'manifest_invalid',
  /** the manifest's generation is below the one served: generations only go up */
  'generation_regressed',
  /** the object a manifest names is not there */
  'object_missing',
  /** the object's sha256 is not the manifest's */
  'checksum_mismatch',
  /** the object holds another number of rows than the manifest says */
  'row_count_mismatch',
  /** a product's filter column is not in the snapshot's series key */
  'filter_column_missing',
  /** not Arrow IPC, or a schema or value the snapshot contract refuses */
  'snapshot_invalid',
  /** catalog.json is not JSON, breaks its schema, or names a product, dataset or filter it may not (contract 13) */
  'catalog_invalid',
  /** a conditional write lost a race */
  'precondition_failed',
] as const;

export type OpsErrorCode = (typeof OPS_ERROR_CODES)[number];

export class OpsError extends Error {
  constructor(
    readonly code: OpsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OpsError';
  }
}

/** The source could not be reached or answered with an error: worth retrying as it is. */
export class SourceUnavailableError extends OpsError {
  constructor(message: string) {
    super('source_unreachable', message);
    this.name = 'SourceUnavailableError';
  }
}

/**
 * The code of any failure of a load: an OpsError's own; anything else was thrown while
 * decoding or checking the snapshot's contents (decode-arrow.ts), so it is a refused snapshot.
 */
export function opsCodeOf(e: unknown): OpsErrorCode {
  return e instanceof OpsError ? e.code : 'snapshot_invalid';
}

export function isOpsErrorCode(s: string): s is OpsErrorCode {
  return (OPS_ERROR_CODES as readonly string[]).includes(s);
}

/**
 * Runs one read of the source. An answer that is an OpsError (a missing object) passes as
 * it is; any other failure is an outage, named with what was being read.
 */
export async function fromSource<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof OpsError) throw e;
    throw new SourceUnavailableError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
