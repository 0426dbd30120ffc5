/**
 * HAProxy configurations for the two cluster topologies: every replica behind one
 * round-robin backend, and dataset groups routed by path to their own replica sets.
 *
 * Health checks speak HTTP/1.1 (uWS never answers HTTP/1.0) to /readyz, which turns 503
 * the moment a replica starts draining: with a 250 ms interval and `fall 2` HAProxy stops
 * sending to it well inside the replica's --drain-seconds, before its listeners close.
 * `retry-on conn-failure empty-response` is the usual setting for idempotent GETs; the
 * test reports how often it was used (wretr / wredis), so it cannot hide a broken drain.
 */

export interface Server {
  readonly name: string;
  readonly port: number;
}

export interface Backend {
  readonly name: string;
  readonly servers: readonly Server[];
  /** Path prefixes routed here (`/gbsi_us/`); empty: the default backend. */
  readonly pathPrefixes: readonly string[];
}

export function haproxyConfig(listenPort: number, statsSocket: string, backends: readonly Backend[]): string {
  const routed = backends.filter((b) => b.pathPrefixes.length > 0);
  const fallback = backends.filter((b) => b.pathPrefixes.length === 0);
  if (fallback.length !== 1) throw new Error('haproxy config: exactly one backend without path prefixes (the default)');
  const lines = [
    'global',
    '  maxconn 4096',
    `  stats socket ${statsSocket} mode 600 level admin`,
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 10s',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '',
    'frontend api',
    `  bind 127.0.0.1:${listenPort}`,
    ...routed.flatMap((b) => [`  acl path_${b.name} path_beg ${b.pathPrefixes.join(' ')}`, `  use_backend ${b.name} if path_${b.name}`]),
    `  default_backend ${fallback[0]!.name}`,
    '',
  ];
  for (const b of backends) {
    lines.push(
      `backend ${b.name}`,
      '  balance roundrobin',
      '  option httpchk',
      '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host pitcache',
      '  http-check expect status 200',
      '  default-server inter 250ms fastinter 250ms downinter 250ms fall 2 rise 2',
      ...b.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check`),
      '',
    );
  }
  return lines.join('\n');
}
