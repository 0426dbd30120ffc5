/**
 * deploy/kubernetes (issue 10.5): every manifest of the base and of the example overlay, as
 * kustomize would build it, validates against the Kubernetes schemas (kubernetes-models,
 * generated from the Kubernetes OpenAPI), and says what the server needs: probes on
 * /healthz and /readyz, a grace period above the drain, non-root with a read-only root,
 * keys from a Secret, no S3 credentials (the pod's identity), scrape annotations on the
 * metrics port, an environment the server's own option parser accepts. No container engine
 * runs here, so the Dockerfile is checked by running its commands: the build stage's
 * build, the final stage's `npm ci --omit=dev`, and its entrypoint as a non-root user,
 * which must serve.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { parseServeConfig } from '../src/config/serve-config.js';

const root = new URL('..', import.meta.url).pathname;
const K = join(root, 'deploy/kubernetes');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const MODELS: Record<string, new (o: Obj) => { validate(): void }> = {
  Deployment,
  Service,
  ServiceAccount,
  PodDisruptionBudget,
  HorizontalPodAutoscaler,
  Ingress,
};

async function load(path: string): Promise<Obj> {
  return yaml.load(await readFile(path, 'utf8')) as Obj;
}

/** Strategic merge as kustomize applies it to these kinds: maps merge, lists of named objects merge by name. */
function merge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((p) => typeof p === 'object' && p !== null && 'name' in p)) {
    const out = base.map((b) => ({ ...b }));
    for (const p of patch as Obj[]) {
      const i = out.findIndex((b) => b.name === p.name);
      if (i < 0) out.push(p);
      else out[i] = merge(out[i], p) as Obj;
    }
    return out;
  }
  if (typeof base === 'object' && base !== null && !Array.isArray(base) && typeof patch === 'object' && patch !== null && !Array.isArray(patch)) {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in out ? merge(out[k], v) : v;
    return out;
  }
  return patch;
}

/** The overlay built the way kustomize builds it, for the features the overlay uses. */
async function build(dir: string): Promise<Obj[]> {
  const k = await load(join(dir, 'kustomization.yaml'));
  let objects: Obj[] = [];
  for (const r of k.resources as string[]) {
    if (r.endsWith('.yaml')) objects.push(await load(join(dir, r)));
    else objects.push(...(await build(join(dir, r))));
  }
  for (const p of (k.patches ?? []) as Array<{ path: string }>) {
    const patch = await load(join(dir, p.path));
    objects = objects.map((o) => (o.kind === patch.kind && o.metadata.name === patch.metadata.name ? (merge(o, patch) as Obj) : o));
  }
  for (const r of (k.replicas ?? []) as Array<{ name: string; count: number }>) {
    for (const o of objects) if (o.kind === 'Deployment' && o.metadata.name === r.name) o.spec.replicas = r.count;
  }
  for (const img of (k.images ?? []) as Array<{ name: string; newName?: string; newTag?: string }>) {
    for (const o of objects.filter((x) => x.kind === 'Deployment')) {
      for (const c of o.spec.template.spec.containers as Obj[]) {
        if (c.image.split(':')[0] === img.name) c.image = `${img.newName ?? img.name}:${img.newTag ?? c.image.split(':')[1]}`;
      }
    }
  }
  for (const { pairs, includeSelectors } of (k.labels ?? []) as Array<{ pairs: Record<string, string>; includeSelectors?: boolean }>) {
    for (const o of objects) {
      o.metadata.labels = { ...o.metadata.labels, ...pairs };
      if (!includeSelectors) continue;
      if (o.kind === 'Deployment') {
        o.spec.selector.matchLabels = { ...o.spec.selector.matchLabels, ...pairs };
        o.spec.template.metadata.labels = { ...o.spec.template.metadata.labels, ...pairs };
      }
      if (o.kind === 'Service') o.spec.selector = { ...o.spec.selector, ...pairs };
      if (o.kind === 'PodDisruptionBudget') o.spec.selector.matchLabels = { ...o.spec.selector.matchLabels, ...pairs };
    }
  }
  if (k.namePrefix !== undefined) {
    const renamed = new Set(objects.map((o) => o.metadata.name as string));
    for (const o of objects) {
      o.metadata.name = k.namePrefix + o.metadata.name;
      // name references kustomize rewrites with the prefix
      if (o.kind === 'HorizontalPodAutoscaler') o.spec.scaleTargetRef.name = k.namePrefix + o.spec.scaleTargetRef.name;
      if (o.kind === 'Deployment' && renamed.has(o.spec.template.spec.serviceAccountName)) {
        o.spec.template.spec.serviceAccountName = k.namePrefix + o.spec.template.spec.serviceAccountName;
      }
    }
  }
  if (k.namespace !== undefined) for (const o of objects) o.metadata.namespace = k.namespace;
  return objects;
}

