// @ts-check
/**
 * The explorer's calls to the API: the key from sessionStorage as `x-api-key`, the
 * contract's error body turned into words for the page (docs/explore.md).
 */

/** Where the key is kept (contract 17): this tab only, gone when it closes. */
export const KEY_STORAGE = 'pitcache.key';

/** Pages followed at most for one line (PAGE_LIMIT rows each). */
const MAX_PAGES = 50;

/** An answer other than 2xx, or no answer: its message is what the page shows. */
export class ApiFailure extends Error {
  /**
   * @param {number} status  0: no answer (network)
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The words for a failed call to `what`. */
export function failureText(/** @type {number} */ status, /** @type {string} */ code, /** @type {string} */ detail, /** @type {string} */ what) {
  if (status === 401) return `401 Unauthorized: the server refused the API key (${detail}). Enter a valid key.`;
  if (status === 403) return `403 Forbidden: this key may not read ${what} (${detail}).`;
  if (status === 404) return `404 Not found: ${what} (${detail}).`;
  if (status === 0) return `No answer from the server for ${what}: ${detail}.`;
  if (status >= 500) return `Server error ${status}${code === '' ? '' : ` ${code}`} for ${what}: ${detail}.`;
  return `${status}${code === '' ? '' : ` ${code}`} for ${what}: ${detail}.`;
}

/**
 * GET a relative path with the key; the parsed JSON, or an ApiFailure.
 * @param {string} path
 * @param {string} key
 * @param {string} what  what the call is for, in the failure's words
 * @returns {Promise<any>}
 */
export async function getJson(path, key, what) {
  const res = await get(path, key, 'application/json', what);
  return res.json();
}

/**
 * GET a relative path with the key; the Response when 2xx, else an ApiFailure.
 * @param {string} path
 * @param {string} key
 * @param {string} accept
 * @param {string} what
 */
export async function get(path, key, accept, what) {
  /** @type {Response} */
  let res;
  try {
    res = await fetch(new URL(path, document.baseURI), { headers: { 'x-api-key': key, accept } });
  } catch (e) {
    throw new ApiFailure(0, '', failureText(0, '', e instanceof Error ? e.message : String(e), what));
  }
  if (res.ok) return res;
  let code = '';
  let detail = res.statusText;
  try {
    const body = await res.json();
    code = String(body?.error?.code ?? '');
    detail = String(body?.error?.message ?? detail);
    if (typeof body?.record_id === 'string') detail += `; record ${body.record_id}`;
  } catch {
    // not the contract's error body (a proxy's page): the status says it
  }
  throw new ApiFailure(res.status, code, failureText(res.status, code, detail, what));
}

/**
 * Every row of a paged JSON answer (following next_cursor) and the first page's metadata.
 * @param {string} path
 * @param {string} key
 * @param {string} what
 * @param {(path: string, cursor: string) => string} next
 * @returns {Promise<{ rows: Array<Record<string, unknown>>, metadata: Record<string, unknown> }>}
 */
export async function getAllRows(path, key, what, next) {
  let page = await getJson(path, key, what);
  const metadata = page.metadata ?? {};
  const rows = [...page.data];
  for (let n = 1; page.has_more === true && typeof page.next_cursor === 'string'; n++) {
    if (n === MAX_PAGES) throw new ApiFailure(0, '', `${what}: more than ${MAX_PAGES} pages; narrow the dates.`);
    page = await getJson(next(path, page.next_cursor), key, what);
    rows.push(...page.data);
  }
  return { rows, metadata };
}
