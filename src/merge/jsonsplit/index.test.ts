import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listSplitterTransform, splitListStream } from '../../../test/helpers/splitstream.ts';
import { REFS_TOP } from './facts.ts';
import { JsonSplitError, ListSplitter, parseItem, type SplitEvent, type SplitterOptions } from './index.ts';
import type { ItemFacts } from './item.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.slice(prev, p)); // copies: the splitter must not depend on chunk identity
    prev = p;
  }
  out.push(bytes.slice(prev));
  return out;
}

function run(chunks: Uint8Array[], opts?: SplitterOptions): SplitEvent[] {
  const s = new ListSplitter(opts);
  const events: SplitEvent[] = [];
  for (const c of chunks) s.push(c, (e) => events.push(e));
  s.end();
  return events;
}

function runText(text: string, opts?: SplitterOptions): SplitEvent[] {
  return run([enc.encode(text)], opts);
}

function summary(events: SplitEvent[]) {
  const items: string[] = [];
  let head: unknown;
  let tail: unknown;
  const order: string[] = [];
  for (const e of events) {
    order.push(e.type);
    if (e.type === 'item') items.push(dec.decode(e.bytes));
    else if (e.type === 'head') head = e.value;
    else tail = e.value;
  }
  return { items, head, tail, order };
}

const fieldName = fc.oneof(
  fc.constantFrom('kind', 'apiVersion', 'metadata', 'columnDefinitions'),
  fc.string({ maxLength: 8 }),
);

