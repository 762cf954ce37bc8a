import { describe, expect, it } from 'vitest';
import { authorizationSchema } from '../config/security.ts';
import { FleetPolicy } from './policy.ts';

const alice = { user: 'alice', groups: ['dev', 'system:authenticated'] };
const bob = { user: 'bob', groups: ['system:authenticated'] };

describe('FleetPolicy', () => {
  it('allows everything when absent (each cluster decides)', () => {
    const p = new FleetPolicy(undefined);
    expect(p.enabled).toBe(false);
    expect(p.decide(bob, 'karmada', 'delete')).toEqual({ allowed: true });
  });

  it('allows what some rule grants by user or group, clusterspace and verb; refuses the rest', () => {
    const p = new FleetPolicy(
      authorizationSchema.parse({
        rules: [
          { groups: ['dev'], clusterspaces: ['all', 'member1'], verbs: ['get', 'list', 'watch'] },
          { users: ['bob'], clusterspaces: ['member2'] },
        ],
      }),
    );
    expect(p.decide(alice, 'all', 'list').allowed).toBe(true);
    expect(p.decide(alice, 'member1', 'watch').allowed).toBe(true);
    expect(p.decide(alice, 'member2', 'list').allowed).toBe(false);
    expect(p.decide(alice, 'all', 'delete')).toEqual({
      allowed: false,
      reason: 'the fleet authorization policy does not allow delete in clusterspace "all"',
    });
    // bob's rule defaults verbs to '*'
    expect(p.decide(bob, 'member2', 'deletecollection').allowed).toBe(true);
    expect(p.decide(bob, 'all', 'get').allowed).toBe(false);
  });

  it('matches names exactly: a group named like a user grants nothing to that user', () => {
    const p = new FleetPolicy(authorizationSchema.parse({ rules: [{ groups: ['alice'], verbs: ['*'] }] }));
    expect(p.decide(alice, 'all', 'get').allowed).toBe(false);
  });
});
