/**
 * Echoes of an object's own name on the way in (references-table.ts): kubectl's generators name the
 * container after the object (`kubectl run x.clusterspace.m1`, `create job`, `create cronjob`), and a
 * container name must be a DNS-1123 label, so the member would refuse the fleet name. Exactly the object's
 * fleet name becomes its plain name, in JSON, YAML and protobuf bodies and the last-applied record; every
 * other container name is written as it came.
 */
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, lenField, readFields } from '../kube/protobuf.ts';
import { bodyForCluster, parseObjectBody } from '../plan/body.ts';
import { concatBytes as concat } from '../util/bytes.ts';
import { LAST_APPLIED, objectForCluster, protobufObjectForCluster } from './writes.ts';

const ctx = (cluster: string, url?: { fleet: string; plain: string }) => ({
  cluster,
  membership: ['karmada', 'm1', 'm2'],
  ...(url ? { url } : {}),
});
const containers = (...names: string[]) => names.map((name) => ({ name, image: 'nginx' }));

// what kubectl's generators send, by fleet name (kubectl 1.35: run, create job, create cronjob)
const run = (name: string, c = name) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { run: name } },
  spec: { containers: containers(c) },
});
const job = (name: string, c = name) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: { spec: { containers: containers(c), restartPolicy: 'Never' } } },
});
const cronjob = (name: string, c = name) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: {
    schedule: '* * * * *',
    jobTemplate: { metadata: { name }, spec: { template: { spec: { containers: containers(c) } } } },
  },
});
const namesIn = (o: any): string[] =>
  (
    o.spec.containers ??
    o.spec.template?.spec.containers ??
    o.spec.jobTemplate.spec.template.spec.containers
  ).map((c: { name: string }) => c.name);

describe('a container named after the object, written by fleet name', () => {
  it.each([
    ['kubectl run', run],
    ['kubectl create job', job],
    ['kubectl create cronjob', cronjob],
  ])('%s: the container gets the plain name the object gets', (_, make) => {
    const r = objectForCluster(make('solo.clusterspace.m1'), ctx('m1'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.metadata.name).toBe('solo');
    expect(namesIn(r.value)).toEqual(['solo']);
  });

  it('only exactly the fleet name: other containers, plain objects and other names are written as they came', () => {
    const pod = run('solo.clusterspace.m1');
    pod.spec.containers.push(...containers('web', 'other.clusterspace.m1', 'solo'));
    const r = objectForCluster(pod, ctx('m1'));
    expect(r.ok && namesIn(r.value)).toEqual(['solo', 'web', 'other.clusterspace.m1', 'solo']);
    // by plain name, nothing to echo
    const plain = objectForCluster(run('solo', 'solo.clusterspace.m1'), ctx('m1'));
    expect(plain.ok && namesIn(plain.value)).toEqual(['solo.clusterspace.m1']);
    // init containers are no generator's: left to the cluster's validation
    const init = run('solo.clusterspace.m1') as any;
    init.spec.initContainers = containers('solo.clusterspace.m1');
    const i = objectForCluster(init, ctx('m1'));
    expect(i.ok && i.value.spec.initContainers[0].name).toBe('solo.clusterspace.m1');
  });

  it('an update without a name in its body compares with the URL name', () => {
    const { metadata: _, ...body } = job('once.clusterspace.m1');
    const r = objectForCluster(body as never, ctx('m1', { fleet: 'once.clusterspace.m1', plain: 'once' }));
    expect(r.ok && namesIn(r.value)).toEqual(['once']);
  });

  it('YAML bodies and the last-applied record go the same way', () => {
    const record = JSON.stringify(job('once.clusterspace.m1'));
    const yaml = [
      'apiVersion: batch/v1',
      'kind: Job',
      'metadata:',
      '  name: once.clusterspace.m1',
      `  annotations: {${LAST_APPLIED}: '${record}'}`,
      'spec: {template: {spec: {containers: [{name: once.clusterspace.m1, image: busybox}]}}}',
      '',
    ].join('\n');
    const body = parseObjectBody(new TextEncoder().encode(yaml), 'application/yaml');
    const r = bodyForCluster('create', body as never, ctx('m1'));
    expect(r.ok && r.value.kind === 'json').toBe(true);
    if (!r.ok || r.value.kind !== 'json') return;
    const out = r.value.value as any;
    expect(namesIn(out)).toEqual(['once']);
    expect(namesIn(JSON.parse(out.metadata.annotations[LAST_APPLIED]))).toEqual(['once']);
  });
});

// protobuf as kubectl's typed client sends it: Pod{1: meta, 2: PodSpec{2: Container{1: name, 2: image}}}
const pbContainer = (name: string) => lenField(2, concat([lenField(1, name), lenField(2, 'nginx')]));
const pbPodSpec = (...names: string[]) => concat(names.map(pbContainer));
const pbBody = (apiVersion: string, kind: string, name: string, spec: Uint8Array, metaLast = false) => {
  const parts = [lenField(1, lenField(1, name)), lenField(2, spec)];
  return encodeEnvelope(apiVersion, kind, concat(metaLast ? parts.reverse() : parts));
};
/** the strings at the end of `path` (field numbers) in the body's object */
function stringsAt(body: Uint8Array, path: number[]): string[] {
  const { raw } = decodeEnvelope(body);
  let at = [raw];
  for (const num of path)
    at = at.flatMap((b) =>
      readFields(b)
        .filter((f) => f.num === num)
        .map((f) => b.subarray(f.valueStart, f.valueEnd)),
    );
  return at.map((b) => new TextDecoder().decode(b));
}

describe('in protobuf bodies', () => {
  it('kubectl run: Pod spec.containers[].name (2.2.1)', () => {
    for (const metaLast of [false, true]) {
      const body = pbBody(
        'v1',
        'Pod',
        'solo.clusterspace.m1',
        pbPodSpec('solo.clusterspace.m1', 'web'),
        metaLast,
      );
      const r = protobufObjectForCluster(body, ctx('m1'));
      expect(r.ok).toBe(true);
      if (r.ok) expect(stringsAt(r.value, [2, 2, 1])).toEqual(['solo', 'web']);
    }
  });

  it('kubectl create job and cronjob: the template containers (2.6.2.2.1, 2.5.2.6.2.2.1)', () => {
    const podTemplate = lenField(2, pbPodSpec('once.clusterspace.m1'));
    const jobSpec = lenField(6, podTemplate);
    const j = protobufObjectForCluster(pbBody('batch/v1', 'Job', 'once.clusterspace.m1', jobSpec), ctx('m1'));
    expect(j.ok && stringsAt(j.value, [2, 6, 2, 2, 1])).toEqual(['once']);
    const cronSpec = lenField(5, lenField(2, jobSpec));
    const c = protobufObjectForCluster(
      pbBody('batch/v1', 'CronJob', 'once.clusterspace.m1', cronSpec),
      ctx('m1'),
    );
    expect(c.ok && stringsAt(c.value, [2, 5, 2, 6, 2, 2, 1])).toEqual(['once']);
  });

  it('a container not named exactly the object is kept byte for byte', () => {
    const body = pbBody('v1', 'Pod', 'solo.clusterspace.m1', pbPodSpec('web', 'other.clusterspace.m1'));
    const r = protobufObjectForCluster(body, ctx('m1'));
    expect(r.ok && stringsAt(r.value, [2, 2, 1])).toEqual(['web', 'other.clusterspace.m1']);
  });
});
