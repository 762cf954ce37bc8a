import { afterEach, describe, expect, it, vi } from 'vitest';
import { inProcessFleet } from '../../../test/helpers/inprocess.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

function capture(): () => Array<Record<string, any>> {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((l: unknown) => {
    lines.push(String(l));
  });
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  return () => lines.filter((l) => l.includes('"FleetAuditEvent"')).map((l) => JSON.parse(l));
}

describe('audit log', () => {
  it('one line per request: who, what, where, which clusters answered what, code, latency; never a token', async () => {
    const events = capture();
    const f = inProcessFleet(
      { members: ['m1', 'm2'] },
      {
        authentication: { staticTokens: { csv: 'super-secret-token,alice,7,"dev"' } },
        audit: { enabled: true },
      },
    );
    f.members.get('m2')!.rbac = { users: {} };
    const pod = f.members.get('m1')!.list({ group: '', version: 'v1', resource: 'pods' })[0]!;
    const auth = { headers: { Authorization: 'Bearer super-secret-token' } };
    await f.fetch('/api/v1/pods', auth);
    await f.fetch(
      `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}.clusterspace.m1`,
      auth,
    );
    await f.fetch('/api/v1/pods', { headers: { Authorization: 'Bearer wrong' } });

    const [list, get, refused, ...rest] = events();
    expect(rest).toEqual([]);
    expect(list).toMatchObject({
      kind: 'FleetAuditEvent',
      authenticator: 'static-token',
      user: 'alice',
      groups: ['dev', 'system:authenticated'],
      uid: '7',
      verb: 'list',
      method: 'GET',
      path: '/api/v1/pods',
      resource: 'pods',
      apiGroup: '',
      clusterspace: 'all',
      code: 200,
    });
    expect(list!.clusters).toEqual(
      expect.arrayContaining([
        { cluster: 'karmada', code: 200 },
        { cluster: 'm1', code: 200 },
        { cluster: 'm2', code: 403 },
      ]),
    );
    expect(typeof list!.latencyMs).toBe('number');
    expect(get).toMatchObject({
      verb: 'get',
      fleetName: `${pod.metadata.name}.clusterspace.m1`,
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      clusters: [{ cluster: 'm1', code: 200 }],
    });
    expect(refused).toMatchObject({ code: 401, clusters: [] });
    expect(refused!.reason).toContain('invalid bearer token');
    expect(refused!.user).toBeUndefined();
    const all = JSON.stringify(events());
    expect(all).not.toContain('super-secret-token');
    expect(all).not.toContain('wrong');
  });

  it('records whom the caller acted as, and why the fleet refused', async () => {
    const events = capture();
    const f = inProcessFleet(
      { members: ['m1'], seed: false },
      {
        authentication: { staticTokens: { csv: 't,alice,1' } },
        audit: { enabled: true },
        callerImpersonation: { cacheSeconds: 0 },
      },
    );
    f.karmada.rbac = {
      users: {
        alice: [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] }],
      },
    };
    const h = (u: string) => ({ headers: { Authorization: 'Bearer t', 'Impersonate-User': u } });
    await f.fetch('/clusterspaces/m1/api/v1/pods', h('bob'));
    await f.fetch('/clusterspaces/m1/api/v1/pods', h('carol'));
    const [ok, denied] = events();
    expect(ok).toMatchObject({ user: 'alice', impersonatedUser: 'bob', clusterspace: 'm1', code: 200 });
    // the review the fleet sent is its own call, not the caller's: only the member shows
    expect(ok!.clusters).toEqual([{ cluster: 'm1', code: 200 }]);
    expect(denied).toMatchObject({ user: 'alice', code: 403, clusters: [] });
    expect(denied!.reason).toContain('users "carol" is forbidden');
  });

  it('is off by default', async () => {
    const events = capture();
    const f = inProcessFleet({ members: ['m1'], seed: false });
    await f.fetch('/api/v1/pods');
    expect(events()).toEqual([]);
  });
});
