import { describe, expect, it } from 'vitest';
import { addAnnotations, itemFacts } from './index.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const ADD = { 'fleet.karmada.io/template': 'web', 'fleet.karmada.io/drift': 'InSync' };

/** the item's text with ADD spliced in, or undefined when the bytes cannot say where */
function spliced(item: unknown): string | undefined {
  const b = enc.encode(JSON.stringify(item));
  const f = itemFacts(b, false);
  if (!f) throw new Error('no facts');
  const out = addAnnotations(b, f, ADD);
  return out && dec.decode(out);
}

describe('addAnnotations', () => {
  it('adds to existing annotations, keeps every other byte, and the result scans again', () => {
    const item = {
      metadata: { name: 'web', annotations: { a: '1' }, labels: { x: 'y' } },
      spec: { replicas: 2, template: { metadata: { annotations: { inner: 'no' } } } },
    };
    const text = spliced(item)!;
    const parsed = JSON.parse(text);
    expect(parsed.metadata.annotations).toEqual({ a: '1', ...ADD });
    // the pod template's annotations are not metadata's
    expect(parsed.spec).toEqual(item.spec);
    expect(itemFacts(enc.encode(text), false)).toBeDefined();
  });

  it('creates annotations in metadata that has none, or nothing at all', () => {
    expect(JSON.parse(spliced({ metadata: { name: 'web' }, spec: {} })!).metadata).toEqual({
      name: 'web',
      annotations: ADD,
    });
    expect(JSON.parse(spliced({ metadata: {} })!).metadata).toEqual({ annotations: ADD });
    expect(JSON.parse(spliced({ metadata: { annotations: {} } })!).metadata).toEqual({ annotations: ADD });
  });

  it('leaves to parsing what it cannot splice without a duplicate key or a guess', () => {
    expect(spliced({ metadata: { annotations: { 'fleet.karmada.io/drift': 'old' } } })).toBeUndefined();
    expect(spliced({ metadata: { annotations: null } })).toBeUndefined();
    expect(spliced({ kind: 'X' })).toBeUndefined();
  });
});
