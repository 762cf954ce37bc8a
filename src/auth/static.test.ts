import { describe, expect, it } from 'vitest';
import { parseTokenCsv, StaticTokenAuthenticator } from './static.ts';

describe('parseTokenCsv (kube --token-auth-file)', () => {
  it('reads token,user,uid and quoted groups; skips comments and blank lines', () => {
    const tokens = parseTokenCsv(
      ['# ops tokens', '', 't1,alice,u1,"dev, ops"', 't2,bob,,', '"t,3",carol,u3,"a ""quoted"" group"'].join(
        '\n',
      ),
    );
    expect(tokens).toEqual([
      { token: 't1', user: 'alice', uid: 'u1', groups: ['dev', 'ops'] },
      { token: 't2', user: 'bob', uid: '', groups: [] },
      { token: 't,3', user: 'carol', uid: 'u3', groups: ['a "quoted" group'] },
    ]);
  });

  it('names the line of what it refuses', () => {
    expect(() => parseTokenCsv('t1,alice')).toThrow(/line 1: expected token,user,uid/);
    expect(() => parseTokenCsv('t1,alice,u\n,bob,u')).toThrow(/line 2: token and user must not be empty/);
    expect(() => parseTokenCsv('t1,a,u\nt1,b,u')).toThrow(/line 2: duplicate token/);
    expect(() => parseTokenCsv('"t1,a,u')).toThrow(/line 1/);
  });
});

describe('StaticTokenAuthenticator', () => {
  const auth = new StaticTokenAuthenticator(parseTokenCsv('t1,alice,u1,"dev"\nt2,bob,,'));

  it('maps a known token to its identity, with system:authenticated', async () => {
    expect(await auth.authenticate('t1')).toEqual({
      user: 'alice',
      uid: 'u1',
      groups: ['dev', 'system:authenticated'],
    });
    expect(await auth.authenticate('t2')).toEqual({ user: 'bob', groups: ['system:authenticated'] });
  });

  it('knows nothing of unknown tokens, prefixes or extensions of known ones', async () => {
    for (const t of ['t', 't3', 't1 ', 't11', '', 'T1'])
      expect(await auth.authenticate(t), t).toBeUndefined();
  });

  it('hands out copies: a caller changing its identity changes nothing for the next', async () => {
    const a = await auth.authenticate('t1');
    a!.groups.push('system:masters');
    expect((await auth.authenticate('t1'))!.groups).toEqual(['dev', 'system:authenticated']);
  });

  it('authenticates nobody with no tokens', async () => {
    expect(await new StaticTokenAuthenticator([]).authenticate('x')).toBeUndefined();
  });
});
