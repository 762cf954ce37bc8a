/**
 * Writes through the fleet with real kubectl 1.35, on Node and in workerd: the vanilla API at the root URL
 * (fleet names) and the per-cluster prefix `/clusterspaces/member2` (plain names). Every write must land in
 * the owning cluster only, and a direct read of the simulated member must never show a fleet marker.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { inProcessFleet } from '../helpers/inprocess.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };
const MARK = 'fleet.karmada.io/cluster';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function deployment(name: string, image: string, replicas = 1): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: default
  labels: {app: ${name.split('.')[0]}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name.split('.')[0]}}}
  template:
    metadata: {labels: {app: ${name.split('.')[0]}}}
    spec:
      containers: [{name: main, image: "${image}"}]
`;
}

/** Everything a direct read of a member shows about fleet markers and fleet names. */
function expectClean(o: KubeObject | undefined): void {
  expect(o).toBeDefined();
  const md = o!.metadata as Record<string, any>;
  expect(md.labels?.[MARK]).toBeUndefined();
  expect(md.annotations?.[MARK]).toBeUndefined();
  expect(md.name).not.toContain('.clusterspace.');
  const applied = md.annotations?.[LAST_APPLIED];
  if (applied) {
    expect(applied).not.toContain(MARK);
    expect(applied).not.toContain('.clusterspace.');
  }
}

// ---------------------------------------------------------------------------------------------- protobuf
// A ConfigMap encoded by hand from k8s.io/api core/v1 and apimachinery meta/v1 generated.proto:
//   runtime.Unknown { TypeMeta typeMeta = 1 {apiVersion = 1, kind = 2}; bytes raw = 2 }
//   ConfigMap { ObjectMeta metadata = 1; map<string,string> data = 2 }
//   ObjectMeta { name = 1; namespace = 3; map<string,string> labels = 11; annotations = 12 }
/**
 * One request on a connection of its own, answered as soon as the response head and body arrive, even if
 * the server stopped reading the request body (a refused oversized body is never read to the end).
 */
function rawRequest(url: string, method: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method, agent: false, headers: { 'Content-Type': 'application/json' } });
    r.on('response', (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text });
        r.destroy();
      });
    });
    r.on('error', (e) => {
      // the server may close the connection while the rest of the body is still being written
      if (
        !(e as NodeJS.ErrnoException).code?.startsWith('EPIPE') &&
        (e as NodeJS.ErrnoException).code !== 'ECONNRESET'
      )
        reject(e);
    });
    r.end(body);
  });
}

const te = new TextEncoder();
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
function field(num: number, value: Uint8Array | string): number[] {
  const b = typeof value === 'string' ? te.encode(value) : value;
  return [...varint((num << 3) | 2), ...varint(b.length), ...b];
}
function entry(num: number, k: string, v: string): number[] {
  return field(num, new Uint8Array([...field(1, k), ...field(2, v)]));
}
function protobufConfigMap(
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
): Uint8Array {
  const meta = new Uint8Array([
    ...field(1, name),
    ...field(3, 'default'),
    ...Object.entries(labels).flatMap(([k, v]) => entry(11, k, v)),
  ]);
  const raw = new Uint8Array([
    ...field(1, meta),
    ...Object.entries(data).flatMap(([k, v]) => entry(2, k, v)),
  ]);
  const typeMeta = new Uint8Array([...field(1, 'v1'), ...field(2, 'ConfigMap')]);
  return new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...field(1, typeMeta), ...field(2, raw)]);
}

