import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SimCluster, type SimClusterOptions } from './cluster.ts';
import { call, openStream } from './testing.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = { group: '', version: 'v1', resource: 'namespaces' };
const PODS = { group: '', version: 'v1', resource: 'pods' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

const open: SimCluster[] = [];
function sim(opts: Partial<SimClusterOptions> = {}): SimCluster {
  const s = new SimCluster({ name: 'member1', seed: false, ...opts });
  s.create(NS, { metadata: { name: 'default' }, status: { phase: 'Active' } });
  open.push(s);
  return s;
}
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

const cm = (name: string, labels?: Record<string, string>) => ({
  metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
});

describe('watch', () => {
  it('frames events like kube-apiserver and replays history after an RV', async () => {
    const s = sim();
    s.create(CM, cm('a'));
    const rv = s.resourceVersion;
    const b = s.create(CM, cm('b'));
    const { res, lines } = await openStream(
      s,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const e1 = await lines.json();
    expect(e1.type).toBe('ADDED');
    expect(e1.object.metadata.name).toBe('b');
    expect(e1.object.metadata.resourceVersion).toBe(b.metadata.resourceVersion);
    expect(Object.keys(e1.object).slice(0, 2)).toEqual(['kind', 'apiVersion']);
    s.update(CM, { ...cm('b'), data: { x: '1' } });
    expect((await lines.json()).type).toBe('MODIFIED');
    s.remove(CM, 'default', 'b');
    const del = await lines.json();
    expect(del.type).toBe('DELETED');
    expect(Number(del.object.metadata.resourceVersion)).toBe(Number(s.resourceVersion));
    await lines.cancel();
  });

  it('starts with synthetic ADDED events from "" and "0"', async () => {
    const s = sim();
    s.create(CM, cm('a'));
    s.create(CM, cm('b'));
    for (const rv of ['', '0']) {
      const { lines } = await openStream(s, `/api/v1/configmaps?watch=1&resourceVersion=${rv}`);
      expect((await lines.json()).object.metadata.name).toBe('a');
      expect((await lines.json()).object.metadata.name).toBe('b');
      await lines.cancel();
    }
  });

  it('answers a too-old RV with exactly one 410 ERROR event, then ends, like the fixture', async () => {
    const s = sim();
    s.create(CM, cm('a'));
    s.compact();
    const want = readFileSync(new URL('./testdata/watch_error_410_expired.jsonl', import.meta.url), 'utf8');
    const res = await s.fetch(new Request('http://sim/api/v1/configmaps?watch=true&resourceVersion=1'));
    expect(res.status).toBe(200);
    const body = await res.text();
    const expected = want.replace(
      'too old resource version: 1 (2692711)',
      `too old resource version: 1 (${s.resourceVersion})`,
    );
    expect(body).toBe(expected);
  });

  it('filters with selectors: leaving the selector is DELETED, entering it ADDED', async () => {
    const s = sim();
    const { lines } = await openStream(
      s,
      '/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb',
    );
    s.create(CM, cm('x', { app: 'other' }));
    s.create(CM, cm('y', { app: 'web' }));
    let e = await lines.json();
    expect([e.type, e.object.metadata.name]).toEqual(['ADDED', 'y']);
    s.update(CM, cm('y', { app: 'db' }));
    e = await lines.json();
    expect([e.type, e.object.metadata.name]).toEqual(['DELETED', 'y']);
    s.update(CM, cm('x', { app: 'web' }));
    e = await lines.json();
    expect([e.type, e.object.metadata.name]).toEqual(['ADDED', 'x']);
    await lines.cancel();
  });

  it('sends bookmarks with only the RV, and the WatchList initial-events-end bookmark', async () => {
    const s = sim({ bookmarkIntervalMs: 30 });
    s.create(CM, cm('a'));
    const { lines } = await openStream(
      s,
      '/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=',
    );
    expect((await lines.json()).type).toBe('ADDED');
    const end = await lines.json();
    expect(end).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: s.resourceVersion,
          annotations: { 'k8s.io/initial-events-end': 'true' },
        },
      },
    });
    const periodic = await lines.json();
    expect(periodic).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: s.resourceVersion } },
    });
    await lines.cancel();
    const bad = await call(s, '/api/v1/configmaps?watch=true&sendInitialEvents=true');
    expect(bad.status).toBe(422);
    // kube 1.35 no longer requires allowWatchBookmarks with sendInitialEvents (measured)
    expect(bad.body.details.causes.map((c: any) => c.field)).toEqual(['resourceVersionMatch']);
  });

  it('sends Table events with columnDefinitions only in the first', async () => {
    const s = sim();
    s.create(CM, cm('a'));
    s.create(CM, cm('b'));
    const { lines } = await openStream(s, '/api/v1/namespaces/default/configmaps?watch=true', {
      accept: TABLE,
    });
    const first = await lines.json();
    expect(first.object.kind).toBe('Table');
    expect(first.object.columnDefinitions.length).toBeGreaterThan(0);
    expect(first.object.rows).toHaveLength(1);
    const second = await lines.json();
    expect(second.object.columnDefinitions).toBeNull();
    expect(second.object.rows[0].cells[0]).toBe('b');
    await lines.cancel();
  });

  it('drops the watcher when the client cancels, honours timeoutSeconds, errors on cuts', async () => {
    const s = sim();
    const w1 = await openStream(s, '/api/v1/configmaps?watch=true');
    expect(s.openWatches()).toBe(1);
    await w1.lines.cancel();
    expect(s.openWatches()).toBe(0);

    const w2 = await openStream(s, '/api/v1/configmaps?watch=true&timeoutSeconds=1');
    expect(await w2.lines.next(3000)).toBeUndefined(); // clean end
    expect(s.openWatches()).toBe(0);

    const w3 = await openStream(s, '/api/v1/configmaps?watch=true');
    s.cutWatches();
    await expect(w3.lines.next()).rejects.toThrow();
    expect(s.openWatches()).toBe(0);

    s.faults.cutWatchesAfterEvents = 2;
    const w4 = await openStream(s, '/api/v1/configmaps?watch=true');
    s.create(CM, cm('a'));
    s.create(CM, cm('b'));
    await expect(
      (async () => {
        for (;;) if ((await w4.lines.next()) === undefined) return 'clean';
      })(),
    ).rejects.toThrow();
    expect(s.openWatches()).toBe(0);
  });

  it('answers a future RV on list with 504 and an RV after compaction on watch from history', async () => {
    const s = sim();
    s.create(CM, cm('a'));
    const rv = s.resourceVersion;
    s.compact();
    const { lines } = await openStream(s, `/api/v1/configmaps?watch=true&resourceVersion=${rv}`);
    s.create(CM, cm('b'));
    expect((await lines.json()).object.metadata.name).toBe('b');
    await lines.cancel();
  });
});

