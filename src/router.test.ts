import { describe, expect, it } from 'vitest';
import { ExactRouter } from './router.ts';

describe('ExactRouter', () => {
  it('matches exact paths (a trailing slash is another path) and /* everything, the first added first', () => {
    const r = new ExactRouter<string>();
    r.add('GET', '/fleet', 'redirect');
    r.add('GET', '/fleet/', 'page');
    r.add('ALL', '/*', 'rest');
    r.add('GET', '/never', 'shadowed');
    expect(r.first('GET', '/fleet')).toBe('redirect');
    expect(r.first('GET', '/fleet/')).toBe('page');
    expect(r.first('GET', '/fleet//')).toBe('rest');
    expect(r.first('GET', '/fleet/x')).toBe('rest');
    expect(r.first('GET', '/')).toBe('rest');
    expect(r.first('POST', '/fleet')).toBe('rest');
    expect(r.first('GET', '/never')).toBe('rest');
  });

  it('has no route for a method or path nothing was added for', () => {
    const r = new ExactRouter<string>();
    r.add('GET', '/healthz', 'live');
    expect(r.first('POST', '/healthz')).toBeUndefined();
    expect(r.first('GET', '/healthz/')).toBeUndefined();
    expect(r.first('GET', '/')).toBeUndefined();
  });

  it('refuses, when added, a pattern it cannot match exactly', () => {
    const r = new ExactRouter<string>();
    for (const p of ['/x/:name', '/x/*', '/x?', '/a/{b}'])
      expect(() => r.add('GET', p, 'x')).toThrow(/only exact paths and \/\* are routed/);
  });
});
