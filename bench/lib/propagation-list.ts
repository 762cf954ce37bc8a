/**
 * What propagation costs a root JSON list (docs/propagation.md): the simulated fleet served in this
 * process, 800 deployments in a namespace with bindings (200 templates, each propagated to three members)
 * and the same 800 without, listed in turn. `npx tsx bench/lib/propagation-list.ts`; indicative only (the
 * simulated clusters serve from the same process).
 */
import { startSimFleet } from '../../deploy/node/demo.ts';
import { startNodeFleet } from '../../deploy/node/server.ts';
import { propagate } from '../../sim/index.ts';
import { parseConfig } from '../../src/config/schema.ts';

const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const PP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'propagationpolicies' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const s = await startSimFleet();
const k = s.karmada;
for (const c of [k, ...s.members.values()])
  c.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } } as never);
for (let i = 0; i < 200; i++) {
  const name = `web-${i}`;
  k.create(DEPLOY, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'bench', labels: { app: name }, generation: 1 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  } as never);
  k.create(PP, {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name, namespace: 'bench' },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }],
      placement: { clusterAffinity: { clusterNames: ['member1', 'member2', 'member3'] } },
    },
  } as never);
}
propagate(k);
const f = await startNodeFleet({ config: parseConfig(s.karmadaConfig()) });
const plainNs = 'plain';
for (const c of [k, ...s.members.values()])
  c.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: plainNs } } as never);
for (let i = 0; i < 200; i++) {
  const name = `web-${i}`;
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: plainNs, labels: { app: name }, generation: 1 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  } as never;
  for (const c of [k, ...s.members.values()]) c.create(DEPLOY, structuredClone(d));
}
const time = async (ns: string) => {
  const t0 = performance.now();
  const res = await fetch(`${f.url}/apis/apps/v1/namespaces/${ns}/deployments`, {
    headers: { Accept: 'application/json' },
  });
  const body = await res.arrayBuffer();
  const t = performance.now() - t0;
  if (!res.ok || body.byteLength < 100000)
    throw new Error(`bad ${ns} ${res.status} ${new TextDecoder().decode(body).slice(0, 300)}`);
  return t;
};
const t: Record<string, number[]> = { 'no bindings': [], 'with bindings': [] };
for (let i = 0; i < 5; i++) {
  await time('bench');
  await time(plainNs);
}
for (let i = 0; i < 60; i++) {
  t['no bindings']!.push(await time(plainNs));
  t['with bindings']!.push(await time('bench'));
}
const q = (a: number[], x: number) => [...a].sort((m, n) => m - n)[Math.floor(a.length * x)]!.toFixed(1);
for (const [key, v] of Object.entries(t))
  console.log(`${key}: p50 ${q(v, 0.5)} ms (p25 ${q(v, 0.25)}, p75 ${q(v, 0.75)})`);
await f.stop(100);
await s.close();
process.exit(0);
