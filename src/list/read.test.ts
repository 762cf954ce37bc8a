import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitListStream } from '../../test/helpers/splitstream.ts';
import { ItemScanner, type SplitEvent } from '../merge/jsonsplit/index.ts';
import { BodyIdleError, type SplitEvents, splitGuarded } from './read.ts';

const enc = new TextEncoder();

/** A body of `chunks`, then (unless `end` is false) its end; says whether it was cancelled. */
function body(chunks: string[], o: { end?: boolean } = {}) {
  const seen = { cancelled: false, pulls: 0 };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        seen.pulls++;
        if (i < chunks.length) c.enqueue(enc.encode(chunks[i++]!));
        else if (o.end !== false) c.close();
        // else: silent forever
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

const shape = (e: SplitEvent) =>
  e.type === 'item'
    ? `item ${e.index}:${new TextDecoder().decode(e.bytes)} ${JSON.stringify(e.facts)}`
    : `${e.type}:${JSON.stringify(e.value)}`;

async function all(events: AsyncIterable<SplitEvent>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of events) out.push(shape(e));
  return out;
}

/** Reads events up to and including the tail, then stops, as the merge does. */
async function untilTail(events: SplitEvents): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const r = await events.next();
    if (r.done) break;
    out.push(shape(r.value));
    if (r.value.type === 'tail') break;
  }
  await events.return(undefined);
  return out;
}

const LIST =
  '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"a":1},{"b":"x\\"y"}]}';

