import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_MS, Heartbeat, SLOTS, shareHeartbeatTicks } from './heartbeat.ts';

const TICK_MS = HEARTBEAT_MS / 5;

describe('heartbeats on a shared interval', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    shareHeartbeatTicks();
  });
  afterEach(() => vi.useRealTimers());

  function many(n: number) {
    const beats: number[] = new Array(n).fill(0);
    const ticks: number[] = new Array(n).fill(0);
    /** per timer task: how many heartbeats ticked in it */
    const perTask: number[] = [];
    let inTask = 0;
    const hs = Array.from(
      { length: n },
      (_, i) =>
        new Heartbeat(
          () => beats[i]!++,
          undefined,
          () => {
            ticks[i]!++;
            inTask++;
          },
        ),
    );
    const step = (ms: number) => {
      for (let t = 0; t < ms; t += TICK_MS / SLOTS) {
        vi.advanceTimersByTime(TICK_MS / SLOTS);
        perTask.push(inTask);
        inTask = 0;
      }
    };
    return { hs, beats, ticks, perTask, step };
  }

  it('ticks every heartbeat once a period and beats one idle for HEARTBEAT_MS', () => {
    const { hs, beats, ticks, step } = many(7);
    step(HEARTBEAT_MS);
    expect(ticks).toEqual(new Array(7).fill(5));
    expect(beats).toEqual(new Array(7).fill(1));
    for (const h of hs) h.stop();
  });

  it('spreads a thousand heartbeats over the period: no task ticks more than its share', () => {
    const n = 1000;
    const { hs, beats, perTask, step } = many(n);
    step(2 * HEARTBEAT_MS);
    expect(beats.every((b) => b === 2)).toBe(true);
    expect(Math.max(...perTask)).toBeLessThanOrEqual(Math.ceil(n / SLOTS));
    expect(perTask.reduce((a, b) => a + b, 0)).toBe(n * 10);
    for (const h of hs) h.stop();
  });

  it('a touched heartbeat does not beat; a stopped one never ticks again', () => {
    const { hs, beats, ticks, step } = many(2);
    for (let i = 0; i < 10; i++) {
      hs[0]!.touch();
      step(HEARTBEAT_MS / 2);
    }
    expect(beats[0]).toBe(0);
    expect(beats[1]).toBe(5);
    hs[1]!.stop();
    const before = ticks[1];
    step(HEARTBEAT_MS);
    expect(ticks[1]).toBe(before);
    hs[0]!.stop();
    // the last one stopped: the shared interval is gone
    expect(vi.getTimerCount()).toBe(0);
  });
});
