import { describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import { call } from './testing.ts';

function sim(): SimCluster {
  const s = new SimCluster({ name: 'm1', seed: false });
  s.rbac = {
    users: {
      alice: [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'], namespaces: ['web'] },
      ],
      robot: [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['alice'] }],
    },
    groups: { readers: [{ verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] }] },
    tokens: { 'robot-token': { user: 'robot' } },
  };
  return s;
}

const as = (user: string, groups: string[] = []) => {
  const h = new Headers({ 'Impersonate-User': user });
  for (const g of groups) h.append('Impersonate-Group', g);
  return { headers: h };
};

describe('simulated RBAC', () => {
  it('allows what the rules say, for the impersonated user', async () => {
    const s = sim();
    expect((await call(s, '/api/v1/namespaces/web/pods', as('alice'))).status).toBe(200);
    expect((await call(s, '/apis/apps/v1/deployments', as('bob', ['readers']))).status).toBe(200);
    // discovery is open to everyone
    expect((await call(s, '/api/v1', as('nobody'))).status).toBe(200);
    // no impersonation: the fleet's own (superuser) credential
    expect((await call(s, '/api/v1/secrets')).status).toBe(200);
  });

  it('answers 403 in kube-apiserver’s words', async () => {
    const s = sim();
    const cases: Array<[string, string]> = [
      [
        '/api/v1/pods',
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope',
      ],
      [
        '/api/v1/namespaces/db/pods/x/log',
        'pods "x" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "db"',
      ],
      [
        '/apis/apps/v1/namespaces/web/deployments',
        'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "web"',
      ],
    ];
    for (const [path, message] of cases) {
      const r = await call(s, path, as('alice'));
      expect(r.status).toBe(403);
      expect(r.body.message).toBe(message);
    }
    const r = await call(s, '/api/v1/namespaces/web/pods/p', as('alice'));
    expect(r.status).toBe(404);
  });

  it('checks that the requester may impersonate', async () => {
    const s = sim();
    const h = (u: string) => ({ headers: { Authorization: 'Bearer robot-token', 'Impersonate-User': u } });
    expect((await call(s, '/api/v1/namespaces/web/pods', h('alice'))).status).toBe(200);
    const r = await call(s, '/api/v1/namespaces/web/pods', h('bob'));
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(
      'users "bob" is forbidden: User "robot" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it('answers SubjectAccessReview, SelfSubjectAccessReview and SelfSubjectReview', async () => {
    const s = sim();
    const sar = (spec: unknown) =>
      call(s, '/apis/authorization.k8s.io/v1/subjectaccessreviews', { method: 'POST', json: { spec } });
    const yes = await sar({
      user: 'robot',
      resourceAttributes: { verb: 'impersonate', resource: 'users', name: 'alice' },
    });
    expect(yes.status).toBe(201);
    expect(yes.body.status.allowed).toBe(true);
    const no = await sar({
      user: 'robot',
      resourceAttributes: { verb: 'impersonate', resource: 'users', name: 'eve' },
    });
    expect(no.body.status.allowed).toBe(false);
    expect((await sar(undefined)).status).toBe(422); // a validation error, as kube answers an empty spec

    const ssar = await call(s, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      json: { spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'web' } } },
      ...as('alice'),
    });
    expect(ssar.body.status.allowed).toBe(true);
    const who = await call(s, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      json: {},
      ...as('alice', ['g']),
    });
    expect(who.body.status.userInfo).toEqual({ username: 'alice', groups: ['g', 'system:authenticated'] });
  });

  it('without rules a cluster allows everything, and still answers reviews', async () => {
    const s = new SimCluster({ name: 'm2', seed: false });
    expect((await call(s, '/api/v1/pods', as('anyone'))).status).toBe(200);
    const r = await call(s, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      method: 'POST',
      json: {
        spec: { user: 'x', resourceAttributes: { verb: 'impersonate', resource: 'users', name: 'y' } },
      },
    });
    expect(r.body.status.allowed).toBe(true);
  });
});
