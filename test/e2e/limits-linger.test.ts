/**
 * A body declared (Content-Length) larger than the limit, on Node and in workerd, over a raw socket: the
 * 413 Status must reach the client, and reach no cluster. In workerd the connection closes as soon as
 * the answer is out, so the fleet reads away what the client still sends before it answers
 * (src/middleware/limits/linger.ts); a refusal sent with request bytes unread lets the peer's reset
 * discard it. Here the client sends the head and 64 KiB, pauses, then the rest: in workerd the 413 must
 * come after the rest was written (before the fix it came during the pause); on Node (whose server
 * lingers after answering) it may come at once.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';

const MAX = 1024 * 1024;
const DECLARED = 3 * MAX;
const FIRST = 64 * 1024;

interface Sent {
  status: number;
  text: string;
  /** ms (performance.now) when the first answer byte arrived, and when the last body byte was handed on */
  answeredAt: number;
  restWrittenAt: number;
}

function oversized(url: string): Promise<Sent> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname);
    const parts: Buffer[] = [];
    let answeredAt = Number.NaN;
    let restWrittenAt = Number.NaN;
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer in 30 s; got: ${Buffer.concat(parts).toString('latin1').slice(0, 200)}`));
    }, 30_000);
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(parts).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text, answeredAt, restWrittenAt });
    };
    s.on('connect', () => {
      s.write(
        `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nContent-Type: application/octet-stream\r\nContent-Length: ${DECLARED}\r\nConnection: close\r\n\r\n`,
      );
      s.write(Buffer.alloc(FIRST, 0x61));
      // the pause: an answer that does not wait for the body arrives now
      setTimeout(() => {
        if (s.destroyed) return;
        s.write(Buffer.alloc(DECLARED - FIRST, 0x62), () => {
          restWrittenAt = performance.now();
        });
      }, 300);
    });
    s.on('data', (d: Buffer) => {
      if (!parts.length) answeredAt = performance.now();
      parts.push(d);
      const text = Buffer.concat(parts).toString('latin1');
      const len = /content-length: (\d+)/i.exec(text)?.[1];
      const at = text.indexOf('\r\n\r\n');
      if (len !== undefined && at >= 0 && Buffer.byteLength(text.slice(at + 4), 'latin1') >= Number(len)) {
        s.destroy();
        finish();
      }
    });
    s.on('close', finish);
    s.on('error', () => {});
  });
}

describe.each(RUNTIMES)('a declared body over the limit on %s', (runtime) => {
  let sims: ServedSimFleet;
  let fleet: RunningFleet;
  const sent = () => [sims.karmada, ...sims.members.values()].reduce((n, x) => n + x.requests.length, 0);

  beforeAll(async () => {
    sims = await startSimFleet();
    fleet = await startFleet(
      runtime,
      sims.staticConfig({
        authentication: { anonymous: { enabled: true } },
        limits: { maxBodyBytes: MAX },
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await fleet?.stop();
    await sims?.close();
  });

  it('is a 413 Status that reaches the client, after what it sent was read away (workerd), and no cluster', async () => {
    const before = sent();
    const r = await oversized(fleet.url);
    expect(r.status, r.text.slice(0, 300)).toBe(413);
    expect(r.text).toMatch(/"kind":"Status"/);
    expect(r.text).toMatch(/RequestEntityTooLarge/);
    if (runtime === 'workerd') {
      expect(Number.isFinite(r.restWrittenAt), 'the answer came before the rest of the body was sent').toBe(
        true,
      );
      expect(r.answeredAt, 'the 413 left only once the body was read away').toBeGreaterThanOrEqual(
        r.restWrittenAt,
      );
    }
    expect(sent()).toBe(before);
  }, 60_000);
});
