import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SimCluster, type SimClusterOptions } from './cluster.ts';
import { call } from './testing.ts';

// Copies of real kube-apiserver answers kept with the simulator, so that it stands alone as an oracle:
// JSON values in catalog/testdata, exact bytes in testdata (each folder's SOURCES.txt says where from).
const fixture = (f: string) =>
  readFileSync(
    new URL(f.startsWith('status_') ? `./testdata/${f}` : `./catalog/testdata/${f}`, import.meta.url),
    'utf8',
  );

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = { group: '', version: 'v1', resource: 'namespaces' };
const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

const open: SimCluster[] = [];
function sim(opts: Partial<SimClusterOptions> = {}): SimCluster {
  const s = new SimCluster({ name: 'member1', seed: false, ...opts });
  if (opts.seed === false || opts.seed === undefined) {
    for (const n of ['default', 'shop']) s.create(NS, { metadata: { name: n }, status: { phase: 'Active' } });
  }
  open.push(s);
  return s;
}
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

describe('non-resource paths', () => {
  it('serves /version, health and the exact 404 of an unregistered path', async () => {
    const s = sim();
    const v = await call(s, '/version');
    expect(v.body.gitVersion).toBe('v1.35.0');
    const h = await call(s, '/readyz');
    expect(h.text).toBe('ok');
    const nf = await call(s, '/apis/nope.example.com/v1/things');
    expect(nf.status).toBe(404);
    expect(nf.text).toBe('404 page not found\n');
    expect(nf.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('adds the headers every kube-apiserver response carries', async () => {
    const r = await call(sim(), '/api/v1/namespaces');
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('no-cache, private');
    expect(r.headers.get('audit-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get('x-kubernetes-pf-flowschema-uid')).toBeTruthy();
    expect(r.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBeTruthy();
    expect(r.headers.get('date')).toBeTruthy();
  });

  it('serves legacy discovery shaped like the fixtures', async () => {
    const s = sim();
    const api = await call(s, '/api');
    expect(Object.keys(api.body).sort()).toEqual(Object.keys(JSON.parse(fixture('api.json'))).sort());
    const apis = await call(s, '/apis');
    expect(apis.body.kind).toBe('APIGroupList');
    expect(apis.body.groups.map((g: any) => g.name)).toContain('apps');
    const v1 = await call(s, '/api/v1');
    const want = JSON.parse(fixture('api__v1.json'));
    const pods = v1.body.resources.find((r: any) => r.name === 'pods');
    expect(Object.keys(pods).sort()).toEqual(
      Object.keys(want.resources.find((r: any) => r.name === 'pods')).sort(),
    );
    expect((await call(s, '/apis/apps')).body.preferredVersion.groupVersion).toBe('apps/v1');
    expect((await call(s, '/apis/apps/v1')).body.groupVersion).toBe('apps/v1');
    expect((await call(s, '/apis/nope')).status).toBe(404);
  });

  it('serves aggregated discovery with its media type, Vary, ETag and 304', async () => {
    const s = sim();
    const accept =
      'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const r = await call(s, '/apis', { headers: { accept } });
    expect(r.headers.get('content-type')).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    expect(r.headers.get('vary')).toBe('Accept');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect(r.body.kind).toBe('APIGroupDiscoveryList');
    const fx = JSON.parse(fixture('aggregated_v2.json'));
    const apps = r.body.items.find((i: any) => i.metadata.name === 'apps');
    const fxApps = fx.items.find((i: any) => i.metadata.name === 'apps');
    expect(Object.keys(apps.versions[0].resources[0]).sort()).toEqual(
      expect.arrayContaining(Object.keys(fxApps.versions[0].resources[0]).filter((k) => k !== 'categories')),
    );
    const again = await call(s, '/apis', { headers: { accept, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const legacy = await call(s, '/api', { headers: { accept } });
    expect(legacy.body.items.map((i: any) => i.metadata.name ?? '')).toEqual(['']);
  });

  it('serves OpenAPI v3 root and a group document', async () => {
    const s = sim();
    const root = await call(s, '/openapi/v3');
    expect(root.body.paths['api/v1']).toBeTruthy();
    const doc = await call(s, root.body.paths['api/v1'].serverRelativeURL);
    expect(doc.status).toBe(200);
    expect(doc.body.openapi ?? doc.body.components).toBeTruthy();
  });
});

describe('CRUD', () => {
  it('pages a filtered list as etcd does: a full page continues while any key follows, matching or not', async () => {
    const s = sim();
    for (const [name, app] of [
      ['p-a', 'x'],
      ['p-b', 'x'],
      ['p-c', 'other'],
    ])
      await call(s, '/api/v1/namespaces/default/configmaps', {
        method: 'POST',
        json: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { pg: app } } },
      });
    const first = await call(s, '/api/v1/namespaces/default/configmaps?labelSelector=pg%3Dx&limit=2');
    expect(first.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      'p-a',
      'p-b',
    ]);
    expect(first.body.metadata.continue).toBeTruthy();
    expect(first.body.metadata.remainingItemCount).toBeUndefined();
    const last = await call(
      s,
      `/api/v1/namespaces/default/configmaps?labelSelector=pg%3Dx&limit=2&continue=${first.body.metadata.continue}`,
    );
    expect(last.body.items).toEqual([]);
    expect(last.body.metadata.continue).toBeUndefined();
    // resourceVersion=0 is served whole, limit ignored; an empty metadata list is items: null
    const cached = await call(
      s,
      '/api/v1/namespaces/default/configmaps?labelSelector=pg%3Dx&limit=1&resourceVersion=0',
    );
    expect(cached.body.items).toHaveLength(2);
    expect(cached.body.metadata.continue).toBeUndefined();
    const none = await call(s, '/api/v1/namespaces/default/configmaps?labelSelector=pg%3Dnone', {
      headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' },
    });
    expect(none.body.items).toBeNull();
  });

  it('refuses bad ConfigMap keys (422) and Secret data that is not base64 (400), in kube 1.35 words', async () => {
    const s = sim();
    const cm = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      json: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'k' },
        data: { 'bad key': 'v', ok: 'v' },
      },
    });
    expect(cm.status).toBe(422);
    expect(cm.body.details.causes.map((c: { field: string }) => c.field)).toEqual(['data[bad key]']);
    expect(cm.body.message).toMatch(
      /^ConfigMap "k" is invalid: data\[bad key\]: Invalid value: "bad key": a valid config key/,
    );
    const secret = await call(s, '/api/v1/namespaces/default/secrets', {
      method: 'POST',
      json: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: '***' } },
    });
    expect(secret.status).toBe(400);
    expect(secret.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
    );
    const folded = await call(s, '/api/v1/namespaces/default/secrets', {
      method: 'POST',
      json: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 't' }, stringData: { u: 'x' }, data: {} },
    });
    expect(folded.status).toBe(201);
    expect(folded.body.data).toEqual({ u: 'eA==' });
    expect(folded.body.stringData).toBeUndefined();
  });

  it('creates, gets, conflicts and deletes like the apiserver', async () => {
    const s = sim();
    const c = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      json: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } },
    });
    expect(c.status).toBe(201);
    expect(Object.keys(c.body).slice(0, 3)).toEqual(['kind', 'apiVersion', 'metadata']);
    expect(c.body.metadata.namespace).toBe('default');
    expect(c.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.body.metadata.resourceVersion).toBe(s.resourceVersion);

    const dup = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      json: { metadata: { name: 'a' } },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.reason).toBe('AlreadyExists');
    expect(dup.body.message).toBe('configmaps "a" already exists');

    const stale = await call(s, '/api/v1/namespaces/default/configmaps/a', {
      method: 'PUT',
      json: { metadata: { name: 'a', resourceVersion: '1' }, data: { k: 'w' } },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    const ok = await call(s, '/api/v1/namespaces/default/configmaps/a', {
      method: 'PUT',
      json: { metadata: { name: 'a', resourceVersion: c.body.metadata.resourceVersion }, data: { k: 'w' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.k).toBe('w');
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(Number(c.body.metadata.resourceVersion));

    const mismatch = await call(s, '/api/v1/namespaces/default/configmaps/a', {
      method: 'PUT',
      json: { metadata: { name: 'b' } },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toBe('the name of the object (b) does not match the name on the URL (a)');

    const del = await call(s, '/api/v1/namespaces/default/configmaps/a', { method: 'DELETE' });
    expect(del.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      // no code: kube 1.35's registry writes none on a delete (measured against a real member)
      details: { name: 'a', kind: 'configmaps', uid: c.body.metadata.uid },
    });
    const gone = await call(s, '/api/v1/namespaces/default/configmaps/a');
    expect(gone.status).toBe(404);
  });

  it('answers NotFound exactly like the fixture', async () => {
    const r = await call(sim(), '/apis/apps/v1/namespaces/default/deployments/web');
    // byte for byte, the newline Go's json.Encoder ends the body with included
    expect(r.text).toBe(fixture('status_404_notfound.json'));
  });

  it('rejects a create in a missing namespace and honours generateName and dryRun', async () => {
    const s = sim();
    const r = await call(s, '/api/v1/namespaces/nope/configmaps', {
      method: 'POST',
      json: { metadata: { name: 'a' } },
    });
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('namespaces "nope" not found');
    const g = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      json: { metadata: { generateName: 'x-' } },
    });
    expect(g.body.metadata.name).toMatch(/^x-[a-z0-9]{5}$/);
    const rv = s.resourceVersion;
    const d = await call(s, '/api/v1/namespaces/default/configmaps?dryRun=All', {
      method: 'POST',
      json: { metadata: { name: 'dry' } },
    });
    expect(d.status).toBe(201);
    expect(s.resourceVersion).toBe(rv);
    expect(s.get(CM, 'default', 'dry')).toBeUndefined();
    const wrongNs = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      json: { metadata: { name: 'a', namespace: 'shop' } },
    });
    expect(wrongNs.status).toBe(400);
  });

  it('checks delete preconditions and returns deleted pods', async () => {
    const s = sim();
    s.create(
      { group: '', version: 'v1', resource: 'pods' },
      {
        metadata: { name: 'p', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    );
    const pre = await call(s, '/api/v1/namespaces/default/pods/p', {
      method: 'DELETE',
      json: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } },
    });
    expect(pre.status).toBe(409);
    expect(pre.body.message).toMatch(
      // the registry's words on a delete (measured on kube 1.35)
      /^Operation cannot be fulfilled on Pod "p": the UID in the precondition \(nope\) does not match the UID in record \(/,
    );
    const dry = await call(s, '/api/v1/namespaces/default/pods/p?dryRun=All', { method: 'DELETE' });
    expect(dry.status).toBe(200);
    expect(s.get({ group: '', version: 'v1', resource: 'pods' }, 'default', 'p')).toBeTruthy();
    const del = await call(s, '/api/v1/namespaces/default/pods/p', { method: 'DELETE' });
    expect(del.body.kind).toBe('Pod');
  });

  it('updates only status through the status subresource and scales deployments', async () => {
    const s = sim({ podReadyDelayMs: 10 });
    const d = await call(s, '/apis/apps/v1/namespaces/default/deployments', {
      method: 'POST',
      json: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    expect(d.status).toBe(201);
    const sc = await call(s, '/apis/apps/v1/namespaces/default/deployments/web/scale');
    expect(sc.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 } });
    const patched = await call(s, '/apis/apps/v1/namespaces/default/deployments/web/scale', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { replicas: 3 } }),
    });
    expect(patched.body.spec.replicas).toBe(3);
    // controllers: ReplicaSet, pods Running and Ready, deployment status complete
    for (let i = 0; i < 100; i++) {
      const dep = s.get({ group: 'apps', version: 'v1', resource: 'deployments' }, 'default', 'web') as any;
      if (dep.status?.availableReplicas === 3 && dep.status?.updatedReplicas === 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const dep = s.get({ group: 'apps', version: 'v1', resource: 'deployments' }, 'default', 'web') as any;
    expect(dep.status).toMatchObject({
      observedGeneration: dep.metadata.generation,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    const pods = s.list({ group: '', version: 'v1', resource: 'pods' }, 'default') as any[];
    expect(pods).toHaveLength(3);
    expect(pods[0].metadata.labels['pod-template-hash']).toBeTruthy();
    expect(pods[0].status.phase).toBe('Running');
    const events = await call(
      s,
      `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${pods[0].metadata.name}`,
    );
    expect(events.body.items.map((e: any) => e.reason)).toEqual(
      expect.arrayContaining(['Scheduled', 'Started']),
    );

    const st = await call(s, '/apis/apps/v1/namespaces/default/deployments/web/status', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { replicas: 9 }, status: { replicas: 42 } }),
    });
    expect(st.body.spec.replicas).toBe(3);
    expect(st.body.status.replicas).toBe(42);
  });

  it('refuses exec without an upgrade and unsupported body types', async () => {
    const s = sim();
    s.create(
      { group: '', version: 'v1', resource: 'pods' },
      { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c' }] } },
    );
    const ex = await call(s, '/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true', {
      method: 'POST',
    });
    expect(ex.status).toBe(400);
    expect(ex.body.message).toBe('Upgrade request required');
    const pb = await call(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(pb.status).toBe(415);
    expect(pb.body.reason).toBe('UnsupportedMediaType');
  });
});

