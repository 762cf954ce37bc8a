/**
 * A merged watch's answer on the wire (Node, HTTP/1.1): the lines of one tick leave as one chunk frame in
 * one socket write, however many buffers they lie in, and a lone event leaves in the turn it was
 * merged in, not with the next one. Read off a raw socket, so the frames are the client's to count.
 */
import { once } from 'node:events';
import { OutgoingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';
import { directPushBodies } from '../../src/platform/node-streams.ts';
import { usePushBodies } from '../../src/util/chunks.ts';
import { HIGH_WATER_BYTES, WatchOutput } from '../../src/watch/output.ts';
import { createTestCA } from '../helpers/tls.ts';

const enc = new TextEncoder();
/** a line of `n` bytes in an array of its own (as the merged watch's line buffers: no two back to back) */
const line = (tag: string, n: number) =>
  enc.encode(`{"t":"${tag}","pad":"${'x'.repeat(n - 17 - tag.length)}"}\n`);

let server: ServedHandle;
/** the same over TLS */
let tlsServer: ServedHandle;
let caCert: string;
/** the server's side of each connection, newest last */
const serverSockets: Socket[] = [];
let outputs: WatchOutput[] = [];
/** the output of the next watch request (the test's to write into) */
let next: ((o: WatchOutput) => void) | undefined;

beforeAll(async () => {
  usePushBodies(directPushBodies);
  const answer = () => {
    const out = new WatchOutput(
      { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => {} },
      () => {},
    );
    outputs.push(out);
    next?.(out);
    return new Response(out.takeBody(), { headers: { 'content-type': 'application/json' } });
  };
  server = await serveFetch(answer);
  const ca = createTestCA();
  caCert = ca.cert;
  tlsServer = await serveFetch(answer, { tls: ca.server() });
  server.server.on('connection', (s: Socket) => serverSockets.push(s));
});
afterEach(() => {
  for (const o of outputs) o.close();
  outputs = [];
});
afterAll(async () => {
  usePushBodies(undefined as never);
  await server.close(500);
  await tlsServer.close(500);
});

/** The chunk frames of an HTTP/1.1 answer read so far (its head skipped), and what was read in all. */
class Raw {
  bytes = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.bytes = Buffer.concat([this.bytes, d]);
      for (const w of this.waiters.splice(0)) w();
    });
  }
  /** the body's chunk frames complete so far: each frame's data */
  frames(): Buffer[] {
    const head = this.bytes.indexOf('\r\n\r\n');
    if (head < 0) return [];
    const out: Buffer[] = [];
    let at = head + 4;
    for (;;) {
      const eol = this.bytes.indexOf('\r\n', at);
      if (eol < 0) return out;
      const size = Number.parseInt(this.bytes.toString('latin1', at, eol), 16);
      if (eol + 2 + size + 2 > this.bytes.length) return out;
      out.push(this.bytes.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
  /** waits until `n` frames are complete (or fails after 20 s) */
  async frameCount(n: number): Promise<Buffer[]> {
    const until = Date.now() + 20_000;
    while (this.frames().length < n) {
      if (Date.now() > until) throw new Error(`${this.frames().length} of ${n} frames in 20 s`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
    return this.frames();
  }
}

/** a watch request on a raw socket; resolves once the head is in, with the output that answers it */
async function watch(tls = false): Promise<{ raw: Raw; out: WatchOutput; socket: Socket }> {
  const url = new URL((tls ? tlsServer : server).url);
  const got = new Promise<WatchOutput>((r) => {
    next = r;
  });
  const socket = tls
    ? connectTls({ port: Number(url.port), host: url.hostname, ca: caCert, servername: 'localhost' })
    : connect(Number(url.port), url.hostname);
  await once(socket, tls ? 'secureConnect' : 'connect');
  const raw = new Raw(socket);
  socket.write(`GET /api/v1/pods?watch=true HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`);
  const out = await got;
  next = undefined;
  while (raw.bytes.indexOf('\r\n\r\n') < 0) await new Promise((r) => setTimeout(r, 5));
  expect(raw.bytes.toString('latin1')).toMatch(/^HTTP\/1\.1 200 .*\r\ntransfer-encoding: chunked\r\n/is);
  return { raw, out, socket };
}

describe('merged watch answer frames (Node, HTTP/1.1)', () => {
  it('takes the framed path on this Node: node:http’s fields read as known, nothing of a tick through res.write', async () => {
    const { raw, out, socket } = await watch();
    const warn = vi.spyOn(console, 'warn');
    // the fallback (node:http's fields not as known) writes each tick through the response instead
    const writes = vi.spyOn(OutgoingMessage.prototype, 'write');
    try {
      const lines = [line('a', 300), line('b', 20_000)];
      out.emit({ kind: 'emit', lines });
      const frames = await raw.frameCount(1);
      expect(frames[0]!.equals(Buffer.concat(lines))).toBe(true);
      expect(writes).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      writes.mockRestore();
      warn.mockRestore();
    }
    socket.destroy();
  });

  it('lines of one tick, in separate buffers of every size, leave as one frame in order', async () => {
    const { raw, out, socket } = await watch();
    // two lines large enough that each went as a chunk of its own, and small ones between and after
    const lines = [line('a', 9000), line('b', 300), line('c', 12_000), line('d', 200)];
    out.emit({ kind: 'emit', lines: lines.slice(0, 2) });
    out.emit({ kind: 'emit', lines: lines.slice(2) });
    const frames = await raw.frameCount(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(raw.frames().length).toBe(1);
    expect(frames[0]!.equals(Buffer.concat(lines))).toBe(true);
    // small lines of one tick: one frame too, copied together
    const small = [line('e', 100), line('f', 120), line('g', 90)];
    for (const l of small) out.emit({ kind: 'emit', lines: [l] });
    const after = await raw.frameCount(2);
    expect(after.length).toBe(2);
    expect(after[1]!.equals(Buffer.concat(small))).toBe(true);
    socket.destroy();
  });

  it('over TLS too: a tick of lines in separate buffers is one frame, in order', async () => {
    const { raw, out, socket } = await watch(true);
    const lines = [line('a', 9000), line('b', 300), line('c', 12_000)];
    out.emit({ kind: 'emit', lines });
    const frames = await raw.frameCount(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(raw.frames().length).toBe(1);
    expect(frames[0]!.equals(Buffer.concat(lines))).toBe(true);
    socket.destroy();
  });

  it('a lone event is on the socket within the turn it was merged in, not after a later one', async () => {
    const { raw, out, socket } = await watch();
    const server = serverSockets.at(-1)!;
    const l = line('lone', 400);
    const before = server.bytesWritten;
    out.emit({ kind: 'emit', lines: [l] });
    // the turn's microtasks and ticks only: no timer, no later event, no next check phase
    for (let k = 0; k < 3; k++) {
      await Promise.resolve();
      await new Promise((r) => process.nextTick(r));
    }
    // bytesWritten counts what the socket holds to write as well: the whole frame was handed to it
    const frame = `${l.length.toString(16)}\r\n`.length + l.length + 2;
    expect(server.bytesWritten - before).toBe(frame);
    const frames = await raw.frameCount(1);
    expect(frames[0]!.equals(Buffer.from(l))).toBe(true);
    socket.destroy();
  });

  it('the end writes the last chunk after every frame: the client reads a complete answer', async () => {
    const { raw, out, socket } = await watch();
    const lines = [line('x', 500), line('y', 20_000)];
    out.emit({ kind: 'emit', lines });
    out.close();
    const until = Date.now() + 20_000;
    while (!raw.bytes.subarray(-5).equals(Buffer.from('0\r\n\r\n')) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(raw.frames()).equals(Buffer.concat(lines))).toBe(true);
    expect(raw.bytes.subarray(-5).toString('latin1')).toBe('0\r\n\r\n');
    socket.destroy();
  });

  it('a client that stops reading pauses the watch; reading again resumes it', async () => {
    const { raw, out, socket } = await watch();
    socket.pause();
    let paused = 0;
    let resumed = 0;
    out.own({ cancel: () => {}, pause: () => paused++, resume: () => resumed++ });
    const big = line('z', 64 * 1024);
    // until the kernel's buffers are full and the mark is passed, while the client takes nothing
    for (let i = 0; i < (32 * HIGH_WATER_BYTES) / big.length && !paused; i++) {
      out.emit({ kind: 'emit', lines: [big] });
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(paused).toBe(1);
    expect(out.closed).toBe(false);
    socket.resume();
    const until = Date.now() + 20_000;
    while (!resumed && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(resumed).toBe(1);
    expect(raw.frames().every((f) => f.equals(Buffer.from(big)))).toBe(true);
    socket.destroy();
  });
});
