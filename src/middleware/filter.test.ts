import type { Handler } from 'hono';
import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { RequestPathError } from '../request/info.ts';
import type { FleetEnv } from '../types.ts';
import { afterAnswer, type Filter, middleware } from './filter.ts';
import { recovery } from './recovery/index.ts';

/** the filters registered with `app.use` in order, then `route` for every path, as src/app.ts builds it */
function app(filters: Filter[], route: Handler<FleetEnv>) {
  const a = new Hono<FleetEnv>();
  a.onError(recovery);
  for (const f of filters) a.use(middleware(f));
  a.all('*', route);
  return (path = '/x') => a.fetch(new Request(`http://fleet${path}`));
}

const ok = (body = 'ok') => new Response(body, { headers: { 'X-Route': '1' } });

describe('filters as Hono middleware', () => {
  it('run in order around the route; a refusal stops the rest', async () => {
    const seen: string[] = [];
    const f =
      (name: string): Filter =>
      (c, next) => {
        seen.push(name);
        return afterAnswer(c, next(), (res) => {
          seen.push(`/${name}`);
          return res;
        });
      };
    const route = () => {
      seen.push('route');
      return ok();
    };
    expect(await (await app([f('a'), f('b')], route)()).text()).toBe('ok');
    expect(seen).toEqual(['a', 'b', 'route', '/b', '/a']);

    seen.length = 0;
    const refused = await app([() => new Response('no', { status: 403 }), f('b')], route)();
    expect(refused.status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('a changed answer replaces the route’s whole, without its headers', async () => {
    const mapping: Filter = (c, next) =>
      afterAnswer(c, next(), (res) => (res.status === 200 ? new Response('mapped', { status: 409 }) : res));
    const res = await app([mapping], () => ok())();
    expect([res.status, await res.text(), res.headers.get('x-route')]).toEqual([409, 'mapped', null]);
  });

  it('turn a throw or rejection into a Status where it happens: filters before it see the answer, c.error the error', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const codes: number[] = [];
    const errors: unknown[] = [];
    const watch: Filter = (c, next) =>
      afterAnswer(c, next(), (res) => {
        codes.push(res.status);
        errors.push(c.error);
        return res;
      });
    const throwing: Filter = () => {
      throw new RequestPathError(400, 'bad path');
    };
    const rejecting: Filter = async () => {
      throw new RequestPathError(400, 'bad path');
    };
    for (const f of [throwing, rejecting]) {
      const res = await app([watch, f], () => ok())();
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ kind: 'Status', code: 400, message: 'bad path' });
    }
    expect(errors.every((e) => e instanceof RequestPathError)).toBe(true);
    // the route's own failure, and one of a filter's work after the answer; no internals leak
    const boom = await app([watch], () => Promise.reject(new Error('boom at /var/run/secret')))();
    expect(boom.status).toBe(500);
    expect(await boom.text()).not.toContain('/var/run/secret');
    const late: Filter = (c, next) =>
      afterAnswer(c, next(), () => {
        throw new Error('late');
      });
    expect((await app([watch, late], () => Promise.resolve(ok()))()).status).toBe(500);
    expect((await app([watch, late], () => ok())()).status).toBe(500);
    expect(codes).toEqual([400, 400, 500, 500, 500]);
    vi.restoreAllMocks();
  });
});
