/**
 * The Helm chart (deploy/helm/fleet-apiserver) with the real Helm 4 binary: it lints, renders what each
 * values file asks for, writes a fleet.yaml the fleet itself accepts, and its manifests pass a simulated
 * cluster's server-side dry run (kubectl apply --dry-run=server through the fleet's /clusterspaces/member1).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { ensureHelm } from '../../scripts/kubectl.mjs';
import { parseConfig } from '../../src/config/schema.ts';
import { type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

const CHART = 'deploy/helm/fleet-apiserver';
const DEFAULTS = `${CHART}/ci/default-values.yaml`;
const FULL = `${CHART}/ci/full-values.yaml`;

let helm: string;
function runHelm(args: string[]) {
  const r = spawnSync(helm, args, {
    encoding: 'utf8',
    env: { ...process.env, HELM_CACHE_HOME: tmp('cache') },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function tmp(name: string) {
  return join(mkdtempSync(join(tmpdir(), 'fleet-helm-')), name);
}
type Doc = { kind: string; metadata: { name: string; [k: string]: any }; [k: string]: any };
function render(...args: string[]): Doc[] {
  const r = runHelm(['template', 'fleet', CHART, '--namespace', 'karmada-system', ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Doc)
    .filter(Boolean);
}
const byKind = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
const fleetYaml = (docs: Doc[]) => byKind(docs, 'ConfigMap')[0]!.data['fleet.yaml'] as string;

beforeAll(() => {
  helm = ensureHelm();
});

describe('the Helm chart', () => {
  it('lints, with the defaults and with every option on', () => {
    for (const values of [DEFAULTS, FULL]) {
      const r = runHelm(['lint', CHART, '--strict', '-f', values]);
      expect(r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.code).toBe(0);
    }
  });

  it('refuses to render without an authenticator, naming the value to set', () => {
    const r = runHelm(['template', 'fleet', CHART]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('config.authentication: configure at least one authenticator');
  });

  it('renders the defaults: Deployment, Service, ConfigMap, ServiceAccount, PodDisruptionBudget', () => {
    const docs = render('-f', DEFAULTS);
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'Service',
      'ServiceAccount',
    ]);
    const deploy = byKind(docs, 'Deployment')[0]!;
    expect(deploy.spec.replicas).toBe(2);
    const pod = deploy.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    const c = pod.containers[0];
    expect(c.args).toEqual(['--config', '/etc/fleet/fleet.yaml']);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'api', scheme: 'HTTP' });
    expect(c.livenessProbe.httpGet.path).toBe('/livez');
    expect(c.ports[0].containerPort).toBe(8080);
    // Karmada's own kubeconfig Secret, mounted where fleet.yaml points
    const karmada = pod.volumes.find((v: any) => v.name === 'karmada');
    expect(karmada.secret).toEqual({
      secretName: 'karmada-kubeconfig',
      items: [{ key: 'kubeconfig', path: 'kubeconfig' }],
    });
    // the configuration is one the fleet accepts as it is
    const cfg = parseConfig(parseAllDocuments(fleetYaml(docs))[0]!.toJS());
    expect(cfg.controlPlane).toMatchObject({ kubeconfig: { path: '/etc/karmada/kubeconfig' } });
    expect(cfg.members.mode).toBe('karmada');
    // a changed configuration rolls the pods
    expect(deploy.spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(byKind(docs, 'PodDisruptionBudget')[0]!.spec.minAvailable).toBe(1);
  });

  it('renders every option: TLS, ServiceMonitor, NetworkPolicy, maxUnavailable, extra volumes', () => {
    const docs = render('-f', FULL);
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
    const c = byKind(docs, 'Deployment')[0]!.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.scheme).toBe('HTTPS');
    expect(c.ports[0].containerPort).toBe(8443);
    const cfg = parseConfig(parseAllDocuments(fleetYaml(docs))[0]!.toJS());
    expect(cfg.serving).toMatchObject({
      certFile: '/etc/fleet/tls/tls.crt',
      keyFile: '/etc/fleet/tls/tls.key',
    });
    const sm = byKind(docs, 'ServiceMonitor')[0]!;
    expect(sm.spec.endpoints[0]).toMatchObject({ path: '/metrics', scheme: 'https', port: 'api' });
    expect(sm.metadata.labels.release).toBe('prometheus');
    const np = byKind(docs, 'NetworkPolicy')[0]!;
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(byKind(docs, 'PodDisruptionBudget')[0]!.spec).toMatchObject({ maxUnavailable: 1 });
    expect(byKind(docs, 'PodDisruptionBudget')[0]!.spec.minAvailable).toBeUndefined();
  });

  it('runs one worker process per requested CPU, or the number `workers` sets', () => {
    const envOf = (...args: string[]) =>
      byKind(render('-f', DEFAULTS, ...args), 'Deployment')[0]!.spec.template.spec.containers[0].env;
    const workers = (env: any[]) => env.find((e) => e.name === 'FLEET_WORKERS');
    expect(workers(envOf())).toEqual({
      name: 'FLEET_WORKERS',
      valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1' } },
    });
    expect(workers(envOf('--set', 'workers=3'))).toEqual({ name: 'FLEET_WORKERS', value: '3' });
    expect(workers(envOf('--set', 'workers=auto'))).toEqual({ name: 'FLEET_WORKERS', value: 'auto' });
    // no CPU request and no number: the fleet's own default (one per usable CPU)
    expect(workers(envOf('--set', 'resources.requests=null'))).toBeUndefined();
  });

  it('a changed configuration changes the pods’ checksum', () => {
    const a = byKind(render('-f', DEFAULTS), 'Deployment')[0]!;
    const b = byKind(render('-f', DEFAULTS, '--set', 'config.strict=true'), 'Deployment')[0]!;
    expect(a.spec.template.metadata.annotations['checksum/config']).not.toBe(
      b.spec.template.metadata.annotations['checksum/config'],
    );
  });
});

describe('the rendered chart against a simulated cluster (kubectl apply --dry-run=server)', () => {
  let sims: ServedSimFleet;
  let fleet: RunningFleet;
  let k: Kubectl;
  beforeAll(async () => {
    sims = await startSimFleet();
    fleet = await startFleet('node', sims.karmadaConfig());
    k = new Kubectl(`${fleet.url}/clusterspaces/member1`);
  });
  afterAll(async () => {
    await fleet?.stop();
    await sims?.close();
  });

  for (const [name, values] of [
    ['defaults', DEFAULTS],
    ['every option', FULL],
  ] as const) {
    it(`${name}: every manifest passes the cluster's validation`, async () => {
      // the ServiceMonitor's CRD (Prometheus Operator) is not installed in the simulated cluster
      const docs = render('-f', values, '--namespace', 'default').filter((d) => d.kind !== 'ServiceMonitor');
      const file = tmp('chart.yaml');
      // a YAML stream, as `helm template … | kubectl apply -f -` hands it over
      writeFileSync(file, docs.map((d) => stringify(d)).join('---\n'));
      const r = await k.run(['apply', '--dry-run=server', '--validate=strict', '-f', file]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(docs.length);
      for (const l of lines) expect(l).toMatch(/\/fleet-fleet-apiserver created \(server dry run\)$/);
    });
  }
});
