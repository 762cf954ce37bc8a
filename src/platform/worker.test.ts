import { afterEach, describe, expect, it, vi } from 'vitest';
import type { UpgradeOpen } from './types.ts';
import { workerUpgradeRelay } from './worker.ts';

/** A stand-in for one end of a Workers WebSocket: records what it is sent and lets a test fire events. */
class FakeSocket {
  accepted = false;
  binaryType = 'blob';
  sent: unknown[] = [];
  closed: Array<[number, string]> = [];
  private listeners: Record<string, Array<(e: any) => void>> = {};
  accept() {
    this.accepted = true;
  }
  send(d: unknown) {
    this.sent.push(d);
  }
  close(code: number, reason: string) {
    this.closed.push([code, reason]);
  }
  addEventListener(type: string, f: (e: any) => void) {
    this.listeners[type] = [...(this.listeners[type] ?? []), f];
  }
  fire(type: string, e: unknown = {}) {
    for (const f of this.listeners[type] ?? []) f(e);
  }
}

class FakePair {
  0 = new FakeSocket();
  1 = new FakeSocket();
  static last: FakePair | undefined;
  constructor() {
    FakePair.last = this;
  }
}

/** Node's Response refuses status 101, which workerd allows with a `webSocket`: keep the init to check it. */
class WorkerdResponse extends Response {
  readonly init: (ResponseInit & { webSocket?: unknown }) | undefined;
  constructor(body?: BodyInit | null, init?: ResponseInit & { webSocket?: unknown }) {
    super(body, init?.status === 101 ? { ...init, status: 200 } : init);
    this.init = init;
  }
}

const upgrade = (h: Record<string, string>) => new Request('http://fleet/exec', { headers: h });

describe('worker upgrade relay', () => {
  const relay = workerUpgradeRelay(FakePair as never);

  it('refuses what it cannot relay before anything is sent: SPDY, and a SPDY attempt whose Upgrade was dropped', () => {
    expect(relay.refusal(upgrade({ upgrade: 'websocket' }))).toBeUndefined();
    expect(relay.refusal(upgrade({ upgrade: 'SPDY/3.1' }))).toMatch(
      /relays exec, attach and port-forward over WebSocket only .* the SPDY\/3\.1 upgrade needs the Node server$/,
    );
    expect(relay.refusal(upgrade({ 'x-stream-protocol-version': 'v4.channel.k8s.io' }))).toMatch(
      /the SPDY\/3\.1 upgrade needs the Node server/,
    );
    // a runtime without WebSocketPair relays nothing
    expect(workerUpgradeRelay(undefined).refusal(upgrade({ upgrade: 'websocket' }))).toBeDefined();
  });

  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('opens the upstream WebSocket without the client’s handshake headers and joins both ends', async () => {
    vi.stubGlobal('Response', WorkerdResponse);
    const upstream = new FakeSocket();
    let opened: UpgradeOpen | undefined;
    const r = await relay.relay(
      upgrade({
        upgrade: 'websocket',
        'sec-websocket-key': 'k',
        'sec-websocket-version': '13',
        'sec-websocket-extensions': 'permessage-deflate',
        'sec-websocket-protocol': 'v5.channel.k8s.io, v4.channel.k8s.io',
      }),
      async (o) => {
        opened = o;
        const res = new Response(null, { headers: { 'sec-websocket-protocol': 'v5.channel.k8s.io' } });
        return Object.assign(res, { webSocket: upstream });
      },
    );
    expect(opened?.method).toBe('GET');
    expect([...opened!.headers.keys()].filter((k) => k.startsWith('sec-websocket'))).toEqual([
      'sec-websocket-protocol',
    ]);
    expect('joined' in r).toBe(true);
    const joined = (r as { joined: WorkerdResponse }).joined;
    expect(joined.headers.get('sec-websocket-protocol')).toBe('v5.channel.k8s.io');
    // the client gets its end of the pair with a 101
    expect(joined.init?.status).toBe(101);
    expect(joined.init?.webSocket).toBe(FakePair.last![0]);
    const server = FakePair.last![1];
    expect([server.accepted, upstream.accepted, server.binaryType, upstream.binaryType]).toEqual([
      true,
      true,
      'arraybuffer',
      'arraybuffer',
    ]);
    server.fire('message', { data: 'in' });
    upstream.fire('message', { data: 'out' });
    expect([upstream.sent, server.sent]).toEqual([['in'], ['out']]);
    // a close code a peer may not send (1006) becomes 1011 on the other side
    upstream.fire('close', { code: 1006, reason: '' });
    expect(server.closed).toEqual([[1011, '']]);
  });

  it('hands an answer that is not an upgrade back to the route', async () => {
    const res = new Response('{"kind":"Status"}', { status: 403 });
    const r = await relay.relay(upgrade({ upgrade: 'websocket' }), async () => res);
    expect(r).toEqual({ answer: res });
  });
});
