import { describe, expect, it } from 'vitest';
import { StatusError } from './http.ts';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.ts';
import { matchLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { humanDuration } from './table.ts';

describe('JSON patch (RFC 6902)', () => {
  it('supports every op', () => {
    const doc = { a: { b: [1, 2] }, c: 'x' };
    const out = jsonPatch(
      doc,
      JSON.stringify([
        { op: 'add', path: '/a/b/-', value: 3 },
        { op: 'remove', path: '/a/b/0' },
        { op: 'copy', from: '/c', path: '/d' },
        { op: 'move', from: '/c', path: '/e' },
        { op: 'replace', path: '/d', value: 'y' },
        { op: 'test', path: '/a/b', value: [2, 3] },
        { op: 'add', path: '/f~1g', value: true },
      ]),
    );
    expect(out).toEqual({ a: { b: [2, 3] }, d: 'y', e: 'x', 'f/g': true });
    expect(doc.a.b).toEqual([1, 2]); // input untouched
  });

  it('fails a test op and a replace under a missing path with 422; a replace of a missing key sets it', () => {
    // json-patch v4, which kube vendors, sets a missing object key on replace (measured on kube 1.35)
    expect(jsonPatch({ a: 1 }, JSON.stringify([{ op: 'replace', path: '/zz', value: 1 }]))).toEqual({
      a: 1,
      zz: 1,
    });
    for (const ops of [
      [{ op: 'test', path: '/a', value: 2 }],
      [{ op: 'replace', path: '/zz/y', value: 1 }],
    ]) {
      try {
        jsonPatch({ a: 1 }, JSON.stringify(ops));
        expect.unreachable();
      } catch (e) {
        expect((e as StatusError).status.code).toBe(422);
      }
    }
  });
});

describe('merge patch (RFC 7386)', () => {
  it('merges objects, deletes nulls, replaces arrays', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, l: [1] }, { a: { b: null, d: 3 }, l: [2] })).toEqual({
      a: { c: 2, d: 3 },
      l: [2],
    });
  });
});

describe('strategic merge patch', () => {
  const pod = {
    spec: {
      containers: [
        { name: 'a', image: 'a:1', ports: [{ containerPort: 80, name: 'http' }] },
        { name: 'b', image: 'b:1' },
      ],
      volumes: [{ name: 'v1' }, { name: 'v2' }],
    },
    metadata: { finalizers: ['x'] },
  };

  it('merges lists by their merge key and deletes by $patch', () => {
    const out = strategicMergePatch(pod, {
      spec: {
        containers: [
          { name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }] },
          { name: 'c', image: 'c:1' },
        ],
        volumes: [{ name: 'v1', $patch: 'delete' }],
      },
      metadata: { finalizers: ['y'] },
    }) as any;
    expect(out.spec.containers.map((c: any) => c.name)).toEqual(['a', 'b', 'c']);
    expect(out.spec.containers[0].ports).toEqual([{ containerPort: 80, name: 'http', protocol: 'TCP' }]);
    expect(out.spec.volumes).toEqual([{ name: 'v2' }]);
    expect(out.metadata.finalizers).toEqual(['x', 'y']);
  });

  it('understands $patch: replace, $retainKeys and $deleteFromPrimitiveList', () => {
    const out = strategicMergePatch(
      {
        spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
        metadata: { finalizers: ['x', 'y'] },
      },
      {
        spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
        metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] },
      },
    ) as any;
    expect(out.spec.strategy).toEqual({ type: 'Recreate' });
    expect(out.metadata.finalizers).toEqual(['y']);
    const rep = strategicMergePatch(pod, { spec: { $patch: 'replace', containers: [] } }) as any;
    expect(rep.spec).toEqual({ containers: [] });
  });

  it('rejects a list item without its merge key', () => {
    expect(() => strategicMergePatch(pod, { spec: { containers: [{ image: 'x' }] } })).toThrow(StatusError);
  });
});

describe('selectors', () => {
  it('parses the full label selector syntax', () => {
    const sel = parseLabelSelector('a=1,b==2,c!=3,d in (x, y),e notin (z),f,!g');
    expect(sel.map((r) => r.operator)).toEqual(['=', '==', '!=', 'in', 'notin', 'exists', '!']);
    expect(matchLabels(sel, { a: '1', b: '2', d: 'y', f: '' })).toBe(true);
    expect(matchLabels(sel, { a: '1', b: '2', d: 'y', f: '', g: '' })).toBe(false);
    expect(() => parseLabelSelector('a in x')).toThrow(StatusError);
  });

  it('parses field selectors with escapes and kind-specific fields', () => {
    expect(parseFieldSelector('spec.nodeName=n1,status.phase!=Failed', 'pods')).toHaveLength(2);
    expect(parseFieldSelector('involvedObject.name=a\\,b', 'events')[0]!.value).toBe('a,b');
    expect(() => parseFieldSelector('spec.foo=n1', 'pods')).toThrow('field label not supported: spec.foo');
    expect(() => parseFieldSelector('spec.nodeName=n1', 'configmaps')).toThrow(
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });
});

describe('humanDuration', () => {
  it('formats like k8s.io/apimachinery/pkg/util/duration', () => {
    const s = 1000;
    expect(humanDuration(5 * s)).toBe('5s');
    expect(humanDuration(119 * s)).toBe('119s');
    expect(humanDuration(150 * s)).toBe('2m30s');
    expect(humanDuration(34 * 60 * s)).toBe('34m');
    expect(humanDuration(5 * 3600 * s + 60 * s)).toBe('5h1m');
    expect(humanDuration(30 * 3600 * s)).toBe('30h');
    expect(humanDuration(3 * 86400 * s + 3600 * s)).toBe('3d1h');
    expect(humanDuration(400 * 86400 * s)).toBe('400d');
    expect(humanDuration(3 * 365 * 86400 * s)).toBe('3y');
  });
});
