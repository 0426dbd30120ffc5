import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawReply } from '../raw-http.js';

/**
 * What every answer to generated input must be (contract 5, docs/errors.md): never a 500,
 * an error as the contract's body with a code from the table and the status that code
 * has, the same record id in the body and the `x-request-id` header. The table is read
 * from docs/errors.md, not from src/errors.ts, so a code or status changed there alone is
 * caught (and a code the documents add is known here at once).
 */
export const CODE_STATUS: Readonly<Record<string, number>> = codeTable();

function codeTable(): Record<string, number> {
  // Up from here to the repository (this file also runs compiled, from dist/).
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'docs', 'errors.md')) && dirname(dir) !== dir) dir = dirname(dir);
  const doc = readFileSync(join(dir, 'docs', 'errors.md'), 'utf8');
  const table: Record<string, number> = {};
  // Rows like "| 400 | `invalid_parameter` | ..." or "| 503 | `a` / `b` | ...".
  for (const m of doc.matchAll(/^\| (\d{3}) \| ([^|]+)\|/gm)) {
    for (const code of m[2]!.matchAll(/`([a-z_]+)`/g)) if (m[1] !== '500') table[code[1]!] = Number(m[1]);
  }
  if (Object.keys(table).length < 10) throw new Error('docs/errors.md: the table of codes was not found');
  return table;
}

const RECORD_ID = /^req_[0-9a-z]{16,}$/;

/** An answer's status and, for an error, its code ('' for a success). */
export interface Outcome {
  readonly status: number;
  readonly code: string;
}

/**
 * The answer checked against the contract; returns its outcome, or throws naming what is
 * wrong. A HEAD answer has no body to check: its status and headers are.
 */
export function checkAnswer(reply: RawReply, method: string): Outcome {
  const { status } = reply;
  if (status === 500) throw new Error(`500: ${reply.body.toString('utf8').slice(0, 300)}`);
  const requestId = one(reply, 'x-request-id');
  const contentType = one(reply, 'content-type');
  if (status < 400) {
    if (![200, 304].includes(status)) throw new Error(`unexpected status ${status}`);
    if (requestId === undefined || !RECORD_ID.test(requestId)) throw new Error(`x-request-id ${requestId} is not a record id`);
    if (status === 200 && method !== 'HEAD' && contentType?.startsWith('application/json') === true && reply.headers.get('content-encoding') === undefined) {
      JSON.parse(reply.body.toString('utf8'));
    }
    return { status, code: '' };
  }
  if (contentType !== 'application/json') throw new Error(`error ${status} with content-type ${contentType}`);
  if (status === 405 && one(reply, 'allow') === undefined) throw new Error('405 without Allow');
  if ((status === 429 || status === 503) && one(reply, 'retry-after') === undefined) throw new Error(`${status} without Retry-After`);
  if (method === 'HEAD') {
    if (requestId === undefined || !RECORD_ID.test(requestId)) throw new Error(`x-request-id ${requestId} is not a record id`);
    return { status, code: '' };
  }
  const text = reply.body.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`error body is not JSON: ${text.slice(0, 200)}`);
  }
  const shape = errorShape(body);
  if (typeof shape === 'string') throw new Error(`${shape}: ${text.slice(0, 300)}`);
  if (shape.status !== status) throw new Error(`body status ${shape.status} under HTTP ${status}`);
  if (CODE_STATUS[shape.code] !== status) throw new Error(`code ${shape.code} is not a ${status} code of the contract`);
  if (shape.recordId !== requestId) throw new Error(`record_id ${shape.recordId} differs from x-request-id ${requestId}`);
  return { status, code: shape.code };
}

/** `{"error": {status, code, message, param?}, "record_id"}` and nothing else, or what is wrong. */
function errorShape(body: unknown): { status: number; code: string; recordId: string } | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'error body is not an object';
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).filter((k) => k !== 'error' && k !== 'record_id');
  if (extra.length > 0) return `error body has ${extra.join(', ')}`;
  if (typeof b['record_id'] !== 'string' || !RECORD_ID.test(b['record_id'])) return 'record_id is not a record id';
  const e = b['error'];
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return 'error is not an object';
  const err = e as Record<string, unknown>;
  const extraErr = Object.keys(err).filter((k) => !['status', 'code', 'message', 'param'].includes(k));
  if (extraErr.length > 0) return `error has ${extraErr.join(', ')}`;
  if (typeof err['status'] !== 'number' || typeof err['code'] !== 'string') return 'error.status or error.code missing';
  if (typeof err['message'] !== 'string' || err['message'] === '') return 'error.message missing';
  if ('param' in err && (typeof err['param'] !== 'string' || err['param'] === '')) return 'error.param is not a name';
  return { status: err['status'], code: err['code'], recordId: b['record_id'] };
}

function one(reply: RawReply, name: string): string | undefined {
  const values = reply.headers.get(name);
  if (values !== undefined && values.length > 1) throw new Error(`${name} sent ${values.length} times`);
  return values?.[0];
}
