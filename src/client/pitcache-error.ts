/** An error answer of the API (docs/errors.md#body), thrown by PitcacheClient. */
export class PitcacheError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | undefined,
    readonly recordId: string | undefined,
  ) {
    super(message);
    this.name = 'PitcacheError';
  }
}
