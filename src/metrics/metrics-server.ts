import type { HttpResponse } from '../http/types.js';
import { listen, type UwsServer } from '../http/uws-server.js';
import { PROMETHEUS_CONTENT_TYPE } from './aggregate.js';

/**
 * `--metrics-port`: GET /metrics without a key, for in-cluster scrapers (Prometheus's
 * scrape config cannot send our x-api-key header). Nothing else is served there, so the
 * port exposes no data; bind it where only the cluster reaches it.
 */
export function listenMetrics(host: string, port: number, collect: () => Promise<string>, newRequestId: () => string): Promise<UwsServer> {
  const plain = (status: number, text: string, contentType = 'text/plain; charset=utf-8'): HttpResponse => ({
    status,
    headers: status === 405 ? [['allow', 'GET, HEAD']] : [],
    contentType,
    requestId: newRequestId(),
    body: Buffer.from(text),
  });
  return listen(
    async (req) => {
      if (req.path !== '/metrics') return plain(404, 'only /metrics is served on this port\n');
      if (req.method !== 'GET' && req.method !== 'HEAD') return plain(405, 'use GET\n');
      return plain(200, await collect(), PROMETHEUS_CONTENT_TYPE);
    },
    { host, port },
  );
}
