import { describe, expect, it } from 'vitest';
import { failure } from '../kube/status.ts';
import { answerOf, type UnservedAnswer, undialedMember, unservedLookup, unservedStatus } from './unserved.ts';

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

describe("undialedMember: Karmada's cluster proxy could not dial the member", () => {
  // the proxy's body, as kube's ErrorToAPIStatus writes a plain Go error: no reason, no details
  const dial = (message: string) => ({ code: 500, message });

  it("the proxy's 500 without a reason and with a dial error: a 503 naming the cluster, message kept", () => {
    for (const m of [
      'dial tcp 172.18.0.3:6443: connect: connection refused',
      'dial tcp 10.0.0.9:443: i/o timeout',
      'dial tcp: lookup member1.example on 10.96.0.10:53: no such host',
      'dial tcp6 [fd00::3]:6443: connect: network is unreachable',
      'proxyconnect tcp: dial tcp 10.1.1.1:3128: connect: connection refused',
      // a stalled member (Karmada v1.18.2 in testbed/, the member's kube-apiserver stopped with SIGSTOP)
      'net/http: TLS handshake timeout',
      'tls: failed to verify certificate: x509: certificate signed by unknown authority',
    ])
      expect(undialedMember('member2', 500, dial(m))).toEqual(
        failure(
          503,
          'ServiceUnavailable',
          `cluster member2: unreachable through Karmada's cluster proxy: ${m}`,
        ),
      );
  });

  it('anything else is the answer it was: a reason, another message, another code', () => {
    const refused = 'dial tcp 172.18.0.3:6443: connect: connection refused';
    // a member's own 500 InternalError (it has a reason)
    expect(undialedMember('m', 500, failure(500, 'InternalError', refused))).toBeUndefined();
    expect(undialedMember('m', 500, { code: 500, reason: 'Unknown', message: refused })).toBeUndefined();
    // a member that cannot reach a kubelet for logs: its own error, not the proxy's
    expect(
      undialedMember(
        'm',
        500,
        dial('Get "https://10.0.0.5:10250/containerLogs/ns/p/c": dial tcp 10.0.0.5:10250: i/o timeout'),
      ),
    ).toBeUndefined();
    expect(undialedMember('m', 500, dial('etcdserver: request timed out'))).toBeUndefined();
    expect(
      undialedMember('m', 500, dial('Get "https://x": net/http: TLS handshake timeout')),
    ).toBeUndefined();
    expect(undialedMember('m', 500, undefined)).toBeUndefined();
    // not a 500 (the HTTP status, or the body's code)
    expect(undialedMember('m', 502, dial(refused))).toBeUndefined();
    expect(undialedMember('m', 500, { code: 503, message: refused })).toBeUndefined();
  });
});