describe('ListSplitter', () => {
  it('splits a list chunked at random boundaries (items, head, tail exact)', () => {
    const arb = fc.record({
      head: fc.dictionary(fieldName, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
      tail: fc.dictionary(fieldName, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
      items: fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 12 }),
      key: fc.constantFrom('items', 'rows'),
      pretty: fc.constantFrom(0, 1, 2, '\t'),
      cuts: fc.array(fc.nat(), { maxLength: 30 }),
    });
    fc.assert(
      fc.property(arb, ({ head, tail, items, key, pretty, cuts }) => {
        const h = { ...head };
        const t = { ...tail };
        delete h[key];
        delete t[key];
        for (const k of Object.keys(h)) delete t[k];
        // build the body by hand so that the head fields come before, the tail fields after the array
        const ser = (v: unknown) => JSON.stringify(v, null, pretty || undefined);
        const members = [
          ...Object.entries(h).map(([k, v]) => `${JSON.stringify(k)}: ${ser(v)}`),
          `${JSON.stringify(key)} :\n [ ${items.map(ser).join(' ,\n')} ]`,
          ...Object.entries(t).map(([k, v]) => `${JSON.stringify(k)}:${ser(v)}`),
        ];
        const text = pretty ? ` {\n ${members.join(',\n ')}\n}\n` : `{${members.join(',')}}`;
        const events = run(chunked(enc.encode(text), cuts), { arrayKey: key });
        const s = summary(events);
        expect(s.order[0]).toBe('head');
        expect(s.order.at(-1)).toBe('tail');
        expect(s.order.filter((x) => x === 'item').length).toBe(items.length);
        expect(s.items.map((x) => JSON.parse(x))).toEqual(items.map((v) => JSON.parse(JSON.stringify(v))));
        if (!pretty) expect(s.items).toEqual(items.map((v) => JSON.stringify(v)));
        expect(s.head).toEqual(JSON.parse(JSON.stringify(h)));
        expect(s.tail).toEqual(JSON.parse(JSON.stringify(t)));
        // the whole body is valid JSON and the items are exactly its array
        expect(JSON.parse(text)[key]).toEqual(s.items.map((x) => JSON.parse(x)));
      }),
      { numRuns: 3000 },
    );
  });

  it('splits byte by byte, including multi-byte UTF-8 and escapes', () => {
    const text =
      '{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"name":"ü€𝄞","q":"a\\"]}[,\\\\","u":"\\u00fc\\ud834\\udd1e"},' +
      '[1,-0.5e+10,true,false,null,{}],"x]",0,-0,1E2]}';
    const bytes = enc.encode(text);
    const events = run(Array.from(bytes, (b) => Uint8Array.of(b)));
    const s = summary(events);
    expect(s.items.map((x) => JSON.parse(x))).toEqual(JSON.parse(text).items);
    expect(s.head).toEqual({ kind: 'PodList', metadata: { resourceVersion: '7' } });
    expect(s.tail).toEqual({});
  });

  it('handles Tables (columnDefinitions before rows), metadata after items, nested "items" keys', () => {
    const table = {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '9' },
      columnDefinitions: [{ name: 'Name', type: 'string' }],
      rows: [{ cells: ['a'], object: { metadata: { name: 'a', items: [1, 2] } } }],
    };
    const s = summary(runText(JSON.stringify(table), { arrayKey: 'rows' }));
    expect(s.head).toEqual({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '9' },
      columnDefinitions: table.columnDefinitions,
    });
    expect(s.items.map((x) => JSON.parse(x))).toEqual(table.rows);

    const after = summary(
      runText('{"metadata":{"items":[9]},"items":[1,2],"kind":"List","metadata2":{"a":[]}}'),
    );
    expect(after.head).toEqual({ metadata: { items: [9] } });
    expect(after.items).toEqual(['1', '2']);
    expect(after.tail).toEqual({ kind: 'List', metadata2: { a: [] } });

    const escapedKey = summary(runText('{"\\u0069tems":[{"a":1}]}'));
    expect(escapedKey.items).toEqual(['{"a":1}']);
  });

  it('handles null, empty and absent arrays', () => {
    expect(summary(runText('{"kind":"PodList","items":null,"metadata":{}}'))).toEqual({
      items: [],
      head: { kind: 'PodList' },
      tail: { metadata: {} },
      order: ['head', 'tail'],
    });
    expect(summary(runText('{"items":[]}'))).toEqual({
      items: [],
      head: {},
      tail: {},
      order: ['head', 'tail'],
    });
    expect(summary(runText(' {"kind":"Status","code":404} '))).toEqual({
      items: [],
      head: { kind: 'Status', code: 404 },
      tail: {},
      order: ['head', 'tail'],
    });
    expect(summary(runText('{}'))).toEqual({ items: [], head: {}, tail: {}, order: ['head', 'tail'] });
  });

  it('gives item indexes and zero-copy views for items within one chunk', () => {
    const bytes = enc.encode('{"items":[{"a":1},{"b":2}]}');
    const events: SplitEvent[] = [];
    new ListSplitter().push(bytes, (e) => events.push(e));
    const items = events.filter((e) => e.type === 'item');
    expect(items.map((e) => e.index)).toEqual([0, 1]);
    expect(items[0]!.bytes.buffer).toBe(bytes.buffer);
    expect(parseItem(items[1]!.bytes)).toEqual({ b: 2 });
  });

  const malformed = [
    '',
    ' ',
    '[]',
    '"x"',
    '1',
    '{',
    '{"items":[1,2]',
    '{"items":[1,2}',
    '{"items":[1,]}',
    '{"items":[,1]}',
    '{"items":[01]}',
    '{"items":[1.]}',
    '{"items":[.5]}',
    '{"items":[-]}',
    '{"items":[1e]}',
    '{"items":[+1]}',
    '{"items":[tru]}',
    '{"items":[nul]}',
    '{"items":[True]}',
    '{"items":["a\nb"]}',
    '{"items":["\\x"]}',
    '{"items":["\\u12G4"]}',
    '{"items":["abc]}',
    '{"items":[{"a" 1}]}',
    '{"items":[{"a":}]}',
    '{"items":[{1:2}]}',
    '{"items":[{"a":1,}]}',
    '{"items":[[}]]}',
    '{"items":[1 2]}',
    '{"items":{}}',
    '{"items":"x"}',
    '{"items":[],"items":[]}',
    '{"a":1 "b":2}',
    '{"a":1}}',
    '{"a":1} x',
    '{"a":1},',
    "{'a':1}",
    '{"a":NaN}',
    '{"a":Infinity}',
  ];
  it("says where each item's metadata lies, and when the rewriting must not rely on it", () => {
    const items = [
      '{"metadata":{"name":"a","x":"}{"},"spec":{"metadata":{"nested":true}}}',
      ' { "kind" : "Pod" , "metadata" :\n { "name" : "b" } , "status" : {} } ',
      '{"spec":{},"metadata":{"name":"c"}}',
      '{"metadata":{"name":"d"},"involvedObject":{"name":"x"}}',
      '{"metadata":{"name":"e"},"metadata":{"name":"f"}}',
      '{"met\\u0061data":{"name":"g"}}',
      '{"metadata":"h"}',
      '{"spec":{}}',
      '[1,2]',
    ];
    const body = enc.encode(`{"items":[${items.join(',')}]}`);
    for (const cuts of [[], [20, 21, 90, 91, 92, 150], Array.from({ length: body.length }, (_, i) => i)]) {
      const got = run(chunked(body, cuts))
        .filter((e) => e.type === 'item')
        .map((e) => {
          const { bytes, facts: f } = e as { bytes: Uint8Array; facts?: ItemFacts };
          if (!f) return undefined;
          const md = f.mdFrom < 0 ? null : dec.decode(bytes.subarray(f.mdFrom, f.mdTo));
          return { md, odd: f.odd, refersTop: (f.refs & REFS_TOP) !== 0 };
        });
      const plain = { odd: false, refersTop: false };
      const want = [
        { md: '{"name":"a","x":"}{"}', ...plain },
        { md: '{ "name" : "b" }', ...plain },
        { md: '{"name":"c"}', ...plain },
        { md: '{"name":"d"}', odd: false, refersTop: true }, // refers to another object by name: parsed
        expect.objectContaining({ odd: true }), // two metadata members: JSON.parse keeps the last
        expect.objectContaining({ odd: true }), // a key written with escapes
        { md: '"h"', ...plain }, // not an object
        { md: null, ...plain }, // none
        undefined, // not an object at all
      ];
      // an item cut by chunk boundaries (byte by byte: every one) is scanned again whole: the same ranges
      expect(got).toEqual(want);
    }
  });

  it('rejects malformed bodies with a JsonSplitError', () => {
    for (const text of malformed) {
      expect(() => runText(text), text).toThrow(JsonSplitError);
      // also when fed byte by byte
      expect(() => run(Array.from(enc.encode(text), (b) => Uint8Array.of(b))), text).toThrow(JsonSplitError);
    }
  });

  it('agrees with JSON.parse on random mutations of valid bodies (never hangs, only typed errors)', () => {
    const arb = fc.record({
      items: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }),
      meta: fc.jsonValue({ maxDepth: 2 }),
      edits: fc.array(
        fc.record({
          pos: fc.nat(),
          op: fc.constantFrom('del', 'ins', 'rep', 'cut'),
          ch: fc.constantFrom(...'{}[]",:\\ 0-.eE1tfnu\u0001\t'.split(''), 'é'),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      cuts: fc.array(fc.nat(), { maxLength: 8 }),
    });
    // both outcomes must occur, or the property checks only one side of the agreement
    let rejected = 0;
    let split = 0;
    fc.assert(
      fc.property(arb, ({ items, meta, edits, cuts }) => {
        let text = JSON.stringify({ kind: 'List', metadata: meta, items });
        for (const { pos, op, ch } of edits) {
          const p = pos % (text.length + 1);
          if (op === 'del') text = text.slice(0, p) + text.slice(p + 1);
          else if (op === 'ins') text = text.slice(0, p) + ch + text.slice(p);
          else if (op === 'rep') text = text.slice(0, p) + ch + text.slice(p + 1);
          else text = text.slice(0, p);
        }
        let parsed: unknown;
        let parseOk = true;
        try {
          parsed = JSON.parse(text);
        } catch {
          parseOk = false;
        }
        let events: SplitEvent[] | undefined;
        let err: unknown;
        try {
          events = run(chunked(enc.encode(text), cuts));
        } catch (e) {
          err = e;
        }
        if (err !== undefined) {
          expect(err).toBeInstanceOf(JsonSplitError);
          rejected++;
          if (parseOk) {
            // only the list-shape rules may reject valid JSON
            expect((err as Error).message).toMatch(/expected '\{'|duplicate key|expected an array or null/);
          }
        } else {
          split++;
          expect(parseOk).toBe(true);
          const obj = parsed as Record<string, unknown>;
          const s = summary(events!);
          const got = s.items.map((x) => JSON.parse(x));
          expect(got).toEqual(Array.isArray(obj.items) ? obj.items : []);
        }
      }),
      { numRuns: 5000 },
    );
    expect(rejected).toBeGreaterThan(100);
    expect(split).toBeGreaterThan(100);
  });

  it('enforces limits', () => {
    expect(() => runText('{"items":["xxxxxxxxxxxxxxxxxxxx"]}', { maxItemBytes: 10 })).toThrow(/item larger/);
    expect(() =>
      run(chunked(enc.encode('{"items":["xxxxxxxxxxxxxxxxxxxx"]}'), [12, 15]), { maxItemBytes: 10 }),
    ).toThrow(JsonSplitError);
    expect(() => runText('{"items":[[[[[1]]]]]}', { maxDepth: 4 })).toThrow(/nesting/);
    expect(() =>
      runText('{"metadata":"xxxxxxxxxxxxxxxxxxxxxxxxx","items":[]}', { maxMemberBytes: 10 }),
    ).toThrow(JsonSplitError);
  });

  it('keeps failing after an error', () => {
    const s = new ListSplitter();
    expect(() => s.push(enc.encode('{"items":[x'), () => {})).toThrow(JsonSplitError);
    expect(() => s.push(enc.encode(']}'), () => {})).toThrow(JsonSplitError);
    expect(() => s.end()).toThrow(JsonSplitError);
  });
});

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]!);
      else c.close();
    },
  });
}

