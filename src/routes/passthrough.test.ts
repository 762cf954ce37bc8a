import { describe, expect, it } from 'vitest';
import { passthrough, searchOf } from './passthrough.ts';
import { type Cluster, fakeFleet, json, serve } from './testing.ts';

async function via(clusters: Record<string, Cluster>, path: string, init?: RequestInit) {
  const fleet = fakeFleet(clusters);
  const res = await serve((c, info) => passthrough(c, fleet.deps, info), `http://fleet${path}`, init);
  return { fleet, res };
}

describe('passthrough', () => {
  it('relays method, path, query and answer of one cluster unchanged', async () => {
    const seen: string[] = [];
    const { fleet, res } = await via(
      {
        east: async (r) => {
          seen.push(
            new TextDecoder().decode(
              r.body instanceof ReadableStream
                ? await new Response(r.body).arrayBuffer()
                : (r.body as Uint8Array),
            ),
          );
          return json({ kind: 'Status', code: 201 }, 201);
        },
      },
      '/clusterspaces/east/api/v1/namespaces/default/configmaps?fieldManager=x',
      {
        method: 'POST',
        body: '{"metadata":{"name":"plain"}}',
        headers: { 'Content-Type': 'application/json' },
      },
    );
    expect(fleet.sent).toEqual(['east POST /api/v1/namespaces/default/configmaps?fieldManager=x']);
    expect(seen).toEqual(['{"metadata":{"name":"plain"}}']);
    expect(res.status).toBe(201);
  });

  it('keeps a watch streaming: Content-Encoding identity on a body of unknown length', async () => {
    const stream = () =>
      new Response(new ReadableStream({ start: (c) => c.close() }), {
        headers: { 'Content-Type': 'application/json' },
      });
    const { res } = await via({ east: stream }, '/clusterspaces/east/api/v1/pods?watch=true');
    expect(res.headers.get('content-encoding')).toBe('identity');
  });

  it('answers 404 for a clusterspace that names no cluster, listing the known ones', async () => {
    const { res, fleet } = await via({ east: () => json({}) }, '/clusterspaces/north/api/v1/pods');
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.message).toBe('clusterspace "north" not found; known clusterspaces: all, karmada, east');
    expect(fleet.sent).toEqual([]);
  });
});

describe('searchOf', () => {
  it('gives what URL#search gives, without parsing the URL', () => {
    for (const u of [
      'http://f/a',
      'http://f/a?',
      'http://f/a?b=1',
      'http://f/a?b=1&c=%2F',
      'http://f/a?b=1#frag',
      'http://f/a#frag?x',
      'http://f/a?#x',
      'http://f/a??b',
    ])
      expect(searchOf(u), u).toBe(new URL(u).search);
  });
});
