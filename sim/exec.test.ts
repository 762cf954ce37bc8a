import { constants, createDeflate, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import type { SimUpgrade } from './exec.ts';
import {
  adler32,
  controlFrame,
  dataFrame,
  encodeHeaderBlock,
  FLAG_FIN,
  FrameReader,
  parseHeaderBlock,
  SPDY_DICTIONARY,
  TYPE_SYN_REPLY,
  TYPE_SYN_STREAM,
  u32,
} from './spdy.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const te = new TextEncoder();
const td = new TextDecoder();

function runningPod(sim: SimCluster) {
  return sim.list(PODS).find((p: any) => p.status?.phase === 'Running' && p.metadata.namespace === 'shop')!;
}

function upgrade(sim: SimCluster, path: string, headers: Record<string, string>): Promise<SimUpgrade> {
  return sim.upgrade(new Request(`http://sim${path}`, { headers }));
}

/** Drives a WebSocket session and collects what the server sends. */
function wsSession(plan: SimUpgrade) {
  if (plan.kind !== 'websocket') throw new Error(`expected a websocket plan, got ${plan.kind}`);
  const sent: Uint8Array[] = [];
  let closed: number | undefined;
  let onClose: () => void = () => {};
  const done = new Promise<void>((r) => {
    onClose = r;
  });
  const session = plan.start({
    send: (d) => sent.push(d),
    close: (code) => {
      closed = code;
      onClose();
    },
  });
  return { session, sent, done, closed: () => closed };
}

describe('simulated exec over WebSocket channels', () => {
  const sim = new SimCluster({ name: 'member9' });
  const pod = runningPod(sim);
  const base = `/api/v1/namespaces/shop/pods/${pod.metadata.name}`;
  const ws = { Upgrade: 'websocket', 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io, v4.channel.k8s.io' };

  it('echo: stdout frame, Success on the error stream, normal close', async () => {
    const plan = await upgrade(sim, `${base}/exec?command=echo&command=hi&stdout=true&stderr=true`, ws);
    expect(plan).toMatchObject({ kind: 'websocket', protocol: 'v5.channel.k8s.io' });
    const s = wsSession(plan);
    await s.done;
    expect(s.sent.map((m) => [m[0], td.decode(m.subarray(1))])).toEqual([
      [1, 'hi\n'],
      [3, '{"metadata":{},"status":"Success"}'],
    ]);
    expect(s.closed()).toBe(1000);
  });

  it('cat echoes stdin until the v5 close signal; exit codes are NonZeroExitCode Statuses', async () => {
    const s = wsSession(await upgrade(sim, `${base}/exec?command=cat&stdin=true&stdout=true`, ws));
    s.session.onMessage(new Uint8Array([0, ...te.encode('abc')]));
    s.session.onMessage(new Uint8Array([255, 0]));
    await s.done;
    expect(td.decode(s.sent[0]!.subarray(1))).toBe('abc');
    const e = wsSession(
      await upgrade(sim, `${base}/exec?command=sh&command=-c&command=exit%202&stdout=true`, ws),
    );
    await e.done;
    const status = JSON.parse(td.decode(e.sent.at(-1)!.subarray(1)));
    expect(status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '2' }] },
    });
  });

  it('refuses what a kubelet refuses, as Statuses', async () => {
    const nf = await upgrade(sim, '/api/v1/namespaces/shop/pods/nosuch/exec?command=ls&stdout=1', ws);
    expect(nf.kind === 'response' && nf.response.status).toBe(404);
    const proto = await upgrade(sim, `${base}/exec?command=ls&stdout=1`, {
      Upgrade: 'websocket',
      'Sec-WebSocket-Protocol': 'v9',
    });
    expect(proto.kind === 'response' && proto.response.status).toBe(400);
    const cmd = await upgrade(sim, `${base}/exec?stdout=1`, ws);
    expect(cmd.kind === 'response' && (await cmd.response.json())).toMatchObject({
      message: 'you must specify at least 1 command',
    });
  });
});

// ---------------------------------------------------------------------------------------------- SPDY

/** The client side of SPDY header compression, as Go's zlib with the SPDY/3 dictionary does it. */
function clientCompressor() {
  const def = createDeflate({ dictionary: Buffer.from(SPDY_DICTIONARY), level: 9 });
  const out: Buffer[] = [];
  def.on('data', (c: Buffer) => out.push(c));
  return async (block: Uint8Array): Promise<Uint8Array> => {
    def.write(block);
    await new Promise<void>((r) => def.flush(constants.Z_SYNC_FLUSH, () => r()));
    return new Uint8Array(Buffer.concat(out.splice(0)));
  };
}

