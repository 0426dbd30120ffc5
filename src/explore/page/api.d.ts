/** The words for a failed call to `what`. */
export function failureText(status: number, code: string, detail: string, what: string): string;
/**
 * GET a relative path with the key; the parsed JSON, or an ApiFailure.
 * @param {string} path
 * @param {string} key
 * @param {string} what  what the call is for, in the failure's words
 * @returns {Promise<any>}
 */
export function getJson(path: string, key: string, what: string): Promise<any>;
/**
 * GET a relative path with the key; the Response when 2xx, else an ApiFailure.
 * @param {string} path
 * @param {string} key
 * @param {string} accept
 * @param {string} what
 */
export function get(path: string, key: string, accept: string, what: string): Promise<Response>;
/**
 * Every row of a paged JSON answer (following next_cursor) and the first page's metadata.
 * @param {string} path
 * @param {string} key
 * @param {string} what
 * @param {(path: string, cursor: string) => string} next
 * @returns {Promise<{ rows: Array<Record<string, unknown>>, metadata: Record<string, unknown> }>}
 */
export function getAllRows(path: string, key: string, what: string, next: (path: string, cursor: string) => string): Promise<{
    rows: Array<Record<string, unknown>>;
    metadata: Record<string, unknown>;
}>;
/**
 * The explorer's calls to the API: the key from sessionStorage as `x-api-key`, the
 * contract's error body turned into words for the page (docs/explore.md).
 */
/** Where the key is kept (contract 17): this tab only, gone when it closes. */
export const KEY_STORAGE: "pitcache.key";
/** An answer other than 2xx, or no answer: its message is what the page shows. */
export class ApiFailure extends Error {
    /**
     * @param {number} status  0: no answer (network)
     * @param {string} code
     * @param {string} message
     */
    constructor(status: number, code: string, message: string);
    status: number;
    code: string;
}