describe.each(RUNTIMES)('fleet writes on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;
  let k2: Kubectl;
  let m2: SimCluster;
  let others: SimCluster[];
  let editor: string;

  beforeAll(() => {
    k = f.kubectl();
    k2 = f.kubectl('/clusterspaces/member2');
    m2 = f.member('member2');
    others = [f.sims.karmada, f.member('member1'), f.member('member3')];
    const dir = mkdtempSync(join(tmpdir(), 'fleet-edit-'));
    editor = join(dir, 'editor.sh');
    // kubectl edit's scripted editor: change the image in the file it is given
    writeFileSync(editor, `#!/bin/sh\nsed -i 's/image: nginx:1.28/image: nginx:1.29/' "$1"\n`);
    chmodSync(editor, 0o755);
  });

  const live = (name: string): any => m2.get(DEPLOY, 'default', name);
  const nowhereElse = (name: string) => {
    for (const s of others) expect(s.get(DEPLOY, 'default', name)).toBeUndefined();
  };

  for (const via of ['root', 'prefix'] as const) {
    // root URL: the fleet name; /clusterspaces/member2: the plain name, like a single-cluster kubeconfig
    const plain = via === 'root' ? 'web' : 'api';
    const name = via === 'root' ? `${plain}.clusterspace.member2` : plain;
    const kc = () => (via === 'root' ? k : k2);
    const file = () => {
      const dir = mkdtempSync(join(tmpdir(), 'fleet-apply-'));
      return (body: string) => {
        const f = join(dir, 'obj.yaml');
        writeFileSync(f, body);
        return f;
      };
    };

    it(`${via}: apply creates in member2 only, apply again patches, --server-side applies`, async () => {
      const write = file();
      const a = await kc().run(['apply', '-f', write(deployment(name, 'nginx:1.27'))]);
      expect(a.stderr).toBe('');
      expect(a.stdout.trim()).toBe(`deployment.apps/${name} created`);
      expect(live(plain)?.spec.template.spec.containers[0].image).toBe('nginx:1.27');
      nowhereElse(plain);
      expectClean(live(plain));

      const b = await kc().run(['apply', '-f', write(deployment(name, 'nginx:1.28'))]);
      expect(b.stdout.trim()).toBe(`deployment.apps/${name} configured`);
      expect(live(plain)?.spec.template.spec.containers[0].image).toBe('nginx:1.28');
      expect(live(plain)?.metadata.managedFields.map((m: any) => m.manager)).toContain(
        'kubectl-client-side-apply',
      );

      const c = await kc().run(['apply', '--server-side', '-f', write(deployment(name, 'nginx:1.28', 2))]);
      expect(c.stderr).toBe('');
      expect(c.stdout.trim()).toBe(`deployment.apps/${name} serverside-applied`);
      expect(live(plain)?.spec.replicas).toBe(2);
      nowhereElse(plain);
      expectClean(live(plain));
    });

    it(`${via}: label, annotate, scale, rollout restart act on member2`, async () => {
      expect((await kc().run(['label', 'deploy', name, 'tier=front'])).stdout.trim()).toBe(
        `deployment.apps/${name} labeled`,
      );
      expect((await kc().run(['annotate', 'deploy', name, 'note=hello'])).stdout.trim()).toBe(
        `deployment.apps/${name} annotated`,
      );
      expect((await kc().run(['scale', 'deploy', name, '--replicas=3'])).stdout.trim()).toBe(
        `deployment.apps/${name} scaled`,
      );
      const r = await kc().run(['rollout', 'restart', 'deploy', name]);
      expect(r.stdout.trim()).toBe(`deployment.apps/${name} restarted`);
      const o = live(plain);
      expect(o.metadata.labels.tier).toBe('front');
      expect(o.metadata.annotations.note).toBe('hello');
      expect(o.spec.replicas).toBe(3);
      expect(o.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBeDefined();
      nowhereElse(plain);
      expectClean(o);
    });

    it(`${via}: edit (scripted editor) and replace`, async () => {
      const e = await kc().run(['edit', 'deploy', name], { env: { KUBE_EDITOR: editor } });
      expect(e.stderr).toBe('');
      expect(e.stdout.trim()).toBe(`deployment.apps/${name} edited`);
      expect(live(plain)?.spec.template.spec.containers[0].image).toBe('nginx:1.29');

      const got = await kc().run(['get', 'deploy', name, '-o', 'json']);
      const obj = JSON.parse(got.stdout);
      expect(obj.metadata.name).toBe(name);
      obj.spec.replicas = 4;
      // no resourceVersion (the RV test is below): kubectl replace then reads the live one and sends it,
      // and the simulated controllers keep updating status between its GET and PUT, as real ones do; a
      // Conflict there is the apiserver's right answer, and a user runs the command again
      delete obj.metadata.resourceVersion;
      const dir = mkdtempSync(join(tmpdir(), 'fleet-replace-'));
      writeFileSync(join(dir, 'r.json'), JSON.stringify(obj));
      let r = await kc().run(['replace', '-f', join(dir, 'r.json')]);
      for (let i = 0; i < 5 && r.stderr.includes('Error from server (Conflict)'); i++)
        r = await kc().run(['replace', '-f', join(dir, 'r.json')]);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(`deployment.apps/${name} replaced`);
      expect(live(plain)?.spec.replicas).toBe(4);
      expectClean(live(plain));
    });

    it(`${via}: patch --type=json|merge|strategic${via === 'root' ? ', a patch on the marker writes nothing of it' : ''}`, async () => {
      // the prefix form is a transparent proxy: it has no markers to keep out, and forwards patches as sent
      const marker = (json: string) => (via === 'root' ? json : '');
      const j = await kc().run([
        'patch',
        'deploy',
        name,
        '--type=json',
        '-p',
        `[{"op":"replace","path":"/spec/replicas","value":2}${marker(',{"op":"add","path":"/metadata/labels/fleet.karmada.io~1cluster","value":"member1"}')}]`,
      ]);
      expect(j.stderr).toBe('');
      expect(live(plain)?.spec.replicas).toBe(2);
      const m = await kc().run([
        'patch',
        'deploy',
        name,
        '--type=merge',
        '-p',
        `{"metadata":{"labels":{"merged":"yes"${marker(',"fleet.karmada.io/cluster":"member3"')}}}}`,
      ]);
      expect(m.stderr).toBe('');
      expect(live(plain)?.metadata.labels.merged).toBe('yes');
      const s = await kc().run([
        'patch',
        'deploy',
        name,
        '--type=strategic',
        '-p',
        `{"metadata":{"annotations":{"strategic":"yes"${marker(',"fleet.karmada.io/cluster":"x"')}}}}`,
      ]);
      expect(s.stdout.trim()).toBe(`deployment.apps/${name} patched`);
      expect(live(plain)?.metadata.annotations.strategic).toBe('yes');
      nowhereElse(plain);
      expectClean(live(plain));
      // and the fleet still shows where it lives
      const shown = JSON.parse((await kc().run(['get', 'deploy', name, '-o', 'json'])).stdout);
      if (via === 'root') expect(shown.metadata.labels[MARK]).toBe('member2');
    });

    it(`${via}: delete removes it from member2`, async () => {
      const d = await kc().run(['delete', 'deploy', name]);
      expect(d.stderr).toBe('');
      expect(d.stdout).toContain(`"${name}" deleted`);
      expect(live(plain)).toBeUndefined();
    });
  }

  it('a stale composite resourceVersion gets the owning cluster’s 409 and writes nothing', async () => {
    m2.create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rv', namespace: 'default' },
      data: { a: '1' },
    } as KubeObject);
    const url = `${f.url}/api/v1/namespaces/default/configmaps/rv.clusterspace.member2`;
    const old = (await (await fetch(url)).json()) as any;
    expect(old.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
    const cur = m2.get(CM, 'default', 'rv')!;
    m2.update(CM, { ...cur, data: { a: '2' } } as KubeObject);
    const rvBefore = m2.get(CM, 'default', 'rv')!.metadata.resourceVersion;
    old.data = { a: 'stale' };
    const res = await fetch(url, {
      method: 'PUT',
      body: JSON.stringify(old),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(409);
    const st = (await res.json()) as any;
    expect(st).toMatchObject({
      kind: 'Status',
      reason: 'Conflict',
      code: 409,
      details: { name: 'rv.clusterspace.member2' },
    });
    expect(st.message).toContain('"rv.clusterspace.member2"');
    expect(m2.get(CM, 'default', 'rv')!.metadata.resourceVersion).toBe(rvBefore);
    expect((m2.get(CM, 'default', 'rv') as any).data.a).toBe('2');

    // the fresh composite works, and DeleteOptions preconditions map it back too
    const fresh = (await (await fetch(url)).json()) as any;
    fresh.data = { a: '3' };
    const ok = await fetch(url, {
      method: 'PUT',
      body: JSON.stringify(fresh),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(ok.status).toBe(200);
    const updated = (await ok.json()) as any;
    expect(updated.metadata.name).toBe('rv.clusterspace.member2');
    const del = await fetch(url, {
      method: 'DELETE',
      body: JSON.stringify({
        preconditions: { resourceVersion: updated.metadata.resourceVersion, uid: updated.metadata.uid },
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(del.status).toBe(200);
    expect(m2.get(CM, 'default', 'rv')).toBeUndefined();
  });

  it('protobuf creates land in the named cluster: a hand-encoded body and kubectl create configmap', async () => {
    const body = protobufConfigMap('pb.clusterspace.member2', { k: 'v' }, { [MARK]: 'member1', app: 'pb' });
    const res = await fetch(`${f.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      body: Buffer.from(body),
      headers: {
        'Content-Type': 'application/vnd.kubernetes.protobuf',
        Accept: 'application/vnd.kubernetes.protobuf, application/json',
      },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as any;
    expect(created.metadata.name).toBe('pb.clusterspace.member2');
    expect(created.metadata.labels).toEqual({ app: 'pb', [MARK]: 'member2' });
    const stored = m2.get(CM, 'default', 'pb') as any;
    expect(stored.data).toEqual({ k: 'v' });
    expectClean(stored);
    for (const s of others) expect(s.get(CM, 'default', 'pb')).toBeUndefined();

    // kubectl 1.35 itself sends ConfigMaps as protobuf
    const r = await k.run(['create', 'configmap', 'kc.clusterspace.member2', '--from-literal=a=b']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/kc.clusterspace.member2 created');
    expect((m2.get(CM, 'default', 'kc') as any).data).toEqual({ a: 'b' });
    for (const s of others) expect(s.get(CM, 'default', 'kc')).toBeUndefined();
  });

  it('refuses bad input with the right 4xx and writes nothing anywhere', async () => {
    const all = [m2, ...others];
    const json = { 'Content-Type': 'application/json' };
    // unknown cluster suffix: create → 400, write by name → 404
    const r1 = await fetch(`${f.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'bad.clusterspace.nosuch' },
      }),
    });
    expect(r1.status).toBe(400);
    expect(((await r1.json()) as any).message).toContain('names cluster "nosuch", which is not in the fleet');
    const k1 = await k.run(['label', 'cm', 'bad.clusterspace.nosuch', 'a=b']);
    expect(k1.stderr).toContain('NotFound');
    for (const s of all) expect(s.get(CM, 'default', 'bad')).toBeUndefined();

    // name/body mismatch → 400 like kube's checkName
    m2.create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'keep', namespace: 'default' },
      data: { a: '1' },
    } as KubeObject);
    const before = m2.get(CM, 'default', 'keep')!.metadata.resourceVersion;
    const url = `${f.url}/api/v1/namespaces/default/configmaps/keep.clusterspace.member2`;
    const r2 = await fetch(url, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'other.clusterspace.member2' },
        data: { a: 'x' },
      }),
    });
    expect(r2.status).toBe(400);
    expect(((await r2.json()) as any).message).toBe(
      'the name of the object (other.clusterspace.member2) does not match the name on the URL (keep.clusterspace.member2)',
    );
    // a name that points at another cluster than the URL's
    const r2b = await fetch(url, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'keep.clusterspace.member1' },
      }),
    });
    expect(r2b.status).toBe(400);

    // malformed patches → 400
    for (const [type, body] of [
      ['application/merge-patch+json', '{"data":'],
      ['application/json-patch+json', '{"op":"add"}'],
      ['application/strategic-merge-patch+json', 'not json'],
    ] as const) {
      const r = await fetch(url, { method: 'PATCH', headers: { 'Content-Type': type }, body });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).reason).toBe('BadRequest');
    }
    expect(m2.get(CM, 'default', 'keep')!.metadata.resourceVersion).toBe(before);

    // larger than kube-apiserver's 3 MiB → 413 RequestEntityTooLarge, for creates and updates
    const big = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big.clusterspace.member2' },
      data: { blob: 'x'.repeat(3 * 1024 * 1024 + 10) },
    });
    const r3 = await rawRequest(`${f.url}/api/v1/namespaces/default/configmaps`, 'POST', big);
    expect(r3.status).toBe(413);
    expect(JSON.parse(r3.body)).toMatchObject({
      reason: 'RequestEntityTooLarge',
      code: 413,
      message: 'Request entity too large: limit is 3145728',
    });
    const r4 = await rawRequest(url, 'PUT', big);
    expect(r4.status).toBe(413);
    for (const s of all) expect(s.get(CM, 'default', 'big')).toBeUndefined();
    expect(m2.get(CM, 'default', 'keep')!.metadata.resourceVersion).toBe(before);
  });

  it('deletecollection: refused across the fleet (405), forwarded for one cluster', async () => {
    for (const s of [m2, f.sims.members.get('member1')!])
      s.create(CM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'batch', namespace: 'default', labels: { batch: 'x' } },
      } as KubeObject);
    const opts = {
      method: 'DELETE',
      body: '{"propagationPolicy":"Background"}',
      headers: { 'Content-Type': 'application/json' },
    };
    const all = await fetch(`${f.url}/api/v1/namespaces/default/configmaps?labelSelector=batch%3Dx`, opts);
    expect(all.status).toBe(405);
    expect(await all.json()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    const one = await fetch(
      `${f.url}/api/v1/namespaces/default/clusterspaces/member2/configmaps?labelSelector=batch%3Dx`,
      opts,
    );
    expect(one.status).toBe(200);
    const list = (await one.json()) as any;
    // the in-path clusterspace names the cluster: the deleted items answer by their plain names (docs/names.md)
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['batch']);
    expect(m2.get(CM, 'default', 'batch')).toBeUndefined();
    expect(f.sims.members.get('member1')!.get(CM, 'default', 'batch')).toBeDefined();
  });
});