async function synStream(
  compress: (b: Uint8Array) => Promise<Uint8Array>,
  id: number,
  headers: Array<[string, string]>,
) {
  const block = await compress(encodeHeaderBlock(headers));
  const payload = new Uint8Array(10 + block.length);
  payload.set([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff], 0);
  payload.set(block, 10);
  return controlFrame(TYPE_SYN_STREAM, 0, payload);
}

describe('simulated port-forward over SPDY/3.1', () => {
  it('the dictionary is SPDY/3’s (Adler-32 0xe3c6a7c2, as moby/spdystream)', () => {
    expect(SPDY_DICTIONARY.length).toBe(1423);
    expect(adler32(SPDY_DICTIONARY).toString(16)).toBe('e3c6a7c2');
  });

  it('replies to each stream, echoes data on the data stream, and half-closes both streams after the client', async () => {
    const sim = new SimCluster({ name: 'member8' });
    const pod = runningPod(sim);
    const plan = await upgrade(sim, `/api/v1/namespaces/shop/pods/${pod.metadata.name}/portforward`, {
      Upgrade: 'SPDY/3.1',
      'X-Stream-Protocol-Version': 'portforward.k8s.io',
    });
    expect(plan).toMatchObject({ kind: 'spdy', protocol: 'portforward.k8s.io' });
    if (plan.kind !== 'spdy') return;
    const written: Uint8Array[] = [];
    const reader = new FrameReader();
    const frames: ReturnType<FrameReader['push']> = [];
    let wake: () => void = () => {};
    const session = plan.start({
      write: (d) => {
        written.push(d);
        frames.push(...reader.push(d));
        wake();
      },
      end: () => {},
    });
    const until = async (n: number) => {
      while (frames.length < n) await new Promise<void>((r) => (wake = r));
    };
    const compress = clientCompressor();
    const hdr = (type: string): Array<[string, string]> => [
      ['streamtype', type],
      ['port', '80'],
      ['requestid', '0'],
    ];
    session.onData(await synStream(compress, 1, hdr('error')));
    session.onData(await synStream(compress, 3, hdr('data')));
    session.onData(dataFrame(3, 0, te.encode('hello spdy')));
    session.onData(dataFrame(3, FLAG_FIN, new Uint8Array(0)));
    await until(5);
    const kinds = frames.map((f) =>
      f.control ? `ctl${f.type}:${u32(f.data, 0)}` : `data${f.streamId}${f.flags & FLAG_FIN ? 'fin' : ''}`,
    );
    expect(kinds).toEqual([
      `ctl${TYPE_SYN_REPLY}:1`,
      `ctl${TYPE_SYN_REPLY}:3`,
      'data3',
      'data3fin',
      'data1fin',
    ]);
    expect(td.decode(frames[2]!.data)).toBe('hello spdy');
    // our header blocks are a valid zlib stream (stored blocks, sync-flushed) any reader can inflate
    const blocks = Buffer.concat(frames.slice(0, 2).map((f) => Buffer.from(f.data.subarray(4))));
    const inflated = inflateSync(blocks, { finishFlush: constants.Z_SYNC_FLUSH });
    expect(parseHeaderBlock(new Uint8Array(inflated))?.headers.size).toBe(0);
    session.onClose();
    sim.close();
  });
});

