import { HonoBase } from 'hono/hono-base';
import { describe, expect, it } from 'vitest';
import { ExactRouter } from './router.ts';

function app() {
  const a = new HonoBase({ router: new ExactRouter() });
  const seen: string[] = [];
  a.use(async (c, next) => {
    seen.push(`mw ${c.req.path}`);
    await next();
  });
  a.get('/fleet', () => new Response('redirect'));
  a.get('/fleet/', () => new Response('page'));
  a.all('*', (c) => new Response(`rest ${c.req.method} ${c.req.path}`));
  return { a, seen };
}

describe('ExactRouter', () => {
  it('matches exact paths (a trailing slash is another path) and /* everything, in the order added', async () => {
    const { a, seen } = app();
    expect(await (await a.request('/fleet')).text()).toBe('redirect');
    expect(await (await a.request('/fleet/')).text()).toBe('page');
    expect(await (await a.request('/fleet//')).text()).toBe('rest GET /fleet//');
    expect(await (await a.request('/fleet/x')).text()).toBe('rest GET /fleet/x');
    expect(await (await a.request('/')).text()).toBe('rest GET /');
    expect(await (await a.request('/fleet', { method: 'POST' })).text()).toBe('rest POST /fleet');
    expect(seen).toEqual(['/fleet', '/fleet/', '/fleet//', '/fleet/x', '/', '/fleet'].map((p) => `mw ${p}`));
  });

  it('answers HEAD with the GET route', async () => {
    const { a } = app();
    const r = await a.request('/fleet/', { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('');
  });

  it('refuses, when added, a pattern it cannot match exactly', () => {
    const a = new HonoBase({ router: new ExactRouter() });
    for (const p of ['/x/:name', '/x/*', '/x?', '/a/{b}'])
      expect(() => a.get(p, () => new Response())).toThrow(/only exact paths and \/\* are routed/);
  });
});
