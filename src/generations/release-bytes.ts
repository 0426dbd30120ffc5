import { MessageChannel } from 'node:worker_threads';

/**
 * Frees the memory of snapshot bytes now instead of at some later GC: a gigabyte of Arrow
 * bytes kept until the idle thread happens to collect would count in the server's resident
 * memory long after loading. Moving the buffer into a message that is never delivered
 * detaches it here and drops its memory with the closed channel. Only for bytes that own
 * their whole ArrayBuffer and that nothing will read again; anything else is left to the GC.
 */
export function releaseBytes(bytes: Uint8Array): void {
  const buffer = bytes.buffer;
  if (!(buffer instanceof ArrayBuffer) || bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength || buffer.byteLength === 0) return;
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [buffer]);
  port1.close();
  port2.close();
}
