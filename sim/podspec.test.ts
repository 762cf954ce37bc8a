/**
 * Container names are validated as kube-apiserver's pod validation does, in every kind with a pod spec:
 * `kubectl run x.clusterspace.member2` sends a container named after the object, which a real member
 * refuses (422, "must not contain dots"), and the simulator must refuse it the same way.
 */
import { describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import { dns1123LabelErrors } from './podspec.ts';

const send = async (s: SimCluster, method: string, path: string, body: unknown) => {
  const res = await s.fetch(
    new Request(`http://sim${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  return { code: res.status, body: (await res.json()) as any };
};

const spec = (name: string) => ({
  containers: [
    { name: 'ok', image: 'nginx' },
    { name, image: 'nginx' },
  ],
  initContainers: [{ name: 'init', image: 'busybox' }],
});
const template = (name: string) => ({ metadata: { labels: { app: 'a' } }, spec: spec(name) });

// [path of the collection, body with a bad second container, where kube puts the pod spec]
const KINDS: Array<[string, (n: string) => Record<string, unknown>, string]> = [
  ['/api/v1/namespaces/default/pods', (n) => ({ kind: 'Pod', spec: spec(n) }), 'spec'],
  [
    '/api/v1/namespaces/default/podtemplates',
    (n) => ({ kind: 'PodTemplate', template: template(n) }),
    'template.spec',
  ],
  [
    '/apis/apps/v1/namespaces/default/deployments',
    (n) => ({ kind: 'Deployment', spec: { selector: { matchLabels: { app: 'a' } }, template: template(n) } }),
    'spec.template.spec',
  ],
  [
    '/apis/batch/v1/namespaces/default/jobs',
    (n) => ({ kind: 'Job', spec: { template: { spec: { ...spec(n), restartPolicy: 'Never' } } } }),
    'spec.template.spec',
  ],
  [
    '/apis/batch/v1/namespaces/default/cronjobs',
    (n) => ({
      kind: 'CronJob',
      spec: {
        schedule: '* * * * *',
        jobTemplate: { spec: { template: { spec: { ...spec(n), restartPolicy: 'Never' } } } },
      },
    }),
    'spec.jobTemplate.spec.template.spec',
  ],
];

describe('container names (pod validation)', () => {
  it('IsDNS1123Label: dots, other characters, length', () => {
    expect(dns1123LabelErrors('web-1')).toEqual([]);
    expect(dns1123LabelErrors('solo.clusterspace.member2')).toEqual(['must not contain dots']);
    expect(dns1123LabelErrors('Web')[0]).toMatch(/^a lowercase RFC 1123 label must consist of/);
    expect(dns1123LabelErrors('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  for (const [path, body, at] of KINDS)
    it(`refuses a dotted container name in ${at} (${path.split('/').pop()}) with kube's 422`, async () => {
      const s = new SimCluster({ name: 'm' });
      const bad = { metadata: { name: 'solo' }, ...body('solo.clusterspace.member2') };
      const r = await send(s, 'POST', path, bad);
      expect(r.code).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      const field = `${at}.containers[1].name`;
      expect(r.body.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "solo.clusterspace.member2": must not contain dots',
          field,
        },
      ]);
      expect(r.body.message).toContain(
        `"solo" is invalid: ${field}: Invalid value: "solo.clusterspace.member2": must not contain dots`,
      );
      // a valid one is created; an update to a bad one is refused the same way
      const good = await send(s, 'POST', path, { metadata: { name: 'solo' }, ...body('solo') });
      expect(good.code).toBe(201);
      const put = await send(s, 'PUT', `${path}/solo`, bad);
      expect(put.code).toBe(422);
      expect(put.body.details.causes[0].field).toBe(field);
    });

  it('an ephemeral container added through pods/ephemeralcontainers is checked (kubectl debug)', async () => {
    const s = new SimCluster({ name: 'm' });
    const pods = '/api/v1/namespaces/default/pods';
    expect((await send(s, 'POST', pods, { metadata: { name: 'p' }, spec: spec('web') })).code).toBe(201);
    const pod = (await send(s, 'GET', `${pods}/p`, undefined)).body;
    pod.spec.ephemeralContainers = [{ name: 'debugger.x', image: 'busybox' }];
    const r = await send(s, 'PUT', `${pods}/p/ephemeralcontainers`, pod);
    expect(r.code).toBe(422);
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "debugger.x": must not contain dots',
        field: 'spec.ephemeralContainers[0].name',
      },
    ]);
  });

  it('init containers are checked too; a missing name is required', async () => {
    const s = new SimCluster({ name: 'm' });
    const r = await send(s, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: {
        containers: [{ image: 'nginx' }],
        initContainers: [{ name: 'In_it', image: 'busybox' }],
      },
    });
    expect(r.code).toBe(422);
    expect(r.body.details.causes.map((c: any) => `${c.field} ${c.reason}`)).toEqual([
      'spec.containers[0].name FieldValueRequired',
      'spec.initContainers[0].name FieldValueInvalid',
    ]);
  });
});
