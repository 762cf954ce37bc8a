import { describe, expect, it } from 'vitest';
import { failure } from '../kube/status.ts';
import { answerOf, type UnservedAnswer, unservedLookup, unservedStatus } from './unserved.ts';

const notServed = (cluster: string): UnservedAnswer => ({ cluster, kind: 'notServed' });
const down = (cluster: string, reason = 'connection refused'): UnservedAnswer => ({
  cluster,
  kind: 'failed',
  reason,
});
// what Karmada's cluster proxy answers for a member it cannot dial
const proxy500 = (cluster: string): UnservedAnswer => ({
  cluster,
  kind: 'failed',
  reason: 'dial tcp 10.0.0.2:6443: connect: connection refused',
  status: { ...failure(500, 'InternalError', 'dial tcp'), reason: undefined },
});
const forbidden = failure(
  403,
  'Forbidden',
  'widgets is forbidden: User "jane" cannot list resource "widgets"',
);

describe('unservedStatus: no cluster served a list', () => {
  it('every cluster says it does not serve the resource: kube’s 404', () => {
    expect(unservedStatus([notServed('a'), notServed('b')])).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });
  });

  it('the others do not serve it and one could not be asked (transport or proxy 500): 503 naming it', () => {
    for (const d of [down('member2'), proxy500('member2')]) {
      const s = unservedStatus([notServed('member1'), d, notServed('member3')]);
      expect(s.code).toBe(503);
      expect(s.reason).toBe('ServiceUnavailable');
      // client-go's words for a 503, then the cluster
      expect(s.message).toMatch(/^the server is currently unable to handle the request \(/);
      expect(s.message).toContain('cluster member2: ');
      expect(s.message).not.toContain('member1');
    }
    expect(unservedStatus([down('a'), down('b')]).message).toMatch(/cluster a: .*; cluster b: /);
  });

  it('a cluster’s own refusal is the answer, as that cluster gave it', () => {
    const refusal: UnservedAnswer = { cluster: 'b', kind: 'failed', reason: 'forbidden', status: forbidden };
    expect(unservedStatus([notServed('a'), refusal, down('c')])).toBe(forbidden);
  });
});

describe('unservedLookup: a plain name found nowhere', () => {
  it('the resource served by no cluster that answered, some not asked: 503', () => {
    const s = unservedLookup([notServed('member1'), proxy500('member2')]);
    expect(s?.code).toBe(503);
    expect(s?.message).toContain('cluster member2');
  });

  it('a cluster that serves the resource said the object is not there, or nobody is down: the owner rules', () => {
    const objectMissing = answerOf(
      'member1',
      404,
      failure(404, 'NotFound', 'widgets "w" not found', { name: 'w', kind: 'widgets' }),
    );
    expect(objectMissing.kind).toBe('failed');
    expect(unservedLookup([objectMissing, down('member2')])).toBeUndefined();
    expect(unservedLookup([notServed('a'), notServed('b')])).toBeUndefined();
  });

  it('answerOf: a 404 naming no object is “not served”; a 5xx is unreachable, a 4xx a refusal', () => {
    expect(
      answerOf('a', 404, failure(404, 'NotFound', 'the server could not find the requested resource')),
    ).toEqual({ cluster: 'a', kind: 'notServed' });
    expect(answerOf('a', 404, undefined)).toEqual({ cluster: 'a', kind: 'notServed' });
    expect(unservedStatus([answerOf('a', 502, undefined)]).code).toBe(503);
    expect(unservedStatus([answerOf('a', 403, forbidden)])).toBe(forbidden);
  });
});
