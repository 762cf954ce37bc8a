/**
 * The request-shaped endpoints the way client-go sends them: access reviews in protobuf (`kubectl auth
 * can-i`, `--list`), error Statuses in the client's encoding, `serviceaccounts/token` (`kubectl create
 * token`), `pods/binding` and the bindings resource, and eviction bodies in JSON and protobuf.
 */
import { describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import { decodeObject, encodeObject } from './proto/envelope.ts';

const PB = 'application/vnd.kubernetes.protobuf';
const CLIENT_GO_ACCEPT = `${PB}, */*`;
const PODS = { group: '', version: 'v1', resource: 'pods' };

async function send(s: SimCluster, path: string, init: RequestInit = {}) {
  const res = await s.fetch(new Request(`http://sim${path}`, init));
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}
const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));
const pbPost = (obj: Record<string, unknown>, accept = CLIENT_GO_ACCEPT): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': PB, accept },
  body: encodeObject(obj),
});

function podOf(name: string, schedulerName?: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...(schedulerName ? { schedulerName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
  };
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('access reviews in protobuf', () => {
  const rbac = {
    tokens: { t: { user: 'dev' } },
    users: { dev: [{ verbs: ['get', 'list'], resources: ['pods'], namespaces: ['shop'] }] },
  };

  it('answers a protobuf SelfSubjectAccessReview in protobuf, deciding by RBAC', async () => {
    const s = new SimCluster({ name: 'm', rbac });
    const review = (verb: string) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'shop', verb, resource: 'pods' } },
    });
    for (const [verb, allowed] of [
      ['list', true],
      ['delete', false],
    ] as const) {
      const { res, bytes } = await send(s, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        ...pbPost(review(verb)),
        headers: { 'content-type': PB, accept: CLIENT_GO_ACCEPT, authorization: 'Bearer t' },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe(PB);
      const got = decodeObject(bytes) as any;
      expect(got.kind).toBe('SelfSubjectAccessReview');
      expect(got.spec.resourceAttributes.verb).toBe(verb);
      expect(!!got.status.allowed).toBe(allowed);
    }
    s.close();
  });

  it('a protobuf body that does not decode is kube’s 400, a form it cannot read a 415', async () => {
    const s = new SimCluster({ name: 'm' });
    const path = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
    let r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': PB, accept: 'application/json' },
      body: new Uint8Array([1, 2, 3]),
    });
    expect(r.res.status).toBe(400);
    expect(json(r.bytes).message).toMatch(
      /^the object provided is unrecognized \(must be of type SelfSubjectAccessReview\)/,
    );
    r = await send(s, path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(r.res.status).toBe(415);
    r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"spec":{}}',
    });
    expect(r.res.status).toBe(422);
    expect(json(r.bytes).message).toContain('exactly one of nonResourceAttributes or resourceAttributes');
    s.close();
  });

  it('answers SelfSubjectRulesReview (can-i --list) with the user’s rules in that namespace', async () => {
    const s = new SimCluster({ name: 'm', rbac });
    const body = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: { namespace: 'shop' },
    };
    const path = '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews';
    const ask = async (ns: string, auth?: string) => {
      const { res, bytes } = await send(s, path, {
        method: 'POST',
        headers: { 'content-type': PB, accept: CLIENT_GO_ACCEPT, ...(auth ? { authorization: auth } : {}) },
        body: encodeObject({ ...body, spec: { namespace: ns } }),
      });
      expect(res.status).toBe(201);
      return decodeObject(bytes) as any;
    };
    const shop = await ask('shop', 'Bearer t');
    expect(shop.status.resourceRules).toContainEqual({
      verbs: ['get', 'list'],
      apiGroups: ['*'],
      resources: ['pods'],
    });
    const other = await ask('other', 'Bearer t');
    expect(other.status.resourceRules.some((r: any) => r.resources.includes('pods'))).toBe(false);
    const admin = await ask('shop');
    expect(admin.status.resourceRules[0]).toEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    s.close();
  });
});

describe('error Statuses in the negotiated encoding', () => {
  it('protobuf for a typed client on a built-in resource, JSON for JSON clients and custom resources', async () => {
    const s = new SimCluster({ name: 'm', crds: true });
    let r = await send(s, '/api/v1/namespaces/default/secrets/nope', {
      headers: { accept: CLIENT_GO_ACCEPT },
    });
    expect(r.res.status).toBe(404);
    expect(r.res.headers.get('content-type')).toBe(PB);
    const st = decodeObject(r.bytes) as any;
    expect(st).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: 'secrets "nope" not found',
    });
    r = await send(s, '/api/v1/namespaces/default/secrets/nope', { headers: { accept: 'application/json' } });
    expect(r.res.headers.get('content-type')).toBe('application/json');
    expect(json(r.bytes).reason).toBe('NotFound');
    r = await send(s, '/apis/example.fleet.io/v1/namespaces/default/widgets/nope', {
      headers: { accept: CLIENT_GO_ACCEPT },
    });
    expect(r.res.status).toBe(404);
    expect(r.res.headers.get('content-type')).toBe('application/json');
    s.close();
  });
});