function check(objects: Obj[], prefix: string): void {
  for (const o of objects) {
    const Model = MODELS[o.kind as string];
    expect(Model, `${o.kind} has a schema here`).toBeDefined();
    expect(() => new Model!(o).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
  }
  const one = (kind: string): Obj => objects.find((o) => o.kind === kind)!;
  const dep = one('Deployment');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  const env = Object.fromEntries(
    (c.env as Obj[]).map((e) => [e.name, e.value ?? (e.valueFrom?.resourceFieldRef?.resource === 'limits.cpu' ? c.resources.limits.cpu : undefined)]),
  );

  expect(c.readinessProbe.httpGet.path).toBe('/readyz');
  expect(c.livenessProbe.httpGet.path).toBe('/healthz');
  expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number(env.PITCACHE_DRAIN_SECONDS) + 10);
  expect(pod.securityContext.runAsNonRoot).toBe(true);
  expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
  // every path the server writes is a volume
  const mounts = (c.volumeMounts as Obj[]).map((m) => m.mountPath as string);
  expect(mounts).toContain(env.PITCACHE_CACHE_DIR);
  // keys from a Secret, at the path the server reads
  const keysMount = (c.volumeMounts as Obj[]).find((m) => (env.PITCACHE_KEYS as string).startsWith(m.mountPath))!;
  expect((pod.volumes as Obj[]).find((v) => v.name === keysMount.name)!.secret.secretName).toBe('pitcache-keys');
  // S3 from the pod's identity: no credentials in the environment
  expect(Object.keys(env).filter((k) => k.startsWith('AWS_'))).toEqual([]);
  expect(pod.serviceAccountName).toBe(one('ServiceAccount').metadata.name);
  // the server's own parser accepts the environment as given
  const parsed = parseServeConfig([], env);
  expect(parsed, parsed.ok ? '' : parsed.message).toMatchObject({ ok: true });
  // scraped on the metrics port, which the container exposes
  const ann = dep.spec.template.metadata.annotations;
  expect([ann['prometheus.io/scrape'], ann['prometheus.io/port'], ann['prometheus.io/path']]).toEqual(['true', env.PITCACHE_METRICS_PORT, '/metrics']);
  expect((c.ports as Obj[]).map((p) => String(p.containerPort))).toEqual(expect.arrayContaining([env.PITCACHE_PORT, env.PITCACHE_METRICS_PORT]));
  // Service, PDB and HPA point at these pods and this Deployment
  const labels = dep.spec.template.metadata.labels;
  for (const sel of [one('Service').spec.selector, one('PodDisruptionBudget').spec.selector.matchLabels]) {
    for (const [k, v] of Object.entries(sel as Record<string, string>)) expect(labels[k], k).toBe(v);
  }
  expect(dep.spec.selector.matchLabels).toEqual(expect.objectContaining(one('Service').spec.selector));
  expect(one('HorizontalPodAutoscaler').spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: `${prefix}pitcache` });
}

