/**
 * A relay group (workerd's merged watch by groups) whose answer comes after the head went out: its
 * Warning headers (its clusters that failed) can no longer reach the client as headers. They become the
 * fleet's watch notices, as a late member failure does: a watch-unavailable bookmark for a client taking
 * bookmarks, and the failed clusters counted (the route's /metrics).
 */
import { describe, expect, it } from 'vitest';
import { prepareMembership } from '../merge/rv/index.ts';
import { warningHeader } from '../upstreams/fanout.ts';
import { UNAVAILABLE_ANNOTATION, WatchMerger } from './merge.ts';
import { runMergedWatch } from './run.ts';
import type { PlannedWatch, Source } from './sources.ts';
import type { Start } from './start.ts';
import { Upstreams } from './upstreams.ts';

const enc = new TextEncoder();

function groupSource(merger: WatchMerger, clusters: string[]): Source {
  return {
    label: `clusters ${clusters.join(', ')}`,
    clusters,
    open: () => new Promise<Response>(() => {}),
    event: (ev) => merger.onGroupEvent(clusters, ev),
    gone: () => ({ kind: 'emit', lines: [] }),
    unavailable: (why) => merger.unavailable(`clusters ${clusters.join(', ')}: ${why}`),
    resumed: () => merger.resumed(`clusters ${clusters.join(', ')}`),
  };
}

describe('a relay group answering after the head', () => {
  it('its Warning headers become watch-unavailable notices and are counted', async () => {
    const membership = prepareMembership(['a', 'b', 'c', 'd']);
    const merger = new WatchMerger({
      view: { federation: false },
      membership,
      rvs: new Map(['a', 'b', 'c', 'd'].map((c) => [c, ''])),
      clusters: ['a', 'b', 'c', 'd'],
      allowBookmarks: true,
      sendInitialEvents: false,
      initialPhases: [],
    });
    const plan = {
      chosen: [],
      sendInitialEvents: false,
      allowBookmarks: true,
      upgradesLegacy: false,
      timeoutMs: undefined,
    } as unknown as PlannedWatch;
    // the first group answered before the head, with one event
    const early = groupSource(merger, ['a', 'b']);
    const late = groupSource(merger, ['c', 'd']);
    const cm = (name: string, cluster: string) => ({
      type: 'ADDED',
      object: {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name, labels: { 'fleet.karmada.io/cluster': cluster } },
      },
    });
    const stream = (lines: object[]) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const l of lines) c.enqueue(enc.encode(`${JSON.stringify(l)}\n`));
        },
      });
    let answer!: (s: Start) => void;
    const counted: string[] = [];
    const client = new AbortController();
    const upstreams = new Upstreams();
    const body = runMergedWatch({
      plan,
      merger,
      starts: [{ src: early, res: new Response(stream([cm('x', 'a')]), { status: 200 }) }],
      late: [new Promise<Start>((r) => (answer = r))],
      onLateFailure: (clusters) => counted.push(...clusters),
      grouped: true,
      clientSignal: client.signal,
      upstreams,
    });
    const headers = new Headers();
    headers.append('Warning', warningHeader('cluster d: connection refused "x"'));
    answer({ src: late, res: new Response(stream([cm('y', 'c')]), { status: 200, headers }) });
    const reader = body.getReader();
    const dec = new TextDecoder();
    let text = '';
    const lines = () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const notice = () =>
      lines().find((l) => l.type === 'BOOKMARK' && l.object.metadata.annotations?.[UNAVAILABLE_ANNOTATION]);
    const deadline = Date.now() + 10_000;
    while (!(notice() && lines().some((l) => l.object.metadata?.name === 'y')) && Date.now() < deadline) {
      const { value, done } = await Promise.race([
        reader.read(),
        new Promise<{ value: undefined; done: false }>((r) =>
          setTimeout(() => r({ value: undefined, done: false }), 200),
        ),
      ]);
      if (done) break;
      if (value) text += dec.decode(value, { stream: true });
    }
    client.abort();
    expect(notice()?.object.metadata.annotations[UNAVAILABLE_ANNOTATION]).toBe(
      'cluster d: connection refused "x"',
    );
    expect(lines().some((l) => l.object.metadata?.name === 'y')).toBe(true);
    expect(counted).toEqual(['d']);
  });
});
