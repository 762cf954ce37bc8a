import { describe, expect, it } from 'vitest';
import {
  authorizeImpersonation,
  impersonatedIdentity,
  impersonationChecks,
  parseImpersonation,
  type Review,
  ReviewCache,
  subjectAccessReview,
} from './impersonate.ts';

const alice = { user: 'alice', groups: ['system:authenticated'] };
const req = (h: Record<string, string>, lines?: Record<string, string[]>) => ({
  headers: new Headers(h),
  ...(lines ? { facts: { headerLines: (n: string) => lines[n] } } : {}),
});

describe('parseImpersonation', () => {
  it('reads user, groups (one per line where the runtime shows lines), uid and extras', () => {
    const p = parseImpersonation(
      req(
        {
          'Impersonate-User': 'bob',
          'Impersonate-Group': 'a, b',
          'Impersonate-Uid': '42',
          'Impersonate-Extra-Scopes%2Fx': 'view',
        },
        { 'impersonate-group': ['a, b'] },
      ),
    );
    expect(p).toEqual({
      kind: 'requested',
      requested: { user: 'bob', groups: ['a, b'], uid: '42', extra: { 'scopes/x': ['view'] } },
    });
  });

  it('is none without headers, invalid for groups without a user or an empty uid, as kube', () => {
    expect(parseImpersonation(req({}))).toEqual({ kind: 'none' });
    expect(parseImpersonation(req({ 'Impersonate-Group': 'g' })).kind).toBe('invalid');
    expect(parseImpersonation(req({ 'Impersonate-Extra-k': 'v' })).kind).toBe('invalid');
    expect(parseImpersonation(req({ 'Impersonate-User': 'bob', 'Impersonate-Uid': '' })).kind).toBe(
      'invalid',
    );
    expect(
      parseImpersonation(req({ 'Impersonate-User': 'bob', 'Impersonate-Extra-%zz': 'v' })),
    ).toMatchObject({
      kind: 'invalid',
    });
  });
});

describe('impersonationChecks and the acting identity', () => {
  it('asks one question per thing impersonated, service accounts as serviceaccounts', () => {
    const checks = impersonationChecks({
      user: 'system:serviceaccount:ns:robot',
      groups: ['g'],
      uid: 'u',
      extra: { scopes: ['a', 'b'] },
    });
    expect(checks.map((c) => [c.resource, c.namespace ?? '', c.subresource ?? '', c.name])).toEqual([
      ['serviceaccounts', 'ns', '', 'robot'],
      ['groups', '', '', 'g'],
      ['uids', '', '', 'u'],
      ['userextras', '', 'scopes', 'a'],
      ['userextras', '', 'scopes', 'b'],
    ]);
  });

  it('gives service accounts their groups and everyone system:authenticated (anonymous: unauthenticated)', () => {
    expect(
      impersonatedIdentity({ user: 'system:serviceaccount:ns:robot', groups: [], extra: {} }).groups,
    ).toEqual(['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated']);
    expect(impersonatedIdentity({ user: 'system:anonymous', groups: [], extra: {} }).groups).toEqual([
      'system:unauthenticated',
    ]);
    expect(impersonatedIdentity({ user: 'bob', groups: ['x'], uid: '1', extra: { k: ['v'] } })).toEqual({
      user: 'bob',
      groups: ['x', 'system:authenticated'],
      uid: '1',
      extra: { k: ['v'] },
    });
  });

  it('builds the SubjectAccessReview the control plane is asked', () => {
    expect(
      subjectAccessReview(alice, { verb: 'impersonate', group: '', resource: 'users', name: 'bob' }),
    ).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: { verb: 'impersonate', group: '', resource: 'users', name: 'bob' },
        user: 'alice',
        groups: ['system:authenticated'],
      },
    });
  });
});

describe('authorizeImpersonation', () => {
  const requested = { user: 'bob', groups: ['ops'], extra: {} };

  it('acts as the requested identity only when every question is allowed', async () => {
    const yes: Review = async () => ({ allowed: true });
    expect(await authorizeImpersonation(alice, requested, yes)).toEqual({
      ok: true,
      identity: { user: 'bob', groups: ['ops', 'system:authenticated'] },
    });
  });

  it('answers 403 in kube words for the first denial, in kube order', async () => {
    const noGroups: Review = async (_w, a) =>
      a.resource === 'groups' ? { allowed: false, reason: 'no group for you' } : { allowed: true };
    const r = await authorizeImpersonation(alice, requested, noGroups);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toMatchObject({ code: 403, reason: 'Forbidden' });
      expect(r.status.message).toContain('groups');
      expect(r.status.message).toContain('no group for you');
    }
  });

  it('throws what the review throws (an unreachable control plane is not a denial)', async () => {
    await expect(
      authorizeImpersonation(alice, requested, async () => {
        throw new Error('down');
      }),
    ).rejects.toThrow('down');
  });
});

describe('ReviewCache', () => {
  function counting(answer = true) {
    const calls: string[] = [];
    const review: Review = async (w, a) => {
      calls.push(`${w.user}:${a.name}`);
      return { allowed: answer };
    };
    return { calls, review };
  }
  const attrs = { verb: 'impersonate' as const, group: '', resource: 'users', name: 'bob' };

  it('remembers answers per place, caller and question, for its TTL', async () => {
    let now = 0;
    const cache = new ReviewCache(1_000, 10, () => now);
    const { calls, review } = counting();
    const at = cache.wrap('karmada', review);
    await at(alice, attrs);
    await at(alice, attrs);
    await cache.wrap('member1', review)(alice, attrs);
    await at({ ...alice, groups: ['other'] }, attrs);
    expect(calls).toHaveLength(3);
    now = 1_000;
    await at(alice, attrs);
    expect(calls).toHaveLength(4);
  });

  it('asks every time with a TTL of 0, and never keeps a failure', async () => {
    const { calls, review } = counting();
    const off = new ReviewCache(0).wrap('karmada', review);
    await off(alice, attrs);
    await off(alice, attrs);
    expect(calls).toHaveLength(2);
    let fail = true;
    const flaky = new ReviewCache(1_000).wrap('karmada', async () => {
      if (fail) throw new Error('down');
      return { allowed: true };
    });
    await expect(flaky(alice, attrs)).rejects.toThrow('down');
    fail = false;
    expect(await flaky(alice, attrs)).toEqual({ allowed: true });
  });
});
