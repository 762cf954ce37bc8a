import { describe, expect, it } from 'vitest';
import { encodeEnvelope, lenField } from '../kube/protobuf.ts';
import { concatBytes } from '../util/bytes.ts';
import { mergeRules } from './reviewrules.ts';
import { fleetReviewKind, mergeAccess, readReview, reviewTargets } from './reviews.ts';

describe('fleet access reviews', () => {
  it('knows the three reviews by resource and group, creates only', () => {
    const base = { verb: 'create', name: '', subresource: '' };
    expect(
      fleetReviewKind({ ...base, apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' }),
    ).toBe('SelfSubjectAccessReview');
    expect(
      fleetReviewKind({ ...base, apiGroup: 'authentication.k8s.io', resource: 'selfsubjectreviews' }),
    ).toBe('SelfSubjectReview');
    expect(
      fleetReviewKind({ ...base, apiGroup: 'authentication.k8s.io', resource: 'selfsubjectaccessreviews' }),
    ).toBe(undefined);
    expect(
      fleetReviewKind({
        ...base,
        verb: 'list',
        apiGroup: 'authorization.k8s.io',
        resource: 'selfsubjectrulesreviews',
      }),
    ).toBe(undefined);
  });

  it('decodes a protobuf SelfSubjectAccessReview as kubectl sends it', () => {
    const attrs = concatBytes([
      lenField(1, 'shop'),
      lenField(2, 'list'),
      lenField(5, 'pods'),
      lenField(9, lenField(1, 'app=web')),
    ]);
    const raw = concatBytes([lenField(1, new Uint8Array(0)), lenField(2, lenField(1, attrs))]);
    const bytes = encodeEnvelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', raw);
    const r = readReview('SelfSubjectAccessReview', 'authorization.k8s.io', { kind: 'protobuf', bytes });
    expect('code' in r).toBe(false);
    expect((r as { object: any }).object.spec).toEqual({
      resourceAttributes: {
        namespace: 'shop',
        verb: 'list',
        resource: 'pods',
        labelSelector: { rawSelector: 'app=web' },
      },
    });
    const bad = readReview('SelfSubjectAccessReview', 'authorization.k8s.io', {
      kind: 'protobuf',
      bytes: new Uint8Array([0x6b, 0x38, 0x73, 0, 0xff]),
    });
    expect('code' in bad && bad.code).toBe(400);
  });

  it('a fleet-named namespace asks its cluster alone, with the plain name', () => {
    const review = {
      object: { spec: { resourceAttributes: { namespace: 'shop.clusterspace.member2', verb: 'get' } } },
      breakdown: false,
    };
    const t = reviewTargets(review, ['karmada', 'member1', 'member2']);
    expect('code' in t).toBe(false);
    const ok = t as Exclude<typeof t, { code: number }>;
    expect(ok.clusters).toEqual(['member2']);
    expect(ok.specFor('member2').resourceAttributes.namespace).toBe('shop');
    expect(review.object.spec.resourceAttributes.namespace).toBe('shop.clusterspace.member2');
    const other = reviewTargets(review, ['member1']);
    expect('code' in other && other.code).toBe(400);
  });

  it('allowed only when every cluster allows; the reason names the rest', () => {
    const yes = mergeAccess([
      { cluster: 'member1', status: { allowed: true } },
      { cluster: 'member2', status: { allowed: true, reason: 'rbac' } },
    ]);
    expect(yes.status.allowed).toBe(true);
    const no = mergeAccess([
      { cluster: 'member1', status: { allowed: true } },
      { cluster: 'member2', status: { allowed: false, denied: true, reason: 'policy' } },
      { cluster: 'member3', failed: 'unreachable (refused)' },
    ]);
    expect(no.status).toEqual({
      allowed: false,
      denied: true,
      reason: 'member2 not allowed: policy; member3 could not be asked: unreachable (refused)',
    });
    expect(no.perCluster.member3).toEqual({ allowed: false, reason: 'unreachable (refused)' });
    expect(mergeAccess([]).status.allowed).toBe(false);
  });
});

describe('rules that hold in every cluster', () => {
  const star = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
  it('keeps what every cluster covers, the narrower grant of a starred one', () => {
    const m = mergeRules([
      {
        cluster: 'karmada',
        status: { resourceRules: [star], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] },
      },
      {
        cluster: 'member1',
        status: {
          resourceRules: [
            { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
            { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
          ],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api/*', '/healthz'] }],
        },
      },
      {
        cluster: 'member2',
        status: {
          resourceRules: [
            { verbs: ['get'], apiGroups: [''], resources: ['pods', 'services'] },
            { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] },
          ],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api*'] }],
          incomplete: false,
        },
      },
    ]);
    expect(m.resourceRules).toEqual([
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
    ]);
    expect(m.nonResourceRules).toEqual([{ verbs: ['get'], nonResourceURLs: ['/api/*'] }]);
    expect(m.incomplete).toBe(false);
  });

  it('subresources by */sub; incomplete when a cluster is or cannot be asked', () => {
    const m = mergeRules([
      {
        cluster: 'a',
        status: { resourceRules: [{ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }] },
      },
      {
        cluster: 'b',
        status: {
          resourceRules: [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }],
          incomplete: true,
        },
      },
    ]);
    expect(m.resourceRules).toEqual([
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] },
    ]);
    expect(m.incomplete).toBe(true);
    const down = mergeRules([
      { cluster: 'a', status: { resourceRules: [star] } },
      { cluster: 'b', failed: 'unreachable' },
    ]);
    expect(down.incomplete).toBe(true);
    expect(down.evaluationError).toBe('b: could not be asked: unreachable');
    expect(mergeRules([]).incomplete).toBe(true);
  });
});