describe('patch', () => {
  async function setup() {
    const s = sim();
    const p = await call(s, '/apis/apps/v1/namespaces/default/deployments', {
      method: 'POST',
      json: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: 'nginx:1',
                  env: [
                    { name: 'A', value: '1' },
                    { name: 'B', value: '2' },
                  ],
                },
                { name: 'side', image: 'busybox' },
              ],
            },
          },
        },
      },
    });
    return { s, created: p.body };
  }
  const patch = (s: SimCluster, type: string, body: unknown, q = '') =>
    call(s, `/apis/apps/v1/namespaces/default/deployments/web${q}`, {
      method: 'PATCH',
      headers: { 'content-type': type },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('applies JSON patch with test, and maps failures to 400/422', async () => {
    const { s } = await setup();
    const ok = await patch(s, 'application/json-patch+json', [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 2 },
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
    ]);
    expect(ok.status).toBe(200);
    expect(ok.body.spec.replicas).toBe(2);
    expect(ok.body.metadata.generation).toBe(2);
    const failed = await patch(s, 'application/json-patch+json', [
      { op: 'test', path: '/spec/replicas', value: 7 },
    ]);
    expect(failed.status).toBe(422);
    // the bare 422, no causes (measured on kube 1.35)
    expect(failed.body.message).toBe('the server rejected our request due to an error in our request');
    expect(failed.body.details).toEqual({});
    const bad = await patch(s, 'application/json-patch+json', '{nope');
    expect(bad.status).toBe(400);
    const unsupported = await patch(s, 'text/plain', 'x');
    expect(unsupported.status).toBe(415);
  });

  it('applies merge patch', async () => {
    const { s } = await setup();
    const r = await patch(s, 'application/merge-patch+json', { metadata: { labels: { app: null, x: 'y' } } });
    expect(r.body.metadata.labels).toEqual({ x: 'y' });
  });

  it('applies a kubectl three-way strategic merge patch with $setElementOrder', async () => {
    const { s } = await setup();
    // what kubectl apply sends after removing env B, changing the image and reordering containers
    const r = await patch(s, 'application/strategic-merge-patch+json', {
      spec: {
        template: {
          spec: {
            $setElementOrder: undefined,
            '$setElementOrder/containers': [{ name: 'side' }, { name: 'web' }],
            containers: [
              {
                name: 'web',
                image: 'nginx:2',
                '$setElementOrder/env': [{ name: 'A' }],
                env: [{ name: 'B', $patch: 'delete' }],
              },
            ],
          },
        },
      },
    });
    expect(r.status).toBe(200);
    const cs = r.body.spec.template.spec.containers;
    expect(cs.map((c: any) => c.name)).toEqual(['side', 'web']);
    expect(cs[1].image).toBe('nginx:2');
    expect(cs[1].env).toEqual([{ name: 'A', value: '1' }]);
  });

  it('does server-side apply: fieldManager required, create when absent, merge otherwise', async () => {
    const { s } = await setup();
    const noManager = await patch(
      s,
      'application/apply-patch+yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n',
    );
    expect(noManager.status).toBe(422);
    expect(noManager.body.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const yaml =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    owner: me\nspec:\n  replicas: 4\n';
    const r = await patch(s, 'application/apply-patch+yaml', yaml, '?fieldManager=test&force=true');
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(4);
    expect(r.body.metadata.labels).toEqual({ app: 'web', owner: 'me' });
    expect(
      r.body.metadata.managedFields.some((m: any) => m.manager === 'test' && m.operation === 'Apply'),
    ).toBe(true);
    const created = await call(s, '/api/v1/namespaces/default/configmaps/new?fieldManager=test', {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'new' },
        data: { a: 'b' },
      }),
    });
    expect(created.status).toBe(201);
    const missing = await call(s, '/api/v1/namespaces/default/configmaps/nope', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{}',
    });
    expect(missing.status).toBe(404);
  });
});

