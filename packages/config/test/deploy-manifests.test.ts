import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../src/index.ts';

// The deployment files (docker-compose.yml, .env.example, infra/k8s/) against what the apps read:
// every variable they set is one this package (or the agent) knows, the settings they give an
// app load as a valid configuration, and the Kubernetes manifests are well-formed objects of
// known kinds with the security settings the images are built for (docs/deploy.md). No cluster
// or schema download is needed (CI has neither): the structure is checked here.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** Every environment variable name the config package reads (its sources, not its tests). */
function configVocabulary(): Set<string> {
  const dir = join(ROOT, 'packages/config/src');
  const names = new Set<string>();
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')))
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/'((?:SVC|DATABASE|REDIS)_[A-Z0-9_]+)'/g)) names.add(m[1] as string);
  return names;
}
const OAUTH =
  /^SVC_(AUTH|PORTAL)_OAUTH_[A-Z0-9_]+_(CLIENT_ID|CLIENT_SECRET|ISSUER|AUTHORIZATION_ENDPOINT|TOKEN_ENDPOINT|USERINFO_ENDPOINT)$/;
const AGENT = new Set(
  readdirSync(join(ROOT, 'apps/agent/src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .flatMap((f) =>
      [...readFileSync(join(ROOT, 'apps/agent/src', f), 'utf8').matchAll(/\b(SVC_AGENT_[A-Z0-9_]+)\b/g)].map((m) => m[1] as string),
    ),
);
const known = configVocabulary();
const isAppVar = (name: string) => known.has(name) || OAUTH.test(name);

/** Values a secret placeholder stands for in a test: valid ones, so loadConfig judges the rest. */
const secretSamples = (): Record<string, string> => ({
  SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
  DATABASE_URL: 'postgres://svc:pw@postgres:5432/svc',
  REDIS_URL: 'redis://redis:6379',
  SVC_METRICS_TOKEN: 'a'.repeat(32),
  SVC_SMTP_URL: 'smtp://user:pw@smtp.example.com:587',
  POSTGRES_PASSWORD: 'pw',
});

/** Compose's ${NAME}, ${NAME:-default}, ${NAME:?message} with the given variables. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::?([-?])((?:[^}]|\}(?!\}))*?))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== '') return v;
    if (op === '?') throw new Error(`\${${name}} is required: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

describe('docker-compose.yml and .env.example', () => {
  const compose = parseAllDocuments(read('docker-compose.yml'), { merge: true })[0]?.toJS({ maxAliasCount: 1000 }) as Obj;
  const services = asObj(compose.services);
  const exampleVars = new Map(
    read('.env.example')
      .split('\n')
      .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );

  it('every variable the compose file interpolates is in .env.example, and .env.example lists nothing else', () => {
    const used = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1] as string));
    expect([...used].filter((v) => !exampleVars.has(v))).toEqual([]);
    expect([...exampleVars.keys()].filter((v) => !used.has(v))).toEqual([]);
  });

  it('every variable a service sets is one its app reads', () => {
    const unknown: string[] = [];
    for (const [name, svc] of Object.entries(services)) {
      const env = Object.keys(asObj(asObj(svc).environment));
      const image = String(asObj(svc).image ?? '');
      if (!image.startsWith('svc')) continue; // postgres, redis, haproxy: their own images' variables
      for (const v of env) if (!(image.startsWith('svc-agent') ? AGENT.has(v) : isAppVar(v))) unknown.push(`${name}: ${v}`);
    }
    expect(unknown).toEqual([]);
  });

  it("each app's environment, with .env.example's values and valid secrets, is a valid configuration", () => {
    const vars = { ...Object.fromEntries(exampleVars), ...secretSamples() };
    for (const [name, svc] of Object.entries(services)) {
      if (!String(asObj(svc).image ?? '').match(/^svc(-admin-api|-portal-api|-worker|-control-plane)?:/)) continue;
      const env = Object.fromEntries(
        Object.entries(asObj(asObj(svc).environment)).map(([k, v]) => [k, interpolate(String(v ?? ''), vars)]),
      );
      expect(() => loadConfig(env), name).not.toThrow();
    }
  });

  it('runs every app read-only, without capabilities, healthy only after its dependencies, and two gateway replicas behind the TCP balancer', () => {
    const apps = ['migrate', 'admin-api', 'portal-api', 'worker', 'control-plane-1', 'control-plane-2'];
    for (const name of apps) {
      const svc = asObj(services[name]);
      expect(svc.read_only, name).toBe(true);
      expect(svc.cap_drop, name).toEqual(['ALL']);
      expect(asObj(asObj(svc.depends_on).postgres).condition, name).toBe('service_healthy');
      if (name !== 'migrate') expect(asObj(asObj(svc.depends_on).migrate).condition, name).toBe('service_completed_successfully');
    }
    const haproxy = read('infra/compose/haproxy.cfg');
    expect(haproxy).toMatch(/^\s*mode tcp$/m);
    for (const replica of ['control-plane-1', 'control-plane-2']) {
      expect(haproxy).toContain(`server ${replica} ${replica}:8443`);
      expect(asObj(asObj(services.gateway).depends_on)[replica]).toEqual({ condition: 'service_healthy' });
    }
  });
});

describe('infra/k8s', () => {
  const kustomization = parseAllDocuments(read('infra/k8s/kustomization.yaml'))[0]?.toJS() as Obj;
  const files = (kustomization.resources as string[]).map((f) => `infra/k8s/${f}`);
  const docs = files.flatMap((f) =>
    parseAllDocuments(read(f)).map((d, i) => {
      expect(d.errors, `${f} #${i}`).toEqual([]);
      return { where: `${f} #${i}`, obj: d.toJS() as Obj };
    }),
  );
  const KINDS: Record<string, string> = {
    Namespace: 'v1',
    ConfigMap: 'v1',
    Secret: 'v1',
    Service: 'v1',
    PersistentVolumeClaim: 'v1',
    Deployment: 'apps/v1',
    Job: 'batch/v1',
    PodDisruptionBudget: 'policy/v1',
  };
  const ofKind = (kind: string) => docs.filter((d) => d.obj.kind === kind);
  const podSpecs = () =>
    [...ofKind('Deployment'), ...ofKind('Job')].map((d) => ({
      where: d.where,
      name: String(asObj(d.obj.metadata).name),
      spec: asObj(asObj(asObj(d.obj.spec).template).spec),
      obj: d.obj,
    }));

  it('every file of the kustomization is in it, and every object is a known kind at its stable apiVersion with a name', () => {
    const onDisk = readdirSync(join(ROOT, 'infra/k8s')).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !f.endsWith('.example.yaml'),
    );
    expect(onDisk.sort()).toEqual([...(kustomization.resources as string[])].sort());
    for (const { where, obj } of docs) {
      expect(KINDS[String(obj.kind)], `${where}: kind ${obj.kind}`).toBe(obj.apiVersion);
      expect(String(asObj(obj.metadata).name), where).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
  });

  it('every workload runs as non-root on a read-only root filesystem without capabilities, with writable /tmp and /data', () => {
    for (const { where, spec } of podSpecs()) {
      expect(asObj(spec.securityContext).runAsNonRoot, where).toBe(true);
      expect(asObj(spec.securityContext).runAsUser, where).toBe(1000);
      const volumes = new Set((spec.volumes as Obj[]).map((v) => v.name));
      for (const c of spec.containers as Obj[]) {
        const sc = asObj(c.securityContext);
        expect(sc.readOnlyRootFilesystem, where).toBe(true);
        expect(sc.allowPrivilegeEscalation, where).toBe(false);
        expect(asObj(sc.capabilities).drop, where).toEqual(['ALL']);
        const mounts = (c.volumeMounts as Obj[]).map((m) => [m.mountPath, m.name]);
        expect(mounts.map(([p]) => p).sort(), where).toEqual(['/data', '/tmp']);
        for (const [, name] of mounts) expect(volumes.has(name), `${where}: volume ${name}`).toBe(true);
      }
    }
  });

  it('every long-running app has readiness and liveness probes on ports it declares; Deployments select their own pods', () => {
    for (const { where, spec, obj } of podSpecs()) {
      if (obj.kind !== 'Deployment') continue;
      const selector = asObj(asObj(asObj(obj.spec).selector).matchLabels);
      const labels = asObj(asObj(asObj(asObj(obj.spec).template).metadata).labels);
      for (const [k, v] of Object.entries(selector)) expect(labels[k], where).toBe(v);
      for (const c of spec.containers as Obj[]) {
        const ports = new Set((c.ports as Obj[]).map((p) => p.name));
        for (const probe of ['readinessProbe', 'livenessProbe']) {
          const p = asObj(c[probe]);
          expect(Object.keys(p).length, `${where}: ${probe}`).toBeGreaterThan(0);
          const port = asObj(p.httpGet).port ?? asObj(p.tcpSocket).port;
          if (port !== undefined) expect(ports.has(port), `${where}: ${probe} port ${port}`).toBe(true);
        }
      }
    }
  });

  it('the gateway runs two replicas behind a TCP LoadBalancer on 8443 with a PodDisruptionBudget', () => {
    const cp = ofKind('Deployment').find((d) => asObj(d.obj.metadata).name === 'control-plane')?.obj ?? {};
    expect(asObj(cp.spec).replicas).toBe(2);
    const lb = ofKind('Service').find((d) => asObj(d.obj.spec).type === 'LoadBalancer')?.obj ?? {};
    expect(asObj(lb.metadata).name).toBe('control-plane');
    expect(asObj(lb.spec).ports).toEqual([{ name: 'grpc', protocol: 'TCP', port: 8443, targetPort: 'grpc' }]);
    const pdb = ofKind('PodDisruptionBudget').find((d) => asObj(d.obj.metadata).name === 'control-plane')?.obj ?? {};
    expect(asObj(asObj(pdb.spec).selector)).toEqual(asObj(cp.spec).selector);
    // Every Service selects the pods of some workload.
    const podLabels = podSpecs().map((p) => asObj(asObj(asObj(asObj(p.obj.spec).template).metadata).labels));
    for (const { where, obj } of ofKind('Service')) {
      const sel = asObj(asObj(obj.spec).selector);
      expect(
        podLabels.some((l) => Object.entries(sel).every(([k, v]) => l[k] === v)),
        `${where} selects no pods`,
      ).toBe(true);
    }
  });

  it('the ConfigMap, the Secret and literal env set only variables the apps read, and together load as a valid configuration', () => {
    const config = asObj(ofKind('ConfigMap')[0]?.obj.data);
    const secret = parseAllDocuments(read('infra/k8s/secret.example.yaml'))[0]?.toJS() as Obj;
    const secretKeys = Object.keys(asObj(secret.stringData));
    for (const name of [...Object.keys(config), ...secretKeys]) expect(isAppVar(name), name).toBe(true);
    for (const { where, spec } of podSpecs()) {
      const env: Record<string, string> = { ...(config as Record<string, string>), ...secretSamples() };
      for (const c of spec.containers as Obj[]) {
        const refs = (c.envFrom as Obj[]).map((e) => asObj(e.configMapRef).name ?? asObj(e.secretRef).name);
        expect(refs, where).toEqual(['svc-config', 'svc-secrets']);
        for (const e of (c.env as Obj[] | undefined) ?? []) {
          expect(isAppVar(String(e.name)), `${where}: ${e.name}`).toBe(true);
          env[String(e.name)] = String(e.value);
        }
      }
      expect(() => loadConfig(env), where).not.toThrow();
    }
  });
});