describe('deploy/kubernetes', () => {
  it('the base validates and holds together', async () => {
    const base = await build(join(K, 'base'));
    expect(base.map((o) => o.kind).sort()).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service', 'ServiceAccount']);
    check(base, '');
  });

  it('the example overlay (a path-routed shard) builds, validates and holds together', async () => {
    const built = await build(join(K, 'overlays/example'));
    check(built, 'gas-');
    const dep = built.find((o) => o.kind === 'Deployment')!;
    expect(dep.metadata).toMatchObject({ name: 'gas-pitcache', namespace: 'pitcache' });
    expect(dep.spec.template.spec.containers[0].image).toBe('registry.example.com/pitcache:0.1.0');
    const env = Object.fromEntries((dep.spec.template.spec.containers[0].env as Obj[]).map((e) => [e.name, e.value]));
    expect(env.PITCACHE_DATASETS).toBe('gbsi_us/*,gbsi_eu/*');
    // the Ingress routes exactly the shard's products to the shard's Service
    const ing = built.find((o) => o.kind === 'Ingress')!;
    const svc = built.find((o) => o.kind === 'Service')!;
    const paths = ing.spec.rules[0].http.paths as Obj[];
    expect(paths.map((p) => p.path)).toEqual(['/gbsi_us/', '/gbsi_eu/']);
    for (const p of paths) expect(p.backend.service).toEqual({ name: svc.metadata.name, port: { name: 'http' } });
    expect(built.find((o) => o.kind === 'ServiceAccount')!.metadata.annotations['eks.amazonaws.com/role-arn']).toMatch(/^arn:aws:iam::/);
  });

  it("memory requests and limits are the README's sizing rule for the data each names", async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const factor = Number(/estimate \*\*([\d.]+) bytes of memory per byte of Arrow\*\*/.exec(readme)![1]);
    const processMiB = Number(/- \*\*request\*\* = the sum of `bytes` \+[^;]*\+ (\d+) MiB;/.exec(readme)![1]);
    const mib = (q: string): number => {
      const m = /^(\d+(?:\.\d+)?)(Mi|Gi)$/.exec(q)!;
      return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
    };
    for (const [dir, file] of [
      ['base', 'base/deployment.yaml'],
      ['overlays/example', 'overlays/example/deployment-patch.yaml'],
    ] as const) {
      const text = await readFile(join(K, file), 'utf8');
      const named = /([\d.]+) GiB of Arrow, (?:the largest|no dataset over) ([\d.]+) GiB/.exec(text);
      expect(named, `${file} names the data it is sized for`).not.toBeNull();
      const [live, largest] = [Number(named![1]) * 1024 * factor, Number(named![2]) * 1024 * factor];
      const c = (await build(join(K, dir))).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
      const env = Object.fromEntries((c.env as Obj[]).map((e) => [e.name, e.value]));
      const config = parseServeConfig([], env);
      if (!config.ok) throw new Error(config.message);
      const caches = (config.config.responseCacheBytes + config.config.rowCacheBytes + config.config.pageCacheBytes) / 2 ** 20;
      expect(env.PITCACHE_RETAIN_MEMORY, 'the default retention (25% of live, never below the largest)').toBeUndefined();
      const request = live + caches + processMiB;
      const limit = request + largest + Math.max(0.25 * live, largest);
      // At least the rule, and no more than 10% above it.
      for (const [what, got, want] of [
        ['request', mib(c.resources.requests.memory), request],
        ['limit', mib(c.resources.limits.memory), limit],
      ] as const) {
        expect(got, `${file} ${what}`).toBeGreaterThanOrEqual(want);
        expect(got, `${file} ${what}`).toBeLessThanOrEqual(want * 1.1);
      }
    }
  });

  it('every file of the overlays and the base is used', async () => {
    for (const dir of ['base', 'overlays/example']) {
      const k = await load(join(K, dir, 'kustomization.yaml'));
      const named = new Set([...(k.resources ?? []), ...((k.patches ?? []) as Array<{ path: string }>).map((p) => p.path)]);
      for (const f of await readdir(join(K, dir))) if (f !== 'kustomization.yaml') expect(named.has(f), `${dir}/${f}`).toBe(true);
    }
  });
});