describe('stream wrappers', () => {
  const text = '{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"a":1},{"b":[2]}]}';
  it('async iterator over a ReadableStream', async () => {
    const events: SplitEvent[] = [];
    for await (const e of splitListStream(streamOf(chunked(enc.encode(text), [3, 20, 61])))) events.push(e);
    expect(summary(events).items).toEqual(['{"a":1}', '{"b":[2]}']);
  });
  it('async iterator rejects malformed input and cancels the source', async () => {
    let cancelled = false;
    const src = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('{"items":[1,'));
        c.enqueue(enc.encode('}'));
      },
      cancel() {
        cancelled = true;
      },
    });
    await expect(async () => {
      for await (const _ of splitListStream(src));
    }).rejects.toThrow(JsonSplitError);
    expect(cancelled).toBe(true);
  });
  it('TransformStream', async () => {
    const out = streamOf(chunked(enc.encode(text), [5, 50])).pipeThrough(listSplitterTransform());
    const events: SplitEvent[] = [];
    for await (const e of out as unknown as AsyncIterable<SplitEvent>) events.push(e);
    expect(summary(events).order).toEqual(['head', 'item', 'item', 'tail']);
  });
  it('TransformStream errors on truncated input', async () => {
    const out = streamOf([enc.encode('{"items":[1')]).pipeThrough(listSplitterTransform());
    await expect(async () => {
      for await (const _ of out as unknown as AsyncIterable<SplitEvent>);
    }).rejects.toThrow(JsonSplitError);
  });
});