describe('fleet writes, in-process (federation off)', () => {
  const f = inProcessFleet({}, { federation: false });
  afterAll(() => {
    for (const s of [f.karmada, ...f.members.values()]) s.close();
  });
  const post = (path: string, body: unknown) =>
    f.fetch(path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    });

  it('generateName without a cluster is a 400 saying how to name it; with one it lands there', async () => {
    const r = await post('/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'gen-' } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).message).toContain('gen-.clusterspace.<cluster>');
    const a = await post('/api/v1/namespaces/default/clusterspaces/member3/configmaps', {
      metadata: { generateName: 'gen-' },
    });
    expect(a.status).toBe(201);
    const made = (await a.json()) as any;
    // the in-path clusterspace names the cluster: the made name is plain, as member3 gave it
    expect(made.metadata.name).toMatch(/^gen-[a-z0-9]+$/);
    const b = await post('/api/v1/namespaces/default/configmaps', {
      metadata: { generateName: 'gen-.clusterspace.member1' },
    });
    expect(b.status).toBe(201);
    expect(((await b.json()) as any).metadata.name).toMatch(/\.clusterspace\.member1$/);
    // a fleet name contradicting the URL's clusterspace
    const c = await post('/api/v1/namespaces/default/clusterspaces/member3/configmaps', {
      metadata: { name: 'x.clusterspace.member1' },
    });
    expect(c.status).toBe(400);
  });

  it('a plain name is written where it exists, and is a 409 where it is ambiguous', async () => {
    f.members.get('member1')!.create(CM, { metadata: { name: 'only1', namespace: 'default' } } as KubeObject);
    const p = await f.fetch('/api/v1/namespaces/default/configmaps/only1', {
      method: 'PATCH',
      body: '{"data":{"x":"y"}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status).toBe(200);
    expect(((await p.json()) as any).metadata.name).toBe('only1.clusterspace.member1');
    for (const n of ['member1', 'member2'])
      f.members.get(n)!.create(CM, { metadata: { name: 'twice', namespace: 'default' } } as KubeObject);
    const d = await f.fetch('/api/v1/namespaces/default/configmaps/twice', { method: 'DELETE' });
    expect(d.status).toBe(409);
    expect(((await d.json()) as any).message).toContain(
      'twice.clusterspace.member1, twice.clusterspace.member2',
    );
    expect(f.members.get('member1')!.get(CM, 'default', 'twice')).toBeDefined();
  });

  it('subresources go to the owning cluster: status, scale, eviction', async () => {
    const m = f.members.get('member2')!;
    const web = m.list(DEPLOY).find((d) => d.metadata.namespace === 'shop')!;
    const base = `/apis/apps/v1/namespaces/shop/deployments/${web.metadata.name}.clusterspace.member2`;
    const s = await f.fetch(`${base}/scale`);
    const scale = (await s.json()) as any;
    expect(scale.metadata.name).toBe(`${web.metadata.name}.clusterspace.member2`);
    scale.spec.replicas = 5;
    const put = await f.fetch(`${base}/scale`, {
      method: 'PUT',
      body: JSON.stringify(scale),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(put.status).toBe(200);
    expect((m.get(DEPLOY, 'shop', web.metadata.name!) as any).spec.replicas).toBe(5);
    const st = await f.fetch(`${base}/status`, {
      method: 'PATCH',
      body: '{"status":{"observedGeneration":99}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(st.status).toBe(200);
    const pod = m
      .list({ group: '', version: 'v1', resource: 'pods' })
      .find((p) => p.metadata.namespace === 'monitoring')!;
    const ev = await post(
      `/api/v1/namespaces/monitoring/pods/${pod.metadata.name}.clusterspace.member2/eviction`,
      {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: `${pod.metadata.name}.clusterspace.member2`, namespace: 'monitoring' },
      },
    );
    expect(ev.status).toBe(201);
    expect(
      m.get({ group: '', version: 'v1', resource: 'pods' }, 'monitoring', pod.metadata.name!),
    ).toBeUndefined();
  });
});
