import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { limitsSchema } from '../../config/security.ts';
import { MAX_BODY_DEPTH, tooDeepMessage } from '../../kube/json.ts';
import { RAW_TARGET } from '../../request/target.ts';
import type { FleetEnv } from '../../types.ts';
import { middleware } from '../filter.ts';
import { limits } from './index.ts';

function app(cfg: Record<string, number> = {}) {
  const a = new Hono<FleetEnv>();
  a.use(middleware(limits(limitsSchema.parse(cfg))));
  a.all('*', async (c) => c.text(`ok ${(await c.req.raw.arrayBuffer()).byteLength}`));
  return (path: string, init: RequestInit & { duplex?: 'half' } = {}) =>
    a.fetch(new Request(`http://fleet${path}`, init));
}

async function status(res: Response): Promise<{ code: number; reason: string; message: string }> {
  return (await res.json()) as { code: number; reason: string; message: string };
}

describe('request limits', () => {
  it('refuses a body over the limit with 413, by Content-Length before reading it', async () => {
    const call = app({ maxBodyBytes: 1024 });
    const res = await call('/x', { method: 'POST', body: 'x'.repeat(1025) });
    expect(res.status).toBe(413);
    expect(await status(res)).toMatchObject({
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 1024',
    });
    expect(await (await call('/x', { method: 'POST', body: 'x'.repeat(1024) })).text()).toBe('ok 1024');
  });

  it('refuses a chunked body once it passes the limit', async () => {
    const call = app({ maxBodyBytes: 1024 });
    const chunk = new Uint8Array(600);
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(chunk);
      },
    });
    const res = await call('/x', { method: 'POST', body, duplex: 'half' });
    expect(res.status).toBe(413);
  });

  it('refuses long URLs (414) and too many or too large headers (431), with Statuses', async () => {
    const call = app({ maxUrlBytes: 256, maxHeaderBytes: 1024, maxHeaderCount: 8 });
    const long = await call(`/api/v1/pods?labelSelector=${'a'.repeat(300)}`);
    expect(long.status).toBe(414);
    expect((await status(long)).code).toBe(414);
    const many = await call('/', {
      headers: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`x-h${i}`, 'v'])),
    });
    expect(many.status).toBe(431);
    const big = await call('/', { headers: { 'x-big': 'v'.repeat(1100) } });
    expect(big.status).toBe(431);
    expect((await call('/api')).status).toBe(200);
  });

  it('refuses a JSON body (or JSON patch) nested past MAX_BODY_DEPTH with a 400, before the route', async () => {
    const call = app();
    const deep = `{"x":${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}}`;
    for (const type of ['application/json', 'application/merge-patch+json; charset=utf-8']) {
      const res = await call('/x', { method: 'POST', body: deep, headers: { 'Content-Type': type } });
      expect(res.status, type).toBe(400);
      expect(await status(res)).toMatchObject({ reason: 'BadRequest', message: tooDeepMessage() });
    }
    const ok = `{"x":${'['.repeat(MAX_BODY_DEPTH - 1)}${']'.repeat(MAX_BODY_DEPTH - 1)}}`;
    const res = await call('/x', {
      method: 'POST',
      body: ok,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(await res.text()).toBe(`ok ${ok.length}`);
    // not JSON: not the fleet's to judge, the bytes go on
    const text = await call('/x', { method: 'POST', body: deep, headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(200);
  });

  it('Workers: what a refused request still sends is read away (bounded) before the refusal leaves', async () => {
    const a = new Hono<FleetEnv>();
    // refused without a look at the body, as authentication does
    a.use(middleware(limits(limitsSchema.parse({}), { intakeAfterAuthentication: true })));
    a.all('*', (c) => c.json({ kind: 'Status', code: 401 }, 401));
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled++ === 5) c.close();
        else c.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const res = await a.fetch(
      new Request('http://fleet/x', { method: 'POST', body, duplex: 'half' } as RequestInit),
    );
    expect(res.status).toBe(401);
    expect(pulled, 'the whole body was read before the answer').toBe(6);
    // one that never ends costs the deadline, then the answer goes
    const endless = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 50));
        c.enqueue(new Uint8Array(10));
      },
    });
    const t0 = Date.now();
    const late = await a.fetch(
      new Request('http://fleet/x', { method: 'POST', body: endless, duplex: 'half' } as RequestInit),
    );
    expect(late.status).toBe(401);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('Workers: a declared Content-Length over the limit is refused after what the client sends is read away', async () => {
    const a = new Hono<FleetEnv>();
    a.use(middleware(limits(limitsSchema.parse({ maxBodyBytes: 1024 }))));
    a.all('*', (c) => c.text('not reached', 500));
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled++ === 3) c.close();
        else c.enqueue(new Uint8Array(1000));
      },
    });
    const res = await a.fetch(
      new Request('http://fleet/x', {
        method: 'POST',
        body,
        duplex: 'half',
        headers: { 'Content-Length': '3000' },
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(await status(res)).toMatchObject({ reason: 'RequestEntityTooLarge' });
    expect(pulled, 'the whole body was read before the 413').toBe(4);
    // Node (the runtime gives the raw target, and its server lingers itself): refused unread
    let nodePulled = 0;
    const nodeBody = new ReadableStream<Uint8Array>({
      pull(c) {
        nodePulled++;
        c.enqueue(new Uint8Array(1000));
      },
    });
    const onNode = await a.fetch(
      new Request('http://fleet/x', {
        method: 'POST',
        body: nodeBody,
        duplex: 'half',
        headers: { 'Content-Length': '3000' },
      } as RequestInit),
      { [RAW_TARGET]: '/x' },
    );
    expect(onNode.status).toBe(413);
    expect(nodePulled).toBeLessThanOrEqual(1);
  });

  it('defaults to kube-apiserver’s 3 MiB body limit', () => {
    expect(limitsSchema.parse({}).maxBodyBytes).toBe(3 * 1024 * 1024);
  });
});