describe('list', () => {
  it('filters with label and field selectors and rejects unsupported fields', async () => {
    const s = sim();
    for (const [n, l] of [
      ['a', { app: 'x', tier: 'web' }],
      ['b', { app: 'y' }],
      ['c', { tier: 'db' }],
    ] as const) {
      s.create(CM, { metadata: { name: n, namespace: 'default', labels: { ...l } } });
    }
    const names = async (q: string) =>
      (await call(s, `/api/v1/namespaces/default/configmaps?${q}`)).body.items.map(
        (i: any) => i.metadata.name,
      );
    expect(await names('labelSelector=app%3Dx')).toEqual(['a']);
    expect(await names('labelSelector=app%20in%20(x%2Cy)')).toEqual(['a', 'b']);
    expect(await names('labelSelector=!app')).toEqual(['c']);
    expect(await names('labelSelector=tier%2Capp!%3Dy')).toEqual(['a', 'c']);
    expect(await names('labelSelector=app%20notin%20(x)')).toEqual(['b', 'c']);
    expect(await names('fieldSelector=metadata.name%3Db')).toEqual(['b']);
    expect(await names('fieldSelector=metadata.name!%3Db')).toEqual(['a', 'c']);
    const bad = await call(s, '/api/v1/namespaces/default/configmaps?fieldSelector=spec.foo%3Dx');
    expect(bad.status).toBe(400);
    // configmaps have no field label conversion of their own: the default's words (measured on kube 1.35)
    expect(bad.body.message).toBe(
      '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    const items = (await call(s, '/api/v1/configmaps')).body.items;
    expect(items[0].kind).toBeUndefined(); // built-in list items carry no kind, as on the wire
  });

  it('pages 25 objects with limit=7 at a fixed snapshot even with writes in between', async () => {
    const s = sim();
    for (let i = 0; i < 25; i++)
      s.create(CM, {
        metadata: { name: `cm-${String(i).padStart(2, '0')}`, namespace: i % 2 ? 'shop' : 'default' },
      });
    const first = await call(s, '/api/v1/configmaps?limit=7');
    const rv = first.body.metadata.resourceVersion;
    expect(first.body.metadata.remainingItemCount).toBe(18);
    const seen: string[] = first.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
    let cont = first.body.metadata.continue;
    let n = 0;
    while (cont) {
      // writes between pages must not show up in this list
      s.create(CM, { metadata: { name: `late-${n++}`, namespace: 'default' } });
      s.remove(CM, 'shop', 'cm-23');
      const page = await call(s, `/api/v1/configmaps?limit=7&continue=${encodeURIComponent(cont)}`);
      expect(page.status).toBe(200);
      expect(page.body.metadata.resourceVersion).toBe(rv);
      seen.push(...page.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`));
      cont = page.body.metadata.continue;
    }
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen).toEqual([...seen].sort());
    expect(seen.some((x) => x.includes('late'))).toBe(false);
  });

  it('answers 410 with a fresh token for an expired continue, 410 for a compacted exact RV, 504 for a future RV', async () => {
    const s = sim();
    for (let i = 0; i < 5; i++) s.create(CM, { metadata: { name: `c${i}`, namespace: 'default' } });
    const first = await call(s, '/api/v1/configmaps?limit=2');
    const rv = first.body.metadata.resourceVersion;
    s.create(CM, { metadata: { name: 'later', namespace: 'default' } });
    s.compact();
    const r = await call(s, `/api/v1/configmaps?limit=2&continue=${first.body.metadata.continue}`);
    expect(r.status).toBe(410);
    expect(r.body.reason).toBe('Expired');
    expect(r.body.message).toMatch(
      /^The provided continue parameter is too old to display a consistent list result\./,
    );
    expect(r.body.metadata.continue).toBeTruthy();
    const resumed = await call(s, `/api/v1/configmaps?limit=10&continue=${r.body.metadata.continue}`);
    expect(resumed.body.items.map((i: any) => i.metadata.name)).toEqual(['c2', 'c3', 'c4', 'later']);
    const exact = await call(s, `/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);
    const future = await call(s, '/api/v1/configmaps?resourceVersion=999999999');
    expect(future.status).toBe(504);
    expect(future.body.details).toEqual({
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    });
    expect(future.headers.get('retry-after')).toBe('1');
    const badMatch = await call(s, '/api/v1/configmaps?resourceVersionMatch=Exact');
    expect(badMatch.status).toBe(422);
  });

  it('expires continue tokens by age', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const s = sim({ now: () => new Date(now), continueTtlMs: 60_000 });
    for (let i = 0; i < 3; i++) s.create(CM, { metadata: { name: `c${i}`, namespace: 'default' } });
    const first = await call(s, '/api/v1/configmaps?limit=1');
    // the snapshot stops being current at the next write; like etcd's periodic compaction, history that
    // stopped being current more than the TTL ago is gone
    now += 1_000;
    s.create(CM, { metadata: { name: 'x', namespace: 'default' } });
    now += 120_000;
    s.create(CM, { metadata: { name: 'y', namespace: 'default' } });
    const r = await call(s, `/api/v1/configmaps?limit=1&continue=${first.body.metadata.continue}`);
    expect(r.status).toBe(410);
  });
});

describe('tables', () => {
  it('answers a single GET as a Table like the fixture, with PartialObjectMetadata rows', async () => {
    const s = new SimCluster({ name: 'member1' });
    open.push(s);
    const pod = s.list({ group: '', version: 'v1', resource: 'pods' })[0]!;
    const r = await call(s, `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, {
      headers: { accept: TABLE },
    });
    const fx = JSON.parse(fixture('table_get_pod_kubectl-v1.29.3.json'));
    expect(Object.keys(r.body)).toEqual(Object.keys(fx));
    expect(r.body.columnDefinitions.map((c: any) => c.name)).toEqual(
      fx.columnDefinitions.map((c: any) => c.name),
    );
    expect(r.body.metadata.resourceVersion).toBe(pod.metadata.resourceVersion);
    expect(r.body.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(r.body.rows[0].cells[0]).toBe(pod.metadata.name);
    const none = await call(s, '/api/v1/pods?includeObject=None&limit=1', { headers: { accept: TABLE } });
    expect(none.body.rows[0].object).toBeNull();
    expect(none.body.metadata.continue).toBeTruthy();
    const full = await call(s, '/api/v1/pods?includeObject=Object&limit=1', { headers: { accept: TABLE } });
    expect(full.body.rows[0].object.kind).toBe('Pod');
  });

  it('uses the default Name / Created At columns for kinds without a printer, and serves PartialObjectMetadataList', async () => {
    const s = sim();
    s.create(CM, { metadata: { name: 'a', namespace: 'default' } });
    const pom = await call(s, '/api/v1/configmaps', {
      headers: {
        accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      },
    });
    expect(pom.body.kind).toBe('PartialObjectMetadataList');
    expect(pom.body.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    const na = await call(s, '/api/v1/configmaps', {
      headers: { accept: 'text/html' },
    });
    expect(na.status).toBe(406);
  });
});

describe('faults', () => {
  it('adds latency, refuses connections when down, and fails the next N requests', async () => {
    const s = sim();
    s.faults.latencyMs = 60;
    const t0 = Date.now();
    await call(s, '/version');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
    s.faults.latencyMs = 0;
    s.faults.down = true;
    await expect(call(s, '/version')).rejects.toThrow(TypeError);
    s.faults.down = false;
    s.faults.failRequests = { code: 503, reason: 'ServiceUnavailable', message: 'boom', count: 1 };
    expect((await call(s, '/healthz')).status).toBe(200);
    const f = await call(s, '/api/v1/namespaces');
    expect(f.status).toBe(503);
    expect(f.body).toMatchObject({
      kind: 'Status',
      reason: 'ServiceUnavailable',
      message: 'boom',
      code: 503,
    });
    expect((await call(s, '/api/v1/namespaces')).status).toBe(200);
    expect(s.requests.at(-1)!.url).toBe('http://sim/api/v1/namespaces');
  });
});

describe('namespaces', () => {
  it('deleting a namespace returns it Terminating and removes its objects', async () => {
    const s = sim();
    s.create(CM, { metadata: { name: 'a', namespace: 'shop' } });
    const r = await call(s, '/api/v1/namespaces/shop', { method: 'DELETE' });
    expect(r.body.status.phase).toBe('Terminating');
    await new Promise((res) => setTimeout(res, 50));
    expect(s.get(CM, 'shop', 'a')).toBeUndefined();
    expect(s.get(NS, undefined, 'shop')).toBeUndefined();
  });
});
