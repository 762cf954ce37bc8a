import { describe, expect, it } from 'vitest';
import { load, YAMLException } from './yaml-json.ts';

describe('the worker’s stand-in for js-yaml (JSON only)', () => {
  it('reads JSON, YAML’s subset kubectl and Helm send', () => {
    expect(load('{"a":[1,"x",null,true]}')).toEqual({ a: [1, 'x', null, true] });
  });
  it('refuses YAML as js-yaml refuses a bad document, saying why', () => {
    let err: unknown;
    try {
      load('a: b\n');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(YAMLException);
    expect((err as YAMLException).reason).toContain(
      '(the worker reads JSON only: YAML needs the Node server)',
    );
    expect((err as YAMLException).mark).toBeUndefined();
  });
});
