import { describe, expect, it } from 'vitest';
import { Upstreams } from './upstreams.ts';

describe('Upstreams', () => {
  it('aborts the signal of what is under way; a signal let go is made anew, aborted after the abort', () => {
    const u = new Upstreams();
    const first = u.signal;
    expect(u.signal).toBe(first);
    u.letGo();
    const second = u.signal;
    expect(second).not.toBe(first);
    let heard = 0;
    second.addEventListener('abort', () => heard++);
    u.abort();
    expect(u.aborted).toBe(true);
    expect(second.aborted).toBe(true);
    expect(heard).toBe(1);
    // the one let go had no listener left: it is not told
    expect(first.aborted).toBe(false);
    u.letGo();
    expect(u.signal.aborted).toBe(true);
  });

  it('makes no signal until one is asked for', () => {
    const u = new Upstreams();
    u.abort();
    expect(u.aborted).toBe(true);
    expect(u.signal.aborted).toBe(true);
  });
});
