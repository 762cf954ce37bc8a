/**
 * Server-side field validation as kube-apiserver's strict decoder applies it: Strict refuses unknown and
 * duplicate fields with its exact message, Warn (also the default) answers with Warning headers, Ignore
 * says nothing; the Go types' shapes come from the wire schema, so every built-in kind is covered.
 */
import { describe, expect, it } from 'vitest';
import { buildCatalog } from './catalog/index.ts';
import { SimCluster } from './cluster.ts';
import { duplicateFields, unknownFields } from './fieldvalidation.ts';

const deployment = (extra: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    },
    ...extra,
  },
});

async function post(s: SimCluster, query: string, body: string) {
  const res = await s.fetch(
    new Request(`http://sim/apis/apps/v1/namespaces/default/deployments${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    }),
  );
  return { res, body: await res.json() };
}

describe('unknown and duplicate fields', () => {
  it('finds unknown fields at any depth, inline members and maps of messages included', () => {
    const d = deployment({ replicaz: 3 }) as any;
    d.spec.template.spec.containers[0].imagez = 'x';
    d.metadata.labelz = {};
    expect(unknownFields('apps/v1', 'Deployment', d)).toEqual([
      'metadata.labelz',
      'spec.template.spec.containers[0].imagez',
      'spec.replicaz',
    ]);
    expect(unknownFields('apps/v1', 'Deployment', deployment({}))).toEqual([]);
    // an ephemeral container's fields come from the inlined EphemeralContainerCommon
    expect(
      unknownFields('v1', 'Pod', {
        spec: { ephemeralContainers: [{ name: 'd', image: 'b', targetContainerName: 'c' }] },
      }),
    ).toEqual([]);
    expect(unknownFields('example.fleet.io/v1', 'Widget', {})).toBeUndefined();
  });

  it('finds nothing unknown in any object the simulated clusters are seeded with', () => {
    let checked = 0;
    for (const role of ['member', 'karmada'] as const) {
      for (const s of buildCatalog({ role, crds: true, kubernetesVersion: 'v1.35.0' }).sampleObjects(
        'member1',
      )) {
        const gv = s.group ? `${s.group}/${s.version}` : s.version;
        const got = unknownFields(gv, s.object.kind ?? '', s.object);
        if (got === undefined) continue;
        expect(got, `${gv} ${s.object.kind} ${s.object.metadata?.name}`).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('finds keys given twice, by path, in document order', () => {
    expect(duplicateFields('{"a":1,"b":{"c":[{"d":1,"d":2}],"c":3},"a":2}')).toEqual([
      'b.c[0].d',
      'b.c',
      'a',
    ]);
    expect(duplicateFields('{"a":"x\\"y","b":[1,2,{"e":{}}]}')).toEqual([]);
    expect(duplicateFields('not json')).toEqual([]);
  });
});

describe('fieldValidation on create', () => {
  it('Strict refuses with kube’s message; nothing is stored', async () => {
    const s = new SimCluster({ name: 'm' });
    const { res, body } = await post(
      s,
      '?fieldValidation=Strict',
      JSON.stringify(deployment({ replicaz: 3 })),
    );
    expect(res.status).toBe(400);
    expect(body.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicaz"',
    );
    expect(
      s.get({ group: 'apps', version: 'v1', resource: 'deployments' }, 'default', 'web'),
    ).toBeUndefined();
    const dup = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","name":"web"},"spec":${JSON.stringify(deployment({}).spec)}}`;
    const r2 = await post(s, '?fieldValidation=Strict', dup);
    expect(r2.body.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "metadata.name"',
    );
    s.close();
  });

  it('Warn and the default answer with Warning headers; Ignore is silent; both store the object', async () => {
    const s = new SimCluster({ name: 'm' });
    for (const [q, warned] of [
      ['?fieldValidation=Warn', true],
      ['', true],
      ['?fieldValidation=Ignore', false],
    ] as const) {
      const d = deployment({ replicaz: 3 }) as any;
      d.metadata.name = `web${q.length}`;
      const { res } = await post(s, q, JSON.stringify(d));
      expect(res.status).toBe(201);
      expect(res.headers.get('warning')).toBe(warned ? '299 - "unknown field \\"spec.replicaz\\""' : null);
    }
    s.close();
  });

  it('an unknown directive is a 422 on the options', async () => {
    const s = new SimCluster({ name: 'm' });
    const { res, body } = await post(s, '?fieldValidation=Loud', JSON.stringify(deployment({})));
    expect(res.status).toBe(422);
    expect(body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
    s.close();
  });
});

describe('fieldValidation on patch', () => {
  async function patch(s: SimCluster, type: string, query: string, body: string) {
    const res = await s.fetch(
      new Request(`http://sim/apis/apps/v1/namespaces/default/deployments/web${query}`, {
        method: 'PATCH',
        headers: { 'content-type': type },
        body,
      }),
    );
    return { res, body: await res.json() };
  }

  it('merge, JSON and strategic patches: Strict refuses what the patched object does not have, Warn warns', async () => {
    const s = new SimCluster({ name: 'm' });
    expect((await post(s, '', JSON.stringify(deployment({})))).res.status).toBe(201);
    const clean = await patch(
      s,
      'application/merge-patch+json',
      '?fieldValidation=Strict',
      '{"spec":{"replicas":2}}',
    );
    expect(clean.res.status).toBe(200);
    expect(clean.res.headers.get('warning')).toBeNull();

    // NewInvalid with no kind and no name: kube's message starts with a space (kubectl: 'The  "" is invalid')
    let r = await patch(
      s,
      'application/strategic-merge-patch+json',
      '?fieldValidation=Strict',
      '{"spec":{"replicaz":3}}',
    );
    expect(r.res.status).toBe(422);
    expect(r.body.message).toBe(
      ' "" is invalid: patch: Invalid value: "map[spec:map[replicaz:3]]": strict decoding error: unknown field "spec.replicaz"',
    );
    r = await patch(
      s,
      'application/merge-patch+json',
      '?fieldValidation=Strict',
      '{"spec":{"replicaz":3,"replicaz":4}}',
    );
    expect(r.res.status).toBe(422);
    expect(r.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: duplicate field "spec.replicaz", unknown field "spec.replicaz"$/,
    );
    r = await patch(s, 'application/json-patch+json', '', '[{"op":"add","path":"/spec/replicaz","value":3}]');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('warning')).toBe('299 - "unknown field \\"spec.replicaz\\""');
    r = await patch(s, 'application/merge-patch+json', '?fieldValidation=Ignore', '{"spec":{"other":1}}');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('warning')).toBeNull();
    s.close();
  });
});
