import type { Context } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { RequestPathError } from '../request/info.ts';
import type { FleetEnv } from '../types.ts';
import { afterAnswer, chain, type Filter, neverRejects } from './chain.ts';

const ctx = () => ({ req: { raw: new Request('http://fleet/x') } }) as unknown as Context<FleetEnv>;
const ok = (body = 'ok') => new Response(body);

describe('the handler chain', () => {
  it('runs the filters in order around the handler; a refusal stops it', async () => {
    const seen: string[] = [];
    const f =
      (name: string): Filter =>
      (c, next) => {
        seen.push(name);
        return afterAnswer(c, next(c), (res) => {
          seen.push(`/${name}`);
          return res;
        });
      };
    const h = chain([f('a'), f('b')], () => {
      seen.push('handler');
      return ok();
    });
    expect(await (await h(ctx())).text()).toBe('ok');
    expect(seen).toEqual(['a', 'b', 'handler', '/b', '/a']);

    const refused = chain([(_c, _next) => new Response('no', { status: 403 }), f('b')], () => ok());
    seen.length = 0;
    expect((await refused(ctx())).status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('adds no promise for a filter that passes the answer on, and none when every step answers at once', async () => {
    const pass: Filter = (c, next) => next(c);
    const sync = chain([pass, pass], () => ok());
    expect(sync(ctx())).toBeInstanceOf(Response);
    let inner: Promise<Response> | undefined;
    const passing = chain([pass, pass, pass], () => {
      inner = Promise.resolve(ok());
      return inner;
    });
    const a = passing(ctx());
    const b = chain([pass], () => Promise.resolve(ok()))(ctx());
    // the handler's answer guarded once, then handed through by each filter unchanged
    expect(a).toBeInstanceOf(Promise);
    expect(a).not.toBe(inner);
    expect(b).toBeInstanceOf(Promise);
    await Promise.all([a, b]);
  });

  it('says which handlers are chains, whose answers never reject (the app adds no catch around them)', async () => {
    const rejecting = () => Promise.reject(new Error('boom'));
    const whole = chain([], rejecting);
    expect([neverRejects(whole), neverRejects(rejecting)]).toEqual([true, false]);
    expect((await whole(ctx())).status).toBe(500);
  });

  it('turns a throw or rejection into a Status where it happens: filters before it see the answer, c.error the error', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const codes: number[] = [];
    const watch: Filter = (c, next) =>
      afterAnswer(c, next(c), (res) => {
        codes.push(res.status);
        return res;
      });
    const throwing: Filter = () => {
      throw new RequestPathError(400, 'bad path');
    };
    const rejecting: Filter = async () => {
      throw new RequestPathError(400, 'bad path');
    };
    for (const f of [throwing, rejecting]) {
      const c = ctx();
      const res = await chain([watch, f], () => ok())(c);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ kind: 'Status', code: 400, message: 'bad path' });
      expect(c.error).toBeInstanceOf(RequestPathError);
    }
    // the handler's own failure, and one of a filter's work after the answer
    const c = ctx();
    expect((await chain([watch], () => Promise.reject(new Error('boom')))(c)).status).toBe(500);
    const late: Filter = (c, next) =>
      afterAnswer(c, next(c), () => {
        throw new Error('late');
      });
    expect((await chain([watch, late], () => Promise.resolve(ok()))(ctx())).status).toBe(500);
    expect((await chain([watch, late], () => ok())(ctx())).status).toBe(500);
    expect(codes).toEqual([400, 400, 500, 500, 500]);
    vi.restoreAllMocks();
  });
});
