/**
 * The simulated cluster over HTTP in protobuf, the way kubectl 1.35 and client-go talk to it: protobuf
 * request bodies for every built-in kind, protobuf answers for clients that ask for them first, typed
 * watches in length-delimited frames, kube's 400/415 Statuses for bodies that do not decode.
 */
import { describe, expect, it } from 'vitest';
import { SimCluster } from '../cluster.ts';
import { decodeObject, decodeWatchFrames, encodeEnvelope, encodeObject } from './envelope.ts';

const PB = 'application/vnd.kubernetes.protobuf';
/** What client-go's typed clients send: protobuf first, JSON as the fallback. */
const CLIENT_GO_ACCEPT = `${PB}, application/json`;

function sim(crds = false): SimCluster {
  return new SimCluster({ name: 'member1', crds });
}

async function send(s: SimCluster, path: string, init: RequestInit = {}) {
  const res = await s.fetch(new Request(`http://sim${path}`, init));
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

describe('protobuf request bodies', () => {
  it('creates a Secret, a Deployment, a Namespace and a Job from protobuf, as kubectl create sends them', async () => {
    const s = sim();
    const cases: [string, Record<string, unknown>][] = [
      [
        '/api/v1/namespaces/default/secrets',
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { a: 'Yg==' }, type: 'Opaque' },
      ],
      [
        '/apis/apps/v1/namespaces/default/deployments',
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd1', labels: { app: 'd1' } },
          spec: {
            replicas: 0,
            selector: { matchLabels: { app: 'd1' } },
            template: {
              metadata: { labels: { app: 'd1' } },
              spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] },
            },
            strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
          },
        },
      ],
      ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1' } }],
      [
        '/apis/batch/v1/namespaces/default/jobs',
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'j1' },
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: 'Never',
                containers: [{ name: 'c', image: 'busybox', command: ['echo', 'hi'] }],
              },
            },
          },
        },
      ],
    ];
    for (const [path, obj] of cases) {
      const { res, bytes } = await send(s, path, {
        method: 'POST',
        headers: { 'content-type': PB, accept: 'application/json' },
        body: encodeObject(obj),
      });
      expect(res.status, `${path}: ${new TextDecoder().decode(bytes)}`).toBe(201);
      const created = json(bytes);
      expect(created.kind).toBe(obj.kind);
      expect(created.metadata.name).toBe((obj.metadata as { name: string }).name);
    }
    const d = json((await send(s, '/apis/apps/v1/namespaces/default/deployments/d1')).bytes);
    expect(d.spec.replicas).toBe(0);
    expect(d.spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: 1 });
    const sec = json((await send(s, '/api/v1/namespaces/default/secrets/s1')).bytes);
    expect(sec.data).toEqual({ a: 'Yg==' });
    const job = json((await send(s, '/apis/batch/v1/namespaces/default/jobs/j1')).bytes);
    expect(job.spec.backoffLimit).toBe(0);
  });

  it('answers a body that does not decode with kube-apiserver transformDecodeError 400s', async () => {
    const s = sim();
    const post = (body: Uint8Array<ArrayBuffer>) =>
      send(s, '/api/v1/namespaces/default/secrets', {
        method: 'POST',
        headers: { 'content-type': PB },
        body,
      });
    const notEnvelope = await post(new TextEncoder().encode('{"kind":"Secret"}'));
    expect(notEnvelope.res.status).toBe(400);
    expect(json(notEnvelope.bytes)).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      code: 400,
      message:
        'the object provided is unrecognized (must be of type Secret): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({"kind":"Secret"})',
    });
    const empty = await post(new Uint8Array([0x6b, 0x38, 0x73, 0x00]));
    expect(json(empty.bytes).message).toBe(
      'the object provided is unrecognized (must be of type Secret): empty body (6b387300)',
    );
    // a valid envelope whose raw Secret message is cut short
    const cut = await post(encodeEnvelope('v1', 'Secret', new Uint8Array([0x0a, 0x05, 0x0a])));
    expect(cut.res.status).toBe(400);
    expect(json(cut.bytes).message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: unexpected EOF',
    );
    const wrong = await post(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
    expect(wrong.res.status).toBe(400);
  });

  it('refuses protobuf for a custom resource with 415, as its serializers have none', async () => {
    const s = sim(true);
    const { res, bytes } = await send(s, '/apis/example.fleet.io/v1/namespaces/default/widgets', {
      method: 'POST',
      headers: { 'content-type': PB },
      body: encodeEnvelope('example.fleet.io/v1', 'Widget', new Uint8Array()),
    });
    expect(res.status).toBe(415);
    expect(json(bytes)).toMatchObject({ reason: 'UnsupportedMediaType', code: 415 });
  });
});

