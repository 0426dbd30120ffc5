import { FNV_OFFSET, fnvRun } from '../query/hash.js';

/** A request's own text, as the transport handed it: what decides its answer besides the generation. */
export interface RawAsk {
  path: string;
  query: string;
  accept: string;
  acceptEncoding: string;
  /** askSlot of the four */
  slot: number;
}

/** What AskIndex keeps: an entry that remembers the one request text it was last asked by. */
export interface Asked {
  ask: RawAsk | null;
}

/** The index's slot of a request text: FNV-1a of its four parts in turn (the same query in JSON and in CSV are two texts). */
function askSlot(path: string, query: string, accept: string, acceptEncoding: string): number {
  return fnvRun(acceptEncoding, fnvRun(accept, fnvRun(query, fnvRun(path, FNV_OFFSET))));
}

/**
 * Response-cache entries by the exact text of a request that was answered from them: the
 * path, the raw query and the Accept and Accept-Encoding headers, as sent. The same text asks
 * for the same answer of one generation (parsing, negotiation and normalisation are functions
 * of it and of the generation's table), so a request found here needs none of them. One
 * entry per slot of the text's hash: a text that collides with another, or a second text
 * of the same answer (parameters in another order), is simply not found and goes the whole
 * way. Nothing is allocated per request: an entry's RawAsk is made once and refilled.
 */
export class AskIndex<E extends Asked> {
  private readonly bySlot = new Map<number, E>();

  /** Files `entry` under this request text (in place of what it was filed under before). */
  remember(entry: E, path: string, query: string, accept: string, acceptEncoding: string): void {
    const slot = askSlot(path, query, accept, acceptEncoding);
    let ask = entry.ask;
    if (ask === null) {
      ask = { path, query, accept, acceptEncoding, slot };
      entry.ask = ask;
    } else {
      this.forget(entry);
      ask.path = path;
      ask.query = query;
      ask.accept = accept;
      ask.acceptEncoding = acceptEncoding;
      ask.slot = slot;
    }
    this.bySlot.set(slot, entry);
  }

  /** The entry last answering exactly this request text, or undefined. */
  recall(path: string, query: string, accept: string, acceptEncoding: string): E | undefined {
    const e = this.bySlot.get(askSlot(path, query, accept, acceptEncoding));
    if (e === undefined) return undefined;
    const a = e.ask!;
    return a.query === query && a.path === path && a.accept === accept && a.acceptEncoding === acceptEncoding ? e : undefined;
  }

  /** Drops `entry` (leaving the cache): its slot, unless another entry has taken it since. */
  forget(entry: E): void {
    const ask = entry.ask;
    if (ask !== null && this.bySlot.get(ask.slot) === entry) this.bySlot.delete(ask.slot);
  }

  get size(): number {
    return this.bySlot.size;
  }
}
