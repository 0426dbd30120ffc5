/**
 * The shipped deploy/haproxy/haproxy.cfg, filled in the way its header says (the
 * frontend's `bind` port and the backend's `server` lines), for the two cluster topologies:
 * every replica in the one round-robin backend; or dataset groups routed by path (README,
 * "Sharding by dataset"), where the shipped backend section serves as the template of each
 * group's backend and the frontend gains one `acl path_beg` + `use_backend` per group. Every
 * other line (health checks over HTTP/1.1, timing, retries) runs as shipped.
 *
 * The runtime API socket the test reads server states from is a separate file (HAProxy
 * merges `global` sections of several `-f` files), so the shipped file needs no edit for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../bench/lib/paths.js';

export interface Server {
  readonly name: string;
  readonly port: number;
}

export interface Backend {
  /** Path prefixes routed here (`/gbsi_us/`); empty: the shipped default backend. */
  readonly pathPrefixes: readonly string[];
  readonly servers: readonly Server[];
}

/** The backend name the shipped file's frontend sends to by default. */
export const SHIPPED_BACKEND = 'pitcache';
export const SHIPPED_FILE = 'deploy/haproxy/haproxy.cfg';

export function shippedConfig(): string {
  return readFileSync(join(repoRoot(), SHIPPED_FILE), 'utf8');
}

/** The name of a routed group's backend. */
export const backendName = (b: Backend): string =>
  b.pathPrefixes.length === 0 ? SHIPPED_BACKEND : `${SHIPPED_BACKEND}_${b.pathPrefixes[0]!.replace(/\W/g, '')}`;

export function filledConfig(shipped: string, listenPort: number, backends: readonly Backend[]): string {
  const fallback = backends.filter((b) => b.pathPrefixes.length === 0);
  if (fallback.length !== 1) throw new Error('haproxy config: exactly one backend without path prefixes (the default)');
  const bind = /^( +)bind :8080$/m;
  const defaultBackend = new RegExp(`^( +)default_backend ${SHIPPED_BACKEND}$`, 'm');
  const sectionStart = shipped.indexOf(`\nbackend ${SHIPPED_BACKEND}\n`);
  if (!bind.test(shipped) || !defaultBackend.test(shipped) || sectionStart < 0) throw new Error(`${SHIPPED_FILE} no longer has the lines this test fills in`);
  // The backend is the file's last section: from its header to the end.
  const head = shipped.slice(0, sectionStart + 1);
  const template = shipped.slice(sectionStart + 1);
  const servers = /(^ +server \S+ .*\n?)+/m;
  if (!servers.test(template)) throw new Error(`${SHIPPED_FILE}: no server lines in backend ${SHIPPED_BACKEND}`);

  const routes = backends
    .filter((b) => b.pathPrefixes.length > 0)
    .flatMap((b) => [`    acl path_${backendName(b)} path_beg ${b.pathPrefixes.join(' ')}`, `    use_backend ${backendName(b)} if path_${backendName(b)}`]);
  const frontend = head.replace(bind, `$1bind 127.0.0.1:${listenPort}`).replace(defaultBackend, (line) => [...routes, line].join('\n'));
  const sections = backends.map((b) =>
    template
      .replace(`backend ${SHIPPED_BACKEND}\n`, `backend ${backendName(b)}\n`)
      .replace(servers, b.servers.map((s) => `    server ${s.name} 127.0.0.1:${s.port} check\n`).join('')),
  );
  return [frontend, ...sections].join('\n');
}

/** The second configuration file: the runtime API on a unix socket. */
export function statsConfig(socket: string): string {
  return ['global', `    stats socket ${socket} mode 600 level admin`, ''].join('\n');
}