describe('serviceaccounts/token', () => {
  it('issues a TokenRequest for an existing service account, protobuf in and out', async () => {
    const s = new SimCluster({ name: 'm' });
    const { res, bytes } = await send(
      s,
      '/api/v1/namespaces/default/serviceaccounts/default/token',
      pbPost({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        metadata: {},
        spec: { audiences: ['api'], expirationSeconds: 1200 },
      }),
    );
    expect(res.status).toBe(201);
    const tr = decodeObject(bytes) as any;
    expect(tr.spec).toMatchObject({ audiences: ['api'], expirationSeconds: 1200 });
    const [, payload] = tr.status.token.split('.');
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims.sub).toBe('system:serviceaccount:default:default');
    expect(claims.aud).toEqual(['api']);
    expect(claims.exp - claims.iat).toBe(1200);
    expect(Date.parse(tr.status.expirationTimestamp) / 1000).toBe(claims.exp);
    s.close();
  });

  it('defaults to an hour for the API server’s audience; refuses short durations and missing accounts', async () => {
    const s = new SimCluster({ name: 'm' });
    const path = '/api/v1/namespaces/default/serviceaccounts/default/token';
    let r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.res.status).toBe(201);
    expect(json(r.bytes).spec).toMatchObject({
      expirationSeconds: 3600,
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"spec":{"expirationSeconds":60}}',
    });
    expect(r.res.status).toBe(422);
    expect(json(r.bytes).message).toContain('may not specify a duration less than 10 minutes');
    r = await send(s, '/api/v1/namespaces/default/serviceaccounts/ghost/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.res.status).toBe(404);
    expect(json(r.bytes).message).toBe('serviceaccounts "ghost" not found');
    s.close();
  });
});

describe('binding', () => {
  it('a pod for another scheduler waits; its Binding puts it on the node and the kubelet starts it', async () => {
    const s = new SimCluster({ name: 'm', podReadyDelayMs: 5 });
    let r = await send(s, '/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(podOf('manual', 'my-scheduler')),
    });
    expect(r.res.status).toBe(201);
    await new Promise((res) => setTimeout(res, 50));
    expect((s.get(PODS, 'default', 'manual') as any).spec.nodeName).toBeUndefined();
    r = await send(
      s,
      '/api/v1/namespaces/default/pods/manual/binding',
      pbPost({
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'manual' },
        target: { kind: 'Node', name: 'n1' },
      }),
    );
    expect(r.res.status).toBe(201);
    expect((s.get(PODS, 'default', 'manual') as any).spec.nodeName).toBe('n1');
    await until(() => (s.get(PODS, 'default', 'manual') as any).status.phase === 'Running');
    r = await send(s, '/api/v1/namespaces/default/bindings', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'manual' }, target: { kind: 'Node', name: 'n2' } }),
    });
    expect(r.res.status).toBe(409);
    expect(json(r.bytes).message).toBe(
      'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node "n1"',
    );
    s.close();
  });
});

describe('eviction', () => {
  async function withPod(name: string) {
    const s = new SimCluster({ name: 'm' });
    await send(s, '/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(podOf(name)),
    });
    return s;
  }

  it('reads the Eviction in protobuf and JSON; its dry run keeps the pod, a wrong name is a 400', async () => {
    const s = await withPod('p');
    const ev = (name: string, deleteOptions?: unknown) => ({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: 'default' },
      ...(deleteOptions ? { deleteOptions } : {}),
    });
    const path = '/api/v1/namespaces/default/pods/p/eviction';
    let r = await send(s, path, pbPost(ev('p', { dryRun: ['All'] })));
    expect(r.res.status).toBe(201);
    expect(s.get(PODS, 'default', 'p')).toBeDefined();
    r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ev('other')),
    });
    expect(r.res.status).toBe(400);
    expect(json(r.bytes).message).toBe('name in URL does not match name in Eviction object');
    r = await send(s, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ev('p', { preconditions: { uid: 'wrong' } })),
    });
    expect(r.res.status).toBe(409);
    r = await send(s, path, pbPost(ev('p')));
    expect(r.res.status).toBe(201);
    expect(s.get(PODS, 'default', 'p')).toBeUndefined();
    s.close();
  });
});

describe('ephemeral containers', () => {
  it('a debug container added by patch starts, runs its command into its log and terminates', async () => {
    const s = new SimCluster({ name: 'm', podReadyDelayMs: 5 });
    await send(s, '/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(podOf('target')),
    });
    await until(() => (s.get(PODS, 'default', 'target') as any).status.phase === 'Running');
    const path = '/api/v1/namespaces/default/pods/target/ephemeralcontainers';
    const dbg = { name: 'dbg', image: 'busybox', command: ['sh', '-c', 'echo hello from $HOSTNAME; exit 3'] };
    let r = await send(s, path, {
      method: 'PATCH',
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
      body: JSON.stringify({ spec: { ephemeralContainers: [dbg] } }),
    });
    expect(r.res.status).toBe(200);
    expect(json(r.bytes).spec.ephemeralContainers[0]).toMatchObject({
      ...dbg,
      terminationMessagePolicy: 'File',
    });
    const status = () =>
      (s.get(PODS, 'default', 'target') as any).status.ephemeralContainerStatuses?.[0]?.state ?? {};
    await until(() => status().terminated !== undefined);
    expect(status().terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    const log = await send(s, '/api/v1/namespaces/default/pods/target/log?container=dbg');
    expect(new TextDecoder().decode(log.bytes)).toContain('hello from target');
    // an existing one may not change or go
    r = await send(s, path, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { ephemeralContainers: [] } }),
    });
    expect(r.res.status).toBe(422);
    expect(json(r.bytes).message).toContain(
      'existing ephemeral containers "dbg" may not be removed or changed',
    );
    s.close();
  });
});
