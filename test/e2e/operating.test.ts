/**
 * Operating the fleet: /metrics (kube-apiserver's request metrics and the fleet's per-cluster ones,
 * protected like kube's), W3C trace context passed to every cluster, and the status page at /fleet/ seen
 * in a real browser (Debian's Chromium driven by playwright-core) while a member goes down and comes back.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CHROMIUM = process.env.FLEET_CHROMIUM ?? '/usr/bin/chromium';
const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** metric series → value, read with a parser of the text format of our own */
async function scrape(url: string): Promise<Map<string, number>> {
  const r = await fetch(`${url}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  const out = new Map<string, number>();
  for (const line of (await r.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}
const series = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;
const LIST_PODS = {
  verb: 'LIST',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  scope: 'cluster',
  component: 'apiserver',
};

describe.each(RUNTIMES)('operating the fleet on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    // members reached directly, so a member that is down is a refused connection, not the proxy's 500
    config: (s) => s.staticConfig({ timeouts: { requestSeconds: 2 } }),
  });

  it('counts requests by kube labels and code: a list, a watch, a partial failure, an upstream timeout', async () => {
    const before = await scrape(f.url);
    const list = await f.kubectl().run(['get', 'pods', '-A']);
    expect(list.code).toBe(0);

    const watch = await fetch(`${f.url}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1`);
    expect(watch.status).toBe(200);
    await watch.text(); // the watch runs its course
    const WATCH = { ...LIST_PODS, verb: 'WATCH', resource: 'configmaps', scope: 'namespace' };

    f.member('member2').faults.down = true;
    try {
      const partial = await fetch(`${f.url}/api/v1/namespaces`);
      expect(partial.status).toBe(200);
      expect(partial.headers.get('warning')).toContain('cluster member2');
      await partial.text();
    } finally {
      f.member('member2').faults.down = false;
    }
    f.member('member3').faults.latencyMs = 3500;
    try {
      const slow = await fetch(`${f.url}/api/v1/services`);
      expect(slow.headers.get('warning')).toContain('cluster member3');
      await slow.text();
    } finally {
      f.member('member3').faults.latencyMs = 0;
    }

    const after = await scrape(f.url);
    const moved = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
    expect(moved(series('apiserver_request_total', { ...LIST_PODS, code: '200' }))).toBeGreaterThanOrEqual(1);
    expect(moved(series('apiserver_request_total', { ...WATCH, code: '200' }))).toBe(1);
    expect(after.get(series('apiserver_longrunning_requests', WATCH))).toBe(0);
    expect(moved(series('apiserver_request_duration_seconds_count', LIST_PODS))).toBeGreaterThanOrEqual(1);
    expect(moved(series('fleet_partial_responses_total', { cluster: 'member2' }))).toBeGreaterThanOrEqual(1);
    expect(moved(series('fleet_partial_responses_total', { cluster: 'member3' }))).toBeGreaterThanOrEqual(1);
    expect(
      moved(series('fleet_upstream_errors_total', { cluster: 'member2', reason: 'unreachable' })),
    ).toBeGreaterThanOrEqual(1);
    expect(
      moved(series('fleet_upstream_errors_total', { cluster: 'member3', reason: 'timeout' })),
    ).toBeGreaterThanOrEqual(1);
    expect(
      moved(series('fleet_upstream_request_duration_seconds_count', { cluster: 'member1', code: '200' })),
    ).toBeGreaterThanOrEqual(3);
    expect(after.get(series('apiserver_current_inflight_requests', { request_kind: 'readOnly' }))).toBe(1); // this scrape
  });

  it('serves /metrics only to callers the control plane allows (nonResourceURLs: /metrics)', async () => {
    const karmada = f.sims.karmada;
    const prev = karmada.rbac;
    // anonymous callers may read pods but not /metrics
    karmada.rbac = {
      rules: () => [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
    } as never;
    try {
      const r = await fetch(`${f.url}/metrics`);
      expect(r.status).toBe(403);
      const st = await r.json();
      expect(st).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(st.message).toContain('cannot get path "/metrics"');
    } finally {
      karmada.rbac = prev;
    }
    expect((await fetch(`${f.url}/metrics`)).status).toBe(200);
  });

  it('passes the caller’s traceparent to every cluster it asks', async () => {
    for (const s of [f.member('member1'), f.member('member3')]) s.requests.length = 0;
    const r = await fetch(`${f.url}/api/v1/namespaces`, { headers: { traceparent: TRACE } });
    expect(r.status).toBe(200);
    await r.text();
    for (const s of [f.member('member1'), f.member('member3')]) {
      const seen = s.requests.filter((q) => q.url.includes('/api/v1/namespaces'));
      expect(seen.length).toBeGreaterThan(0);
      for (const q of seen) expect(q.headers.traceparent).toBe(TRACE);
    }
    // an invalid one is not passed on
    f.member('member1').requests.length = 0;
    await (await fetch(`${f.url}/api/v1/namespaces`, { headers: { traceparent: 'not-a-trace' } })).text();
    for (const q of f.member('member1').requests) expect(q.headers.traceparent).toBeUndefined();
  });

  describe('the status page in a browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // as root in a closed network: no sandbox, no background connections
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('shows every cluster, sees a member go down and come back, and renders a non-blank page', async () => {
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      await page.goto(`${f.url}/fleet/?refresh=300`);
      const state = (c: string) =>
        page.locator(`#clusters tr[data-cluster="${c}"]`).getAttribute('data-state');
      await page.waitForFunction(() => document.querySelectorAll('#clusters tbody tr').length === 4);
      expect(await state('member2')).toBe('ready');
      await expect
        .poll(() => page.locator('#counts tr[data-cluster="member1"] td.num').textContent())
        .toMatch(/^[1-9]\d*$/);
      const pods = f.member('member1').list({ group: '', version: 'v1', resource: 'pods' }).length;
      expect(await page.locator('#counts tr[data-cluster="member1"] td.num').textContent()).toBe(
        String(pods),
      );
      const v = await page.locator('#clusters tr[data-cluster="member1"] td').nth(2).textContent();
      expect(v).toMatch(/^v1\.\d+/);

      f.member('member2').faults.down = true;
      try {
        await expect.poll(() => state('member2'), { timeout: 20_000 }).toBe('unreachable');
        expect(await page.locator('#clusters tr[data-cluster="member2"] .err').textContent()).toContain(
          'member2',
        );
        expect(await page.locator('#down').textContent()).toMatch(/^1/);
      } finally {
        f.member('member2').faults.down = false;
      }
      await expect.poll(() => state('member2'), { timeout: 20_000 }).toBe('ready');

      const dir = mkdtempSync(join(tmpdir(), 'fleet-status-'));
      const shot = join(dir, `status-${runtime}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      const png = readFileSync(shot);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      // not blank: decode the screenshot in a blank page and count its colours (a blank page has one)
      const probe = await browser.newPage();
      const colours = await probe.evaluate(async (b64) => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        const d = ctx.getImageData(0, 0, img.width, img.height).data;
        const seen = new Set<number>();
        let ink = 0;
        for (let i = 0; i < d.length; i += 4) {
          seen.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
          if (d[i]! + d[i + 1]! + d[i + 2]! < 600) ink++;
        }
        return { distinct: seen.size, inkShare: ink / (d.length / 4) };
      }, png.toString('base64'));
      await probe.close();
      expect(colours.distinct).toBeGreaterThan(16);
      expect(colours.inkShare).toBeGreaterThan(0.005);
      await page.close();
    });
  });
});
