import { describe, expect, it } from 'vitest';
import { inProcessFleet } from '../../../test/helpers/inprocess.ts';
import { forbidden } from '../../auth/forbidden.ts';

const TOKENS = 'alice-token,alice,1,"dev"\nops-token,olga,2,"ops"\n';

function fleet() {
  const f = inProcessFleet(
    { members: ['m1', 'm2'], seed: false },
    {
      authentication: { staticTokens: { csv: TOKENS } },
      authorization: {
        rules: [
          { users: ['alice'], clusterspaces: ['m1'], verbs: ['get', 'list', 'watch'] },
          { groups: ['ops'], clusterspaces: ['*'], verbs: ['*'] },
          { users: ['bob'], clusterspaces: ['m2'], verbs: ['list'] },
        ],
      },
      callerImpersonation: { cacheSeconds: 0 },
    },
  );
  const sent = () => [f.karmada, ...f.members.values()].reduce((n, s) => n + s.requests.length, 0);
  return { f, sent };
}

describe('fleet authorization policy', () => {
  it('allows what a rule covers, denies the rest in kube’s words, and sends nothing when it denies', async () => {
    const { f, sent } = fleet();
    const as = (t: string) => ({ headers: { Authorization: `Bearer ${t}` } });
    expect((await f.fetch('/clusterspaces/m1/api/v1/pods', as('alice-token'))).status).toBe(200);
    expect((await f.fetch('/api/v1/namespaces/x/clusterspaces/m1/pods', as('alice-token'))).status).toBe(200);
    expect((await f.fetch('/api/v1/pods', as('ops-token'))).status).toBe(200);

    const before = sent();
    const denied: Array<[string, RequestInit, string]> = [
      [
        '/api/v1/pods',
        as('alice-token'),
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope: the fleet authorization policy does not allow list in clusterspace "all"',
      ],
      [
        '/clusterspaces/m2/apis/apps/v1/namespaces/web/deployments/front',
        as('alice-token'),
        'deployments.apps "front" is forbidden: User "alice" cannot get resource "deployments" in API group "apps" in the namespace "web": the fleet authorization policy does not allow get in clusterspace "m2"',
      ],
      [
        '/clusterspaces/m1/api/v1/namespaces/default/configmaps',
        { ...as('alice-token'), method: 'POST', body: '{}' },
        'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default": the fleet authorization policy does not allow create in clusterspace "m1"',
      ],
      [
        '/api',
        as('alice-token'),
        'forbidden: User "alice" cannot get path "/api": the fleet authorization policy does not allow get in clusterspace "all"',
      ],
    ];
    for (const [path, init, message] of denied) {
      const res = await f.fetch(path, init);
      expect(res.status, path).toBe(403);
      const s = (await res.json()) as { reason: string; message: string };
      expect(s.reason).toBe('Forbidden');
      expect(s.message).toBe(message);
    }
    expect(sent()).toBe(before);
  });

  it('decides on the identity the request acts as, after --as', async () => {
    const { f } = fleet();
    f.karmada.rbac = {
      users: {
        olga: [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] }],
      },
    };
    const res = await f.fetch('/clusterspaces/m2/api/v1/pods', {
      headers: { Authorization: 'Bearer ops-token', 'Impersonate-User': 'bob' },
    });
    expect(res.status).toBe(200);
    const get = await f.fetch('/clusterspaces/m2/api/v1/namespaces/a/pods/x', {
      headers: { Authorization: 'Bearer ops-token', 'Impersonate-User': 'bob' },
    });
    expect(get.status).toBe(403);
    expect(((await get.json()) as { message: string }).message).toContain(
      'User "bob" cannot get resource "pods"',
    );
  });

  it('writes Statuses like kube-apiserver', () => {
    expect(
      forbidden({
        user: 'u',
        verb: 'get',
        resource: 'pods',
        subresource: 'log',
        apiGroup: '',
        namespace: 'n',
        name: 'p',
      }),
    ).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods "p" is forbidden: User "u" cannot get resource "pods/log" in API group "" in the namespace "n"',
      reason: 'Forbidden',
      details: { name: 'p', kind: 'pods' },
      code: 403,
    });
  });
});