describe('protobuf answers', () => {
  it('serves objects and lists in protobuf to a client that lists protobuf first', async () => {
    const s = sim();
    await send(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'cm' }, data: { k: 'v' } }),
    });
    const one = await send(s, '/api/v1/namespaces/default/configmaps/cm', {
      headers: { accept: CLIENT_GO_ACCEPT },
    });
    expect(one.res.headers.get('content-type')).toBe(PB);
    const cm = decodeObject(one.bytes) as {
      kind: string;
      data: unknown;
      metadata: { resourceVersion: string };
    };
    expect(cm).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
    expect(cm.metadata.resourceVersion).toMatch(/^\d+$/);

    const list = await send(s, '/api/v1/namespaces/default/configmaps', {
      headers: { accept: CLIENT_GO_ACCEPT },
    });
    expect(list.res.headers.get('content-type')).toBe(PB);
    const l = decodeObject(list.bytes) as { kind: string; items: { metadata: { name: string } }[] };
    expect(l.kind).toBe('ConfigMapList');
    expect(l.items.map((i) => i.metadata.name)).toContain('cm');

    const plain = await send(s, '/api/v1/namespaces/default/configmaps/cm', {
      headers: { accept: 'application/json' },
    });
    expect(plain.res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('serves a custom resource in JSON to the same client (no protobuf for CRs)', async () => {
    const s = sim(true);
    const { res } = await send(s, '/apis/example.fleet.io/v1/widgets', {
      headers: { accept: CLIENT_GO_ACCEPT },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('streams a typed watch as length-delimited WatchEvent frames', async () => {
    const s = sim();
    const res = await s.fetch(
      new Request('http://sim/api/v1/namespaces/default/configmaps?watch=true', {
        headers: { accept: CLIENT_GO_ACCEPT },
      }),
    );
    expect(res.headers.get('content-type')).toBe(`${PB};stream=watch`);
    const reader = res.body!.getReader();
    const created = await send(s, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': PB },
      body: encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' }, data: { a: '1' } }),
    });
    expect(created.res.status).toBe(201);
    let buf = new Uint8Array();
    let events: ReturnType<typeof decodeWatchFrames> = [];
    const w1 = () => events.find((e) => (e.object.metadata as { name: string }).name === 'w1');
    while (!w1()) {
      const { value, done } = await reader.read();
      if (done) break;
      buf = new Uint8Array([...buf, ...value]);
      events = decodeWatchFrames(buf);
    }
    await reader.cancel();
    // a watch without resourceVersion starts with the existing objects (seeded samples), each ADDED
    expect(events.every((e) => e.type === 'ADDED')).toBe(true);
    expect(w1()).toMatchObject({
      type: 'ADDED',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' }, data: { a: '1' } },
    });
  });

  it('reads and answers the scale subresource in protobuf (autoscaling/v1 Scale)', async () => {
    const s = sim();
    await send(s, '/apis/apps/v1/namespaces/default/deployments', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        metadata: { name: 'd' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'd' } },
          template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      }),
    });
    const { res, bytes } = await send(s, '/apis/apps/v1/namespaces/default/deployments/d/scale', {
      method: 'PUT',
      headers: { 'content-type': PB, accept: CLIENT_GO_ACCEPT },
      body: encodeObject({
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'd' },
        spec: { replicas: 0 },
      }),
    });
    expect(res.status).toBe(200);
    expect(decodeObject(bytes)).toMatchObject({ kind: 'Scale', spec: { replicas: 0 } });
  });
});

describe('protobuf bodies outside resources.ts', () => {
  it('reads an access review body as kubectl auth can-i sends it', async () => {
    const { isProtobufBody, readProtobufRequest } = await import('../protobuf.ts');
    const review = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } },
    };
    const req = new Request('http://sim/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      headers: { 'content-type': `${PB}; charset=binary` },
      body: encodeObject(review),
    });
    expect(isProtobufBody(req)).toBe(true);
    expect(await readProtobufRequest(req, 'authorization.k8s.io/v1', 'SelfSubjectAccessReview')).toEqual(
      review,
    );
  });
});

describe('protobuf DeleteOptions', () => {
  it('deletes with a protobuf DeleteOptions body, as Helm release storage does', async () => {
    const s = sim();
    const created = await send(s, '/api/v1/namespaces/default/secrets', {
      method: 'POST',
      headers: { 'content-type': PB },
      body: encodeObject({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'sh.helm.release.v1.r.v1' },
        type: 'helm.sh/release.v1',
      }),
    });
    expect(created.res.status).toBe(201);
    const del = await send(s, '/api/v1/namespaces/default/secrets/sh.helm.release.v1.r.v1', {
      method: 'DELETE',
      headers: { 'content-type': PB, accept: CLIENT_GO_ACCEPT },
      body: encodeObject({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }),
    });
    expect(del.res.status).toBe(200);
    const gone = await send(s, '/api/v1/namespaces/default/secrets/sh.helm.release.v1.r.v1');
    expect(gone.res.status).toBe(404);
    const bad = await send(s, '/api/v1/namespaces/default/secrets/x', {
      method: 'DELETE',
      headers: { 'content-type': PB },
      body: encodeObject({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Sometimes' }),
    });
    expect(bad.res.status).toBe(422);
  });
});

describe('error Statuses in protobuf', () => {
  it('statusAnswer writes a Status in protobuf for a protobuf-first client, JSON for the rest', async () => {
    const { statusAnswer } = await import('../protobuf.ts');
    const st = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'secrets "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'secrets' },
      code: 404,
    } as const;
    const pb = statusAnswer(CLIENT_GO_ACCEPT, st, true);
    expect(pb.status).toBe(404);
    expect(pb.headers.get('content-type')).toBe(PB);
    expect(decodeObject(new Uint8Array(await pb.arrayBuffer()))).toEqual(st);
    expect(statusAnswer('application/json', st, true).headers.get('content-type')).toMatch(/json/);
    expect(statusAnswer(CLIENT_GO_ACCEPT, st, false).headers.get('content-type')).toMatch(/json/);
  });
});
