import { rawRequest, type RawReply, type RawRequest } from '../raw-http.js';
import { checkAnswer, type Outcome } from './oracle.js';
import type { FuzzCase, FuzzWorld } from './requests.js';

/**
 * One generated case against the server, with every property the fuzz test asks of it:
 * a whole answer within the bound (no hang, no dropped connection), the contract's answer
 * (oracle.ts), the same status and code when asked again (a stable code), the exact code a
 * mutated cursor must get, and a valid request answered right after with the same rows as
 * before. Throws naming what failed; returns the outcome.
 */
export interface CaseRunner {
  run(c: FuzzCase): Promise<Outcome>;
}

/** The valid request asked between cases, and its rows as first answered. */
interface Probe {
  readonly request: RawRequest;
  readonly data: string;
}

export async function caseRunner(port: number, world: FuzzWorld, timeoutMs: number): Promise<CaseRunner> {
  const send = (r: RawRequest): Promise<RawReply> => rawRequest(port, r, timeoutMs);
  const d = world.datasets[0]!;
  const probeRequest: RawRequest = {
    method: 'GET',
    target: `/${d.productId}/${d.dataset}?as_of=2026-03-01&latest=false&limit=50`,
    headers: [['x-api-key', world.keys.main]],
  };
  const rowsOf = (r: RawReply): string => JSON.stringify((JSON.parse(r.body.toString('utf8')) as { data: unknown }).data);
  const first = await send(probeRequest);
  if (first.status !== 200) throw new Error(`the probe answered ${first.status}`);
  const probe: Probe = { request: probeRequest, data: rowsOf(first) };

  return {
    async run(c) {
      const outcome = checkAnswer(await send(c.request), c.request.method);
      if (c.cursor !== undefined) checkCursor(c.cursor, outcome);
      // Asked again, the same answer: codes are stable (a rate limit may have run out meanwhile).
      const again = checkAnswer(await send(c.request), c.request.method);
      if (outcome.status !== 429 && again.status !== 429 && (again.status !== outcome.status || again.code !== outcome.code)) {
        throw new Error(`asked twice: ${outcome.status} ${outcome.code}, then ${again.status} ${again.code}`);
      }
      const p = await send(probe.request);
      if (p.status !== 200 || rowsOf(p) !== probe.data) throw new Error(`the valid request between cases answered ${p.status} with other rows`);
      return outcome;
    },
  };
}

/**
 * A chain's own request with only its cursor's text changed: 200 when the text still
 * decodes to the same bytes (base64url's unused trailing bits), else 400 invalid_cursor
 * (or invalid_parameter for an empty one).
 */
function checkCursor({ original, sent }: { original: string; sent: string }, o: Outcome): void {
  const same = /^[A-Za-z0-9_-]*$/.test(sent) && Buffer.from(sent, 'base64url').equals(Buffer.from(original, 'base64url'));
  const expected = sent === '' ? ['400 invalid_parameter', '400 invalid_cursor'] : same ? ['200 '] : ['400 invalid_cursor'];
  if (!expected.includes(`${o.status} ${o.code}`)) {
    throw new Error(`cursor ${JSON.stringify(sent)} (from ${original}) answered ${o.status} ${o.code}; expected ${expected.join(' or ')}`);
  }
}
