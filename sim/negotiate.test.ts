import { describe, expect, it } from 'vitest';
import { negotiateTarget, parseAccept, parseMediaRange } from './negotiate.ts';

const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const opts = { list: true, watch: false, protobuf: true };

describe('Accept parsing (goautoneg as kube-apiserver uses it)', () => {
  it('orders by q, then concrete before wildcard, then more parameters, then as sent', () => {
    const r = parseAccept(
      '*/*;q=0.5, text/*, application/json;q=0.9, application/yaml;q=0.9;x=1, text/plain',
    );
    expect(r.map((m) => `${m.type}/${m.subtype}`)).toEqual([
      'text/plain',
      'text/*',
      'application/yaml',
      'application/json',
      '*/*',
    ]);
  });

  it('lowercases names, unquotes values, drops q=0 and what does not parse', () => {
    expect(parseMediaRange('Application/JSON; AS="Table"; v=v1')).toEqual({
      type: 'application',
      subtype: 'json',
      params: { as: 'Table', v: 'v1' },
      q: 1,
    });
    expect(parseMediaRange('*')).toMatchObject({ type: '*', subtype: '*' });
    expect(parseMediaRange('json')).toBeUndefined();
    expect(parseMediaRange('application/json;=x')).toBeUndefined();
    expect(parseMediaRange('application/json;q=abc')?.q).toBe(0);
    expect(parseAccept('application/json;q=0, application/yaml, bogus').map((m) => m.subtype)).toEqual([
      'yaml',
    ]);
    expect(parseAccept('')).toEqual([{ type: '*', subtype: '*', params: {}, q: 1 }]);
    expect(parseAccept(null)).toHaveLength(1);
  });
});

describe('negotiateTarget', () => {
  it("gives kubectl's Table first and the plain object as its fallback", () => {
    expect(negotiateTarget(TABLE, opts)).toEqual({ as: 'Table', version: 'v1', encoding: 'json' });
    expect(negotiateTarget('application/json;as=Table;v=v2;g=meta.k8s.io,application/json', opts)).toEqual({
      as: 'object',
      encoding: 'json',
    });
  });

  it('answers protobuf only for kinds that have a schema, YAML never for watches', () => {
    const pb = 'application/vnd.kubernetes.protobuf,application/json';
    expect(negotiateTarget(pb, opts)).toEqual({ as: 'object', encoding: 'protobuf' });
    expect(negotiateTarget(pb, { ...opts, protobuf: false })).toEqual({ as: 'object', encoding: 'json' });
    expect(
      negotiateTarget('application/vnd.kubernetes.protobuf', { ...opts, protobuf: false }),
    ).toBeUndefined();
    expect(negotiateTarget('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', opts)).toEqual({
      as: 'Table',
      version: 'v1',
      encoding: 'protobuf',
    });
    expect(negotiateTarget('application/yaml', opts)).toEqual({ as: 'object', encoding: 'yaml', yaml: true });
    expect(negotiateTarget('application/yaml', { ...opts, watch: true })).toBeUndefined();
    expect(negotiateTarget('application/yaml;as=Table;v=v1;g=meta.k8s.io', opts)).toBeUndefined();
    expect(negotiateTarget('*/*', opts)).toEqual({ as: 'object', encoding: 'json' });
    expect(negotiateTarget('text/html', opts)).toBeUndefined();
  });

  it('PartialObjectMetadataList only for collections, single objects in a watch', () => {
    const pomList = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';
    const pom = 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io';
    expect(negotiateTarget(pomList, opts)?.as).toBe('PartialObjectMetadataList');
    expect(negotiateTarget(pomList, { ...opts, list: false })).toBeUndefined();
    expect(negotiateTarget(pomList, { ...opts, watch: true })?.as).toBe('PartialObjectMetadata');
    expect(negotiateTarget(pom, { ...opts, list: false })?.as).toBe('PartialObjectMetadata');
    expect(negotiateTarget(pom, opts)).toBeUndefined();
  });
});
