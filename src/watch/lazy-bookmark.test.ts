import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeComposite, prepareMembership } from '../merge/rv/index.ts';
import { INITIAL_EVENTS_END, type MergeStep, WatchMerger } from './merge.ts';

/**
 * A cluster's bookmark is offered to the writer as a line made only when sent (merge.ts offered): whatever
 * the merger does before the writer sends it, the line says the stream's RV of when it was offered.
 */
const names = ['a', 'b', 'c'];
const membership = prepareMembership(names);
const cm = (name: string, rv: string) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv },
});
const bookmark = (rv: string, end = false) => ({
  type: 'BOOKMARK',
  object: {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { resourceVersion: rv, ...(end ? { annotations: { [INITIAL_EVENTS_END]: 'true' } } : {}) },
  },
});

type Op =
  | { op: 'event' | 'bookmark' | 'end' | 'restart' | 'list'; cluster: number; rv: number }
  | { op: 'gone'; cluster: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constantFrom('event', 'bookmark', 'end', 'restart', 'list') as fc.Arbitrary<
      'event' | 'bookmark' | 'end' | 'restart' | 'list'
    >,
    cluster: fc.nat(2),
    rv: fc.integer({ min: 1, max: 200 }),
  }),
  fc.record({ op: fc.constant('gone' as const), cluster: fc.nat(2) }),
);

describe('a merged bookmark offered for coalescing', () => {
  it('says the RV of when it was offered, however late the writer makes its line', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.boolean(), (ops, initial) => {
        const m = new WatchMerger({
          view: { federation: false },
          membership,
          rvs: new Map(names.map((c) => [c, '1'])),
          clusters: names,
          allowBookmarks: true,
          sendInitialEvents: false,
          initialPhases: initial ? names : [],
        });
        // the writer's pending bookmark and the RV the stream had when it was offered
        let pending: { line: MergeStep & { kind: 'emit' }; rv: string } | undefined;
        for (const o of ops) {
          const c = names[o.cluster]!;
          let step: MergeStep;
          if (o.op === 'gone') step = m.clusterGone(c);
          else if (o.op === 'list') step = m.initialFromList(c, String(o.rv));
          else if (o.op === 'restart') {
            m.restartInitial(c);
            continue;
          } else
            step = m.onEvent(
              c,
              o.op === 'event'
                ? { type: 'MODIFIED', object: cm(`o${o.rv}`, String(o.rv)) }
                : bookmark(String(o.rv), o.op === 'end'),
            );
          if (step.kind !== 'emit') continue;
          if (step.lines.length) pending = undefined;
          if (step.bookmark) pending = { line: step, rv: m.resourceVersion() };
        }
        if (!pending) return;
        const sent = JSON.parse(String(pending.line.bookmark));
        expect(sent.type).toBe('BOOKMARK');
        expect(sent.object.metadata.resourceVersion).toBe(pending.rv);
        expect(decodeComposite(sent.object.metadata.resourceVersion, membership).ok).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
