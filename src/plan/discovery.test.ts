import { describe, expect, it } from 'vitest';
import {
  classifyDiscovery,
  clientPrefix,
  discoveryCacheKey,
  isOpenAPIPath,
  openapiLocation,
} from './discovery.ts';

describe('classifyDiscovery', () => {
  it('names every discovery document and nothing else', () => {
    expect(classifyDiscovery('/version')).toEqual({ kind: 'version' });
    expect(classifyDiscovery('/api')).toEqual({ kind: 'root', which: 'api' });
    expect(classifyDiscovery('/apis/')).toEqual({ kind: 'root', which: 'apis' });
    expect(classifyDiscovery('/api/v1')).toEqual({ kind: 'resources', group: '', version: 'v1' });
    expect(classifyDiscovery('/apis/apps')).toEqual({ kind: 'group', group: 'apps' });
    expect(classifyDiscovery('/apis/apps/v1')).toEqual({ kind: 'resources', group: 'apps', version: 'v1' });
    expect(classifyDiscovery('/openapi/v2')).toEqual({ kind: 'openapi-v2' });
    expect(classifyDiscovery('/openapi/v3')).toEqual({ kind: 'openapi-v3-root' });
    expect(classifyDiscovery('/openapi/v3/apis/apps/v1')).toEqual({
      kind: 'openapi-v3-doc',
      gv: 'apis/apps/v1',
    });
    for (const p of ['/', '/healthz', '/version/x', '/api/v1/x', '/openapi', '/openapi/v4', '/metrics'])
      expect(classifyDiscovery(p)).toBeUndefined();
  });

  it('tells OpenAPI paths from discovery documents', () => {
    expect(isOpenAPIPath(classifyDiscovery('/openapi/v3')!)).toBe(true);
    expect(isOpenAPIPath(classifyDiscovery('/apis')!)).toBe(false);
  });
});

describe('discoveryCacheKey', () => {
  const clusters = [{ cluster: 'karmada' }, { cluster: 'east' }];
  it('differs by caller, clusters and document, and not otherwise', () => {
    const alice = { user: 'alice', groups: ['dev'] };
    const k = discoveryCacheKey(clusters, alice, '/apis', 'v2');
    expect(discoveryCacheKey(clusters, { user: 'alice', groups: ['dev'] }, '/apis', 'v2')).toBe(k);
    expect(discoveryCacheKey(clusters, { user: 'alice', groups: ['ops'] }, '/apis', 'v2')).not.toBe(k);
    expect(discoveryCacheKey(clusters.slice(1), alice, '/apis', 'v2')).not.toBe(k);
    expect(discoveryCacheKey(clusters, alice, '/apis', 'legacy')).not.toBe(k);
    expect(discoveryCacheKey(clusters, undefined, '/apis', 'v2')).not.toBe(k);
  });
});

describe('OpenAPI redirects', () => {
  it('keep pointing at the fleet under the prefix the client used', () => {
    const prefix = clientPrefix({
      rawPath: '/clusterspaces/all/openapi/v3/apis/apps/v1',
      kubePath: '/openapi/v3/apis/apps/v1',
    });
    expect(prefix).toBe('/clusterspaces/all');
    const loc = openapiLocation(prefix);
    expect(loc('/apis/cluster.karmada.io/v1alpha1/clusters/east/proxy/openapi/v3/apis/apps/v1?hash=AB')).toBe(
      '/clusterspaces/all/openapi/v3/apis/apps/v1?hash=AB',
    );
    expect(loc('https://east.example:6443/openapi/v3/api/v1?hash=1')).toBe(
      '/clusterspaces/all/openapi/v3/api/v1?hash=1',
    );
    expect(openapiLocation('')('/elsewhere')).toBe('/elsewhere');
  });
});
