import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { healthz, live, ready } from './health.ts';
import { type Cluster, fakeFleet, json } from './testing.ts';

function app(controlPlane: Cluster) {
  const { deps } = fakeFleet({ karmada: controlPlane });
  const h = new Hono();
  h.get('/livez', live);
  h.get('/healthz', healthz);
  h.get('/readyz', (c) => ready(c, deps));
  return h;
}

describe('health', () => {
  it('is live without asking anyone', async () => {
    const r = await app(() => 'unreachable').request('/livez');
    expect([r.status, await r.text()]).toEqual([200, 'ok']);
  });

  it('names each probe in its ?verbose answer, /healthz as healthz (as kube-apiserver does)', async () => {
    const a = app(() => 'unreachable');
    expect(await (await a.request('/livez?verbose')).text()).toBe('[+]ping ok\nlivez check passed\n');
    expect(await (await a.request('/healthz?verbose')).text()).toBe('[+]ping ok\nhealthz check passed\n');
    expect(await (await a.request('/healthz')).text()).toBe('ok');
  });

  it("is ready when the control plane's /readyz answers 200, and lists the checks with ?verbose", async () => {
    const a = app(() => new Response('ok'));
    expect(await (await a.request('/readyz')).text()).toBe('ok');
    expect(await (await a.request('/readyz?verbose')).text()).toBe(
      '[+]ping ok\n[+]control-plane ok\nreadyz check passed\n',
    );
  });

  it('is not ready when the control plane fails or cannot be reached, and withholds the reason', async () => {
    for (const cp of [() => json({}, 500), () => 'unreachable' as const]) {
      const r = await app(cp).request('/readyz?verbose');
      expect(r.status).toBe(500);
      const text = await r.text();
      expect(text).toContain('[-]control-plane failed: reason withheld');
      expect(text).not.toContain('refused');
    }
  });
});