describe('the container shell through exec', () => {
  const sim = new SimCluster({ name: 'member8' });
  const pod = runningPod(sim);
  const base = `/api/v1/namespaces/shop/pods/${pod.metadata.name}`;
  const ws = { Upgrade: 'websocket', 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' };
  const exec = async (argv: string[], stdin?: Uint8Array) => {
    const q = argv.map((a) => `command=${encodeURIComponent(a)}`).join('&');
    const s = wsSession(
      await upgrade(sim, `${base}/exec?${q}&stdout=true&stderr=true${stdin ? '&stdin=true' : ''}`, ws),
    );
    if (stdin) {
      s.session.onMessage(new Uint8Array([0, ...stdin]));
      s.session.onMessage(new Uint8Array([255, 0]));
    }
    await s.done;
    const on = (ch: number) => s.sent.filter((m) => m[0] === ch).map((m) => m.subarray(1));
    const text = (ch: number) =>
      on(ch)
        .map((b) => td.decode(b))
        .join('');
    return { stdout: text(1), stderr: text(2), status: JSON.parse(text(3)), raw: on(1) };
  };

  it('sh -c "sleep 1; exit 3" ends with exit code 3 after the sleep', async () => {
    const t0 = Date.now();
    const r = await exec(['sh', '-c', 'sleep 1; exit 3']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(r.status).toMatchObject({
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });

  it('a command missing inside sh is 127 with the shell’s message; a missing program is the runtime’s error', async () => {
    const r = await exec(['sh', '-c', 'nosuch; echo after $?']);
    expect(r.stderr).toBe('sh: nosuch: not found\n');
    expect(r.stdout).toBe('after 127\n');
    const direct = await exec(['sh', '-c', 'nosuch']);
    expect(direct.status.details.causes[0].message).toBe('127');
    const top = await exec(['nosuch']);
    expect(top.status.message).toContain('exec: "nosuch": executable file not found in $PATH');
  });

  it('keeps one filesystem per container across sessions (what kubectl cp needs)', async () => {
    await exec(['sh', '-c', 'mkdir -p /srv/d && echo kept > /srv/d/f']);
    const tarred = await exec(['tar', 'cf', '-', '/srv/d']);
    expect(tarred.stderr).toBe("tar: Removing leading `/' from member names\n");
    const archive = new Uint8Array(tarred.raw.reduce((n, b) => n + b.length, 0));
    let o = 0;
    for (const b of tarred.raw) {
      archive.set(b, o);
      o += b.length;
    }
    expect((await exec(['test', '-d', '/tmp'])).status.status).toBe('Success');
    const x = await exec(['tar', '-xmf', '-', '-C', '/tmp'], archive);
    expect(x.status.status).toBe('Success');
    expect((await exec(['cat', '/tmp/srv/d/f'])).stdout).toBe('kept\n');
  });
});

describe('port-forward over WebSocket channels (the kubelet’s v4.channel.k8s.io)', () => {
  const sim = new SimCluster({ name: 'member7' });
  const pod = sim
    .list(PODS)
    .find(
      (p: any) =>
        p.status?.phase === 'Running' && p.spec.containers.some((c: any) => c.ports?.[0]?.name === 'http'),
    )!;
  const port = (pod as any).spec.containers.find((c: any) => c.ports)!.ports[0].containerPort as number;
  const base = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/portforward`;

  it('sends the port on each channel first, then serves HTTP on a declared HTTP port', async () => {
    const plan = await upgrade(sim, `${base}?ports=${port}`, {
      Upgrade: 'websocket',
      'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
    });
    expect(plan).toMatchObject({ kind: 'websocket', protocol: 'v4.channel.k8s.io' });
    const s = wsSession(plan);
    expect(s.sent.slice(0, 2).map((m) => [...m])).toEqual([
      [0, port & 0xff, port >> 8],
      [1, port & 0xff, port >> 8],
    ]);
    s.session.onMessage(new Uint8Array([0, ...te.encode('GET / HTTP/1.1\r\nHost: x\r\n\r\n')]));
    const reply = s.sent
      .slice(2)
      .map((m) => td.decode(m.subarray(1)))
      .join('');
    expect(reply).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(reply).toContain(`Hello from ${pod.metadata.name}`);
    s.session.onMessage(new Uint8Array([0, ...te.encode('GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n')]));
    await s.done;
    expect(td.decode(s.sent.at(-1)!.subarray(1))).toMatch(/^HTTP\/1\.1 404 Not Found/);
    expect(s.closed()).toBe(1000);
  });

  it('pairs channels per port and echoes raw bytes; refuses a missing or bad port like the kubelet', async () => {
    const s = wsSession(await upgrade(sim, `${base}?ports=9000,${port}`, { Upgrade: 'websocket' }));
    expect(s.sent.map((m) => m[0])).toEqual([0, 1, 2, 3]);
    s.session.onMessage(new Uint8Array([0, 1, 2, 3]));
    expect([...s.sent.at(-1)!]).toEqual([0, 1, 2, 3]);
    s.session.onMessage(new Uint8Array([2, 0xff, 0]));
    expect([...s.sent.at(-1)!]).toEqual([2, 0xff, 0]);
    const none = await upgrade(sim, base, { Upgrade: 'websocket' });
    expect(none.kind).toBe('response');
    if (none.kind === 'response')
      expect((await none.response.json()).message).toBe('query parameter "port" is required');
    const bad = await upgrade(sim, `${base}?ports=0`, { Upgrade: 'websocket' });
    if (bad.kind === 'response') expect((await bad.response.json()).message).toBe('port "0" must be > 0');
  });
});
