import { describe, expect, it } from 'vitest';
import { RequestPathError } from './info.ts';
import { checkRawTarget, targetPath } from './target.ts';

function refusal(target: string): RequestPathError | undefined {
  try {
    checkRawTarget(target);
    return undefined;
  } catch (e) {
    return e as RequestPathError;
  }
}

describe('raw request target', () => {
  it('refuses every spelling of a dot segment and an encoded slash, with a 400', () => {
    for (const t of [
      '/api/v1/namespaces/../pods',
      '/api/v1/namespaces/%2e%2e/pods',
      '/api/v1/namespaces/.%2e/pods',
      '/api/v1/namespaces/%2E%2e/pods',
      '/api/v1/namespaces/%2E/pods',
      '/api/./v1/pods',
      '/clusterspaces/member1/%2e%2e/karmada/api/v1/secrets',
      '/api/v1/namespaces/default/pods/a%2fb',
      '/api/v1/namespaces/default/pods/a%2Fb?x=1',
      '/clusterspaces/member1%2F..%2Fmember2/api/v1/pods',
      '/api/v1/namespaces/default/pods/..',
      'http://fleet.example/api/v1/namespaces/%2e%2e/pods',
    ]) {
      const e = refusal(t);
      expect(e, t).toBeInstanceOf(RequestPathError);
      expect(e?.code, t).toBe(400);
    }
  });

  it('lets ordinary targets through, query and fragment not being part of the path', () => {
    for (const t of [
      '/',
      '/api/v1/namespaces/default/pods',
      '/api/v1/namespaces/default/pods/web-1.clusterspace.member1',
      '/api/v1/pods?labelSelector=a%2Fb&fieldSelector=x==..',
      '/apis/apps/v1/deployments?watch=1#..',
      '/api/v1/namespaces/',
      '/api/v1/namespaces/default/configmaps/a..b',
    ])
      expect(refusal(t), t).toBeUndefined();
    // kube's not-found handler answers a path that starts with `//`
    expect(refusal('//api/v1/namespaces/')?.code).toBe(404);
  });

  it('reads the path of origin-form and absolute-form targets', () => {
    expect(targetPath('/a/b?c=d')).toBe('/a/b');
    expect(targetPath('http://h:1/a/%2e%2e?x')).toBe('/a/%2e%2e');
    expect(targetPath('http://h:1')).toBe('/');
    expect(targetPath('*')).toBe('/');
  });
});
