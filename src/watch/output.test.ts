import { afterEach, describe, expect, it } from 'vitest';
import { directPushBodies } from '../platform/node-streams.ts';
import { usePushBodies } from '../util/chunks.ts';
import { onBodyEnd } from '../util/ends.ts';
import { HIGH_WATER_BYTES, WatchOutput } from './output.ts';

const tick = () => new Promise((r) => setTimeout(r, 0));

/** a reading that records what the output asked of it */
function reading() {
  const r = { paused: false, cancelled: false, pauses: 0, resumes: 0 };
  return Object.assign(r, {
    cancel: () => {
      r.cancelled = true;
    },
    pause: () => {
      r.paused = true;
      r.pauses++;
    },
    resume: () => {
      r.paused = false;
      r.resumes++;
    },
  });
}

function output() {
  return new WatchOutput(
    { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => {} },
    () => {},
  );
}

/** a burst larger than the high-water mark, in one tick */
function burst(out: WatchOutput, bytes: number): void {
  const line = `${'x'.repeat(1023)}\n`;
  out.emit({ kind: 'emit', lines: Array.from({ length: Math.ceil(bytes / 1024) }, () => line) });
}

describe('WatchOutput backpressure', () => {
  afterEach(() => usePushBodies(undefined as never));

  it('Web body: pauses every reading past the mark, resumes them once the client drains', async () => {
    const out = output();
    const a = reading();
    const b = reading();
    out.own(a);
    out.own(b);
    burst(out, 2 * HIGH_WATER_BYTES);
    await tick();
    expect(a.paused && b.paused).toBe(true);
    expect(out.closed).toBe(false);
    // a reading that starts while paused starts paused
    const c = reading();
    out.own(c);
    expect(c.paused).toBe(true);
    const r = out.body.getReader();
    let got = 0;
    while (got < 2 * HIGH_WATER_BYTES) got += (await r.read()).value!.byteLength;
    const next = r.read();
    await tick();
    expect([a.paused, b.paused, c.paused]).toEqual([false, false, false]);
    expect(a.resumes).toBe(1);
    out.close();
    await next;
  });

  it('Node response: pauses past the mark, resumes on the response drain, no early end', async () => {
    usePushBodies(directPushBodies);
    const { attachDirect } = await import('../platform/node-streams.ts');
    const out = output();
    const a = reading();
    out.own(a);
    let queued = 0;
    let drain: (() => void) | undefined;
    let ended = false;
    const res = {
      write: (c: Uint8Array) => {
        queued += c.byteLength;
        return false;
      },
      get writableLength() {
        return queued;
      },
      end: () => {
        ended = true;
      },
      once: (_e: 'drain', l: () => void) => {
        drain = l;
      },
    };
    expect(attachDirect(out.body, res)).toBeDefined();
    // far more than the old 16 MiB cap, written while the client takes nothing
    for (let i = 0; i < 24; i++) {
      burst(out, HIGH_WATER_BYTES);
      await tick();
    }
    expect(a.paused).toBe(true);
    expect(a.pauses).toBe(1);
    expect(out.closed).toBe(false);
    expect(ended).toBe(false);
    queued = 0;
    drain?.();
    expect(a.paused).toBe(false);
    out.close();
    expect(ended).toBe(true);
  });
});

describe('WatchOutput closed while its Web body is being made', () => {
  // workerd has no push body: the stream's start runs the sources inside `new ReadableStream`, and a
  // source that fails at once (every cluster gone, a 410) closes the output before the constructor has
  // kept the stream; that close once threw "Cannot set properties of undefined (setting 'over')" out of
  // the stream's start, uncaught in workerd
  it('closes without a throw, and the body says at once that it ended', async () => {
    let closes = 0;
    const out = new WatchOutput(
      { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => closes++ },
      (o) => o.close(),
    );
    expect(out.closed).toBe(true);
    expect(closes).toBe(1);
    // a body that ended says so to whoever asks later (the request metrics), instead of never calling back
    expect(onBodyEnd(out.body, () => {})).toBe(false);
    expect(await out.body.getReader().read()).toEqual({ done: true, value: undefined });
  });
});
