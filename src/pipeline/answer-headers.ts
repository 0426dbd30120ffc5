import type { Encoding } from '../format/encoded-body.js';
import { writeEnvelopeHeaders } from '../format/envelope-headers.js';
import { writeEtag } from '../format/etag.js';
import { HeaderWriter } from '../format/header-writer.js';
import { dataAgeHours, type PageMeta } from '../format/resolved-page.js';
import type { HeaderBlock } from '../http/header-block.js';
import type { HttpRequest } from '../http/types.js';
import type { Clock } from '../time/clock.js';
import type { RequestKey } from '../cache/request-key.js';

/**
 * `as_of` and `generation` both given (contract 12): the answer never changes. `private`,
 * not `public`: the answer is behind an API key that shared caches do not vary on, so only
 * the client's own cache may keep it.
 */
const IMMUTABLE = 'private, max-age=31536000, immutable';

/**
 * The headers of a data answer, written into one block per serving thread (valid until the
 * next call): what every answer carries, and what a 304 carries of it.
 */
export class AnswerHeaders {
  private readonly hw = new HeaderWriter();

  constructor(private readonly clock: Clock) {}

  /** vary, etag and cache-control: a 304's headers. */
  validators(k: RequestKey, immutable: boolean): HeaderBlock {
    this.writeValidators(k, immutable);
    return this.hw.block();
  }

  /** A 200's: the validators, content-encoding, and the envelope's headers (contract 4) with the data's age now. */
  answer(meta: PageMeta, req: HttpRequest, k: RequestKey, encoding: Encoding | null, immutable: boolean): HeaderBlock {
    const hw = this.hw;
    this.writeValidators(k, immutable);
    if (encoding !== null) hw.start('content-encoding').ascii(encoding);
    writeEnvelopeHeaders(hw, meta, dataAgeHours(meta, this.clock.now() * 1000), req.path, req.rawQuery);
    return hw.block();
  }

  private writeValidators(k: RequestKey, immutable: boolean): void {
    const hw = this.hw;
    hw.reset();
    hw.start('vary').ascii('Accept, Accept-Encoding');
    writeEtag(hw, k);
    if (immutable) hw.start('cache-control').ascii(IMMUTABLE);
  }
}
