import { describe, expect, it } from 'vitest';
import { forbidden, internalError, statusFor, statusResponse, timeout } from './status.ts';

describe('Status bodies as kube-apiserver writes them', () => {
  it('ends the body with the newline of json.Encoder and keeps the Go field order', async () => {
    const res = statusResponse(internalError('boom'));
    const text = await res.text();
    expect(text.endsWith('}\n')).toBe(true);
    expect(Object.keys(JSON.parse(text))).toEqual([
      'kind',
      'apiVersion',
      'metadata',
      'status',
      'message',
      'reason',
      'details',
      'code',
    ]);
    expect(JSON.parse(text)).toMatchObject({
      code: 500,
      message: 'Internal error occurred: boom',
      details: { causes: [{ message: 'boom' }] },
    });
  });

  it('gives 5xx Statuses the details their apierrors constructor gives them', () => {
    expect(statusFor(500, 'InternalError', 'x').details).toEqual({ causes: [{ message: 'x' }] });
    expect(statusFor(503, 'ServiceUnavailable', 'x').details).toBeUndefined();
    expect(statusFor(504, 'Timeout', 'x').details).toEqual({});
    expect(timeout('slow', 3).details).toEqual({ retryAfterSeconds: 3 });
    expect(statusResponse(timeout('slow', 3)).headers.get('retry-after')).toBe('3');
  });

  it('words 403s like responsewriters.Forbidden', () => {
    expect(forbidden({ user: 'alice', verb: 'list', resource: 'pods', apiGroup: '' }).message).toBe(
      'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope',
    );
    const named = forbidden({
      user: 'alice',
      verb: 'get',
      resource: 'deployments',
      subresource: 'scale',
      apiGroup: 'apps',
      namespace: 'x',
      name: 'web',
    });
    expect(named.message).toBe(
      'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments/scale" in API group "apps" in the namespace "x"',
    );
    expect(named.details).toEqual({ name: 'web', group: 'apps', kind: 'deployments' });
    const path = forbidden({ user: 'bob', verb: 'get', path: '/api' });
    expect(path.message).toBe('forbidden: User "bob" cannot get path "/api"');
    expect(path.details).toEqual({});
  });
});