describe('splitGuarded: one cluster’s list body for the merge', () => {
  it('gives the events the stream splitter gives, however the body is cut into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: LIST.length - 1 }), { maxLength: 6 }),
        async (cuts) => {
          const at = [...new Set(cuts)].sort((a, b) => a - b);
          const chunks = [0, ...at].map((from, k) => LIST.slice(from, at[k] ?? LIST.length));
          const want = await all(splitListStream(body(chunks).stream, { arrayKey: ['items', 'rows'] }));
          const got = splitGuarded(body(chunks).stream, 1000);
          expect(await all(got.events)).toEqual(want);
          expect(got.received()).toBe(enc.encode(LIST).length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('gives the same events for long lists and heads longer than the first slice, however cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 3000 }), { minLength: 0, maxLength: 25 }),
        fc.integer({ min: 0, max: 9000 }),
        fc.array(fc.integer({ min: 1, max: 200_000 }), { maxLength: 5 }),
        async (names, headPad, cuts) => {
          const cols = JSON.stringify([{ name: 'x'.repeat(headPad), type: 'string' }]);
          const text = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},"columnDefinitions":${cols},"rows":[${names.map((n) => JSON.stringify({ cells: [n], object: { metadata: { name: n } } })).join(',')}]}\n`;
          const at = [...new Set(cuts.filter((c) => c < text.length))].sort((a, b) => a - b);
          const chunks = [0, ...at].map((from, k) => text.slice(from, at[k] ?? text.length));
          const want = await all(splitListStream(body(chunks).stream, { arrayKey: ['items', 'rows'] }));
          const b = body(chunks);
          expect(await all(splitGuarded(b.stream, 1000).events)).toEqual(want);
          const early = body(chunks);
          expect(await untilTail(splitGuarded(early.stream, 1000).events)).toEqual(want);
          expect(early.seen.cancelled).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('hands on the same events taken without a promise (ready) as awaited (next), in any mix of the two', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: LIST.length - 1 }), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        async (cuts, asks) => {
          const at = [...new Set(cuts)].sort((a, b) => a - b);
          const chunks = [0, ...at].map((from, k) => LIST.slice(from, at[k] ?? LIST.length));
          const want = await all(splitListStream(body(chunks).stream, { arrayKey: ['items', 'rows'] }));
          const events = splitGuarded(body(chunks).stream, 1000).events;
          const got: string[] = [];
          for (let k = 0; ; k++) {
            const e = asks[k % asks.length] ? events.ready() : undefined;
            if (e !== undefined) {
              got.push(shape(e));
              continue;
            }
            const r = await events.next();
            if (r.done) break;
            got.push(shape(r.value));
          }
          expect(got).toEqual(want);
          expect(events.ready()).toBeUndefined();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads the body to its end once the tail is in, so a merge that stops at the tail cancels nothing', async () => {
    const b = body([LIST.slice(0, 40), LIST.slice(40), '\n']);
    const events = await untilTail(splitGuarded(b.stream, 1000).events);
    expect(events.at(-1)).toMatch(/^tail:/);
    expect(b.seen.cancelled).toBe(false);
  });

  it('cancels the body when the consumer stops before the tail', async () => {
    const b = body([LIST.slice(0, 90), LIST.slice(90)]);
    const events = splitGuarded(b.stream, 1000).events;
    expect((await events.next()).value?.type).toBe('head');
    await events.return(undefined);
    expect(b.seen.cancelled).toBe(true);
  });

  it('a body that is silent after its tail is cancelled by the idle timeout, and the list is still whole', async () => {
    const b = body([LIST], { end: false });
    const events = await untilTail(splitGuarded(b.stream, 50).events);
    expect(events.at(-1)).toMatch(/^tail:/);
    expect(b.seen.cancelled).toBe(true);
  });

  it('fails with BodyIdleError when a read waits past the idle timeout mid-list, and cancels the body', async () => {
    const b = body([LIST.slice(0, 90)], { end: false });
    const s = splitGuarded(b.stream, 50);
    const err = await all(s.events).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyIdleError);
    expect(b.seen.cancelled).toBe(true);
    expect(s.received()).toBe(90);
  });

  it('a body without bytes (or none) fails as a truncated list, having received nothing', async () => {
    const empty = splitGuarded(body([]).stream, 1000);
    await expect(all(empty.events)).rejects.toThrow();
    expect(empty.received()).toBe(0);
    await expect(all(splitGuarded(null, 1000).events)).rejects.toThrow();
  });

  it('bodies sharing one item scanner (a merged list’s) give the events each gives alone, read interleaved', async () => {
    // a memo that keeps values (a comparison as the platform gives one): long values repeat across bodies,
    // or differ from a kept one by one byte
    const eq = (m: Uint8Array, b: Uint8Array, at: number) => m.every((x, k) => b[at + k] === x);
    const spec = (k: number) =>
      JSON.stringify({ containers: [{ name: 'c', image: `img:${'v'.repeat(150)}${k}` }] });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 6 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 12 }),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 40 }),
        async (bodies, cuts, order) => {
          const texts = bodies.map(
            (ks, b) =>
              `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${b}"},"items":[${ks.map((k, i) => `{"metadata":{"name":"p${i}"},"spec":${spec(k)}}`).join(',')}]}`,
          );
          const chunksOf = (text: string) => {
            const at = [...new Set(cuts.filter((c) => c < text.length))].sort((a, b) => a - b);
            return [0, ...at].map((from, k) => text.slice(from, at[k] ?? text.length));
          };
          const alone = await Promise.all(
            texts.map((t) => all(splitGuarded(body(chunksOf(t)).stream, 1000, new ItemScanner(eq)).events)),
          );
          const shared = new ItemScanner(eq);
          const streams = texts.map((t) => splitGuarded(body(chunksOf(t)).stream, 1000, shared).events);
          const got: string[][] = texts.map(() => []);
          const open = new Set(streams.keys());
          // one event of a body at a time, the bodies taken in the order given, then round the rest
          for (let step = 0; open.size > 0; step++) {
            const i = step < order.length ? order[step]! % texts.length : [...open][0]!;
            if (!open.has(i)) continue;
            const r = await streams[i]!.next();
            if (r.done) open.delete(i);
            else got[i]!.push(shape(r.value));
          }
          expect(got).toEqual(alone);
          // one value everywhere: the memo learnt it once, wherever it came first (the JavaScript scan's
          // memo: with the wasm lane items are read from its tape and only some resumed ones reach the memo)
          const ks = bodies.flat();
          if (shared.lane === undefined && ks.length > 1 && new Set(ks).size === 1)
            expect(shared.memo.hits).toBeGreaterThan(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
