import type { DatasetRegistry } from '../generations/dataset-registry.js';

/** Bodies of /healthz and /readyz. Cold paths: JSON.stringify is fine here. */
export function healthBody(): Uint8Array {
  return Buffer.from('{"status":"ok"}');
}

/**
 * `ready` is false while loading and again once draining (SIGTERM). /readyz answers without
 * a key, so it says each dataset's state and what it serves, never why a load failed: that
 * text names buckets, endpoints and paths. The reason is behind an admin key, in
 * /admin/status (`last_error`).
 */
export function readinessBody(registry: DatasetRegistry): Uint8Array {
  return Buffer.from(
    JSON.stringify({
      ready: registry.readyForTraffic,
      datasets: registry.slots.map((s) => ({
        dataset: s.id,
        state: s.state,
        generation: s.current?.number ?? null,
        rows: s.current?.table.rows ?? null,
      })),
    }),
  );
}
