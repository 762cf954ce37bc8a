/**
 * The app's dispatcher (src/app.ts): what hono's application class did for the app, done without it.
 */
import { describe, expect, it } from 'vitest';
import { dispatcher } from './app.ts';
import type { Handler } from './middleware/chain.ts';
import { ExactRouter } from './router.ts';

function app(handler: Handler) {
  const probes = new ExactRouter<Handler>();
  probes.add('GET', '/healthz', () => new Response('ok', { headers: { 'X-Probe': '1' } }));
  return dispatcher(probes, handler);
}

const echo: Handler = (c) =>
  new Response(`${c.req.method} ${c.req.path} ${new URL(c.req.url).search}`, {
    status: 202,
    headers: { 'X-Env': String((c.env as { tag?: string } | undefined)?.tag) },
  });

describe('the app dispatcher', () => {
  it('answers the probes before the chain, and everything else (any method) through it', async () => {
    const a = app(echo);
    const probe = await a.fetch(new Request('http://fleet/healthz'));
    expect([probe.status, await probe.text(), probe.headers.get('x-probe')]).toEqual([200, 'ok', '1']);
    const post = await a.fetch(new Request('http://fleet/healthz', { method: 'POST' }));
    expect(await post.text()).toBe('POST /healthz ');
    const res = await a.fetch(new Request('http://fleet/api/v1/pods?watch=1'), { tag: 'node' });
    expect([res.status, await res.text(), res.headers.get('x-env')]).toEqual([
      202,
      'GET /api/v1/pods ?watch=1',
      'node',
    ]);
  });

  it('answers HEAD as GET (the probes too), with the status and headers and no body', async () => {
    const a = app(echo);
    const head = await a.fetch(new Request('http://fleet/api/v1/pods', { method: 'HEAD' }));
    expect([head.status, head.headers.get('x-env'), await head.text()]).toEqual([202, 'undefined', '']);
    const probe = await a.fetch(new Request('http://fleet/healthz', { method: 'HEAD' }));
    expect([probe.status, probe.headers.get('x-probe'), await probe.text()]).toEqual([200, '1', '']);
  });

  it('turns a throw or a rejection that got past the chain into a Status, never a raw error', async () => {
    for (const handler of [
      () => {
        throw new Error('boom at /var/run/secret');
      },
      () => Promise.reject(new Error('boom at /var/run/secret')),
    ] as Handler[]) {
      const res = await app(handler).fetch(new Request('http://fleet/api/v1/pods'));
      const body = (await res.json()) as { kind: string; code: number };
      expect(res.status).toBe(500);
      expect(body).toMatchObject({ kind: 'Status', code: 500 });
      expect(JSON.stringify(body)).not.toContain('/var/run/secret');
    }
  });
});