describe('pod logs', () => {
  it('serves logs, tails, and follows appended lines until cancelled', async () => {
    const s = sim({ podReadyDelayMs: 5 });
    await call(s, '/api/v1/namespaces/default/pods', {
      method: 'POST',
      json: { metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
    });
    const pending = await call(s, '/api/v1/namespaces/default/pods/p/log');
    expect(pending.status).toBe(400);
    expect(pending.body.message).toBe('container "app" in pod "p" is waiting to start: ContainerCreating');
    for (let i = 0; i < 50 && (s.get(PODS, 'default', 'p') as any).status.phase !== 'Running'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const pod = s.get(PODS, 'default', 'p') as any;
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(pod.spec.nodeName).toBeTruthy();
    const all = await call(s, '/api/v1/namespaces/default/pods/p/log');
    expect(all.headers.get('content-type')).toBe('text/plain');
    expect(all.text.split('\n').length).toBeGreaterThan(2);
    const tail = await call(s, '/api/v1/namespaces/default/pods/p/log?tailLines=1&timestamps=true');
    expect(tail.text).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \S.*\n$/);

    const { lines } = await openStream(
      s,
      '/api/v1/namespaces/default/pods/p/log?follow=true&tailLines=0&container=app',
    );
    s.appendLog('default', 'p', 'app', 'hello from the test');
    expect(await lines.next()).toBe('hello from the test');
    await lines.cancel();
  });
});
