import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../request/info.ts';
import {
  askedNamespace,
  askedNamespaceLines,
  bodyNamespace,
  fleetNamespace,
  showAskedNamespace,
} from './namespace.ts';

const info = (path: string, method = 'GET') => parseRequestInfo(method, path, new URLSearchParams());

describe('fleetNamespace', () => {
  it('reads a fleet-named namespace as that cluster, plain upstream, for every namespaced path', () => {
    for (const [path, kubePath] of [
      ['/api/v1/namespaces/shop.clusterspace.member2/pods', '/api/v1/namespaces/shop/pods'],
      ['/api/v1/namespaces/shop.clusterspace.member2/pods/web/log', '/api/v1/namespaces/shop/pods/web/log'],
      ['/api/v1/watch/namespaces/shop.clusterspace.member2/pods', '/api/v1/watch/namespaces/shop/pods'],
      [
        '/apis/apps/v1/namespaces/shop.clusterspace.member2/deployments/web',
        '/apis/apps/v1/namespaces/shop/deployments/web',
      ],
      [
        '/api/v1/namespaces/shop.clusterspace.member2/clusterspaces/member2/pods',
        '/api/v1/namespaces/shop/pods',
      ],
      ['/clusterspaces/all/api/v1/namespaces/shop.clusterspace.member2/pods', '/api/v1/namespaces/shop/pods'],
    ]) {
      const r = fleetNamespace(info(path!));
      expect(
        r && !('code' in r) && [r.cluster, r.info.namespace, r.info.clusterspace, r.info.kubePath],
      ).toEqual(['member2', 'shop', 'member2', kubePath]);
    }
  });

  it('keeps the name, subresource and verb of the request', () => {
    const r = fleetNamespace(
      info('/api/v1/namespaces/shop.clusterspace.member2/pods/web.clusterspace.member2', 'DELETE'),
    );
    expect(r && !('code' in r) && [r.info.verb, r.info.name, r.info.resource]).toEqual([
      'delete',
      'web.clusterspace.member2',
      'pods',
    ]);
  });

  it('leaves plain namespaces and the Namespace objects themselves alone', () => {
    expect(fleetNamespace(info('/api/v1/namespaces/shop/pods'))).toBeUndefined();
    expect(fleetNamespace(info('/api/v1/namespaces/shop.clusterspace.member2'))).toBeUndefined();
    expect(fleetNamespace(info('/api/v1/namespaces/shop.clusterspace.member2/status'))).toBeUndefined();
    expect(fleetNamespace(info('/api/v1/pods'))).toBeUndefined();
    expect(fleetNamespace(info('/apis'))).toBeUndefined();
    // not a possible cluster name: a plain (invalid) namespace, for the cluster to refuse
    expect(fleetNamespace(info('/api/v1/namespaces/shop.clusterspace.Bad_/pods'))).toBeUndefined();
  });

  it('refuses (400) a fleet name whose cluster contradicts the clusterspace the URL names', () => {
    const r = fleetNamespace(info('/api/v1/namespaces/shop.clusterspace.member2/clusterspaces/member1/pods'));
    expect(r && 'code' in r && [r.code, r.message]).toEqual([
      400,
      'the namespace "shop.clusterspace.member2" names cluster "member2", which contradicts the clusterspace "member1"',
    ]);
    const prefix = fleetNamespace(
      info('/clusterspaces/member1/api/v1/namespaces/shop.clusterspace.member2/pods'),
    );
    expect(prefix && 'code' in prefix && prefix.code).toBe(400);
  });
});

describe('bodyNamespace', () => {
  it('makes its own cluster plain, refuses another, keeps plain ones', () => {
    expect(bodyNamespace('shop.clusterspace.member2', 'member2', 'shop')).toEqual({ namespace: 'shop' });
    expect(bodyNamespace('shop', 'member2', 'shop')).toEqual({ namespace: 'shop' });
    const s = bodyNamespace('shop.clusterspace.member1', 'member2', 'shop');
    expect('code' in s && s.code).toBe(400);
  });
});

describe('showAskedNamespace', () => {
  const ns = { plain: 'shop', fleet: 'shop.clusterspace.member2' };

  it('remembers what the client named, and says it back in objects and Table rows', () => {
    const r = fleetNamespace(info('/api/v1/namespaces/shop.clusterspace.member2/pods'));
    expect(r && !('code' in r) && askedNamespace(r.info)).toEqual(ns);
    expect(askedNamespace(info('/api/v1/namespaces/shop/pods'))).toBeUndefined();
    const obj = { metadata: { name: 'a', namespace: 'shop' } };
    showAskedNamespace(obj, ns);
    expect(obj.metadata.namespace).toBe('shop.clusterspace.member2');
    const row = { cells: ['a'], object: { metadata: { name: 'a', namespace: 'shop' } } };
    showAskedNamespace(row, ns);
    expect(row.object.metadata.namespace).toBe('shop.clusterspace.member2');
    const other = { metadata: { name: 'a', namespace: 'default' } };
    showAskedNamespace(other, ns);
    expect(other.metadata.namespace).toBe('default');
  });
});

describe('askedNamespaceLines', () => {
  it('rewrites each complete event line as it comes, objects and Table rows, other lines unchanged', async () => {
    const ns = { plain: 'shop', fleet: 'shop.clusterspace.member2' };
    const t = askedNamespaceLines(ns);
    const writer = t.writable.getWriter();
    const reader = t.readable.getReader();
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    const ev = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', namespace: 'shop' } } });
    // a line split across chunks comes out whole, once complete, and not before
    void writer.write(enc.encode(ev.slice(0, 10)));
    void writer.write(enc.encode(`${ev.slice(10)}\n`));
    const first = JSON.parse(dec.decode((await reader.read()).value));
    expect(first.object.metadata.namespace).toBe('shop.clusterspace.member2');
    const table = JSON.stringify({
      type: 'MODIFIED',
      object: { kind: 'Table', rows: [{ cells: ['a'], object: { metadata: { namespace: 'shop' } } }] },
    });
    void writer.write(enc.encode(`${table}\nnot json\n`));
    const [t1, t2] = dec.decode((await reader.read()).value).split('\n');
    expect(JSON.parse(t1!).object.rows[0].object.metadata.namespace).toBe('shop.clusterspace.member2');
    expect(t2).toBe('not json');
    void writer.close();
    expect((await reader.read()).done).toBe(true);
  });
});