describe('Dockerfile', () => {
  it('its build, production install and entrypoint give a server that answers, as a non-root user', async () => {
    const text = await readFile(join(root, 'Dockerfile'), 'utf8');
    const stages = text.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    expect(stages.every((s) => s.startsWith('node:20'))).toBe(true);
    const final = stages[1]!;
    const runs = [...final.matchAll(/^RUN (.+)$/gm)].map((m) => m[1]!);
    expect(runs.some((r) => r.includes('npm ci --omit=dev'))).toBe(true);
    const user = /^USER (\d+):(\d+)$/m.exec(final);
    expect(user).not.toBeNull();
    const entry = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(final)![1]!) as string[];
    const cmd = JSON.parse(/^CMD (.+)$/m.exec(final)![1]!) as string[];

    const dir = await mkdtemp(join(tmpdir(), 'pitcache-docker-'));
    try {
      // Build stage: the image's `npm ci` installs the same dev toolchain this checkout has, so it is linked rather than downloaded.
      const build = join(dir, 'build');
      await cp(root, build, {
        recursive: true,
        filter: (p) => !/\/(node_modules|dist|\.git|\.demo-data|bench|reports|\.stryker-tmp)(\/|$)/.test(p.slice(root.length - 1)),
      });
      await symlink(join(root, 'node_modules'), join(build, 'node_modules'));
      for (const r of [...stages[0]!.matchAll(/^RUN (.+)$/gm)].map((m) => m[1]!).filter((r) => r !== 'npm ci')) {
        const b = spawnSync('sh', ['-c', r], { cwd: build, encoding: 'utf8' });
        expect(b.status, `${r}: ${b.stdout}${b.stderr}`).toBe(0);
      }
      // Final stage: its own RUN lines on package.json and the lock alone, then dist from the build.
      const app = join(dir, 'app');
      await cp(join(root, 'package.json'), join(app, 'package.json'));
      await cp(join(root, 'package-lock.json'), join(app, 'package-lock.json'));
      for (const r of runs) {
        // A cache of its own, as an image build has: the stage ends with `npm cache clean --force`,
        // which must not empty the cache other npm processes of this machine are using.
        const env = { ...process.env, NODE_ENV: 'production', npm_config_cache: join(dir, 'npm-cache') };
        const b = spawnSync('sh', ['-c', r], { cwd: app, encoding: 'utf8', env });
        expect(b.status, `${r}: ${b.stdout}${b.stderr}`).toBe(0);
      }
      await cp(join(build, 'dist'), join(app, 'dist'), { recursive: true });
      // mkdtemp makes a 0700 directory: the image's user must be able to reach its WORKDIR.
      await chmod(dir, 0o755);
      await chmod(app, 0o777);
      // The entrypoint and command of the image, as its user, serving the demo data.
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const child = spawn(
        entry[0] === 'node' ? process.execPath : entry[0]!,
        [...entry.slice(1), ...cmd, '--demo', '--port', String(port), '--drain-seconds', '0'],
        {
          cwd: app,
          uid: Number(user![1]),
          gid: Number(user![2]),
          env: { PATH: process.env.PATH, NODE_ENV: 'production' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise((r) => {
        child.once('exit', r);
        child.once('error', r);
      });
      try {
        let ready = 0;
        for (let i = 0; i < 300 && ready !== 200 && child.exitCode === null; i++) {
          ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (r) => r.status,
            () => 0,
          );
          if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
        }
        expect(ready, stderr).toBe(200);
        const data = await fetch(`http://127.0.0.1:${port}/pemi/grid_stress?format=arrow`, { headers: { 'x-api-key': 'pitcache-demo-key' } });
        expect(data.status).toBe(200);
        expect(data.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
