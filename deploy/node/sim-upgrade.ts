/**
 * HTTP/1.1 upgrades for a simulated cluster served on Node (exec, attach, port-forward): the WebSocket
 * handshake and framing (`ws`) or a raw SPDY/3.1 connection, around the protocol sessions of
 * sim/exec.ts. Used by deploy/node/demo.ts for every simulated cluster it serves.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { SimUpgrade } from '../../sim/exec.ts';
import type { SimCluster } from '../../sim/index.ts';
import { requestFromIncoming, writeRawResponse } from './upgrade.ts';

const plans = new WeakMap<IncomingMessage, SimUpgrade>();

export function serveSimUpgrades(server: Server, sim: SimCluster): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  // the subprotocol is chosen by exec.ts, and written here: `ws` would refuse kubectl's
  // `SPDY/3.1+portforward.k8s.io` offer ('/' is not an RFC 6455 token character; gorilla and Go's
  // apiserver accept it), so the offer is taken off the request before `ws` sees it
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    const plan = plans.get(req);
    if (plan?.kind === 'websocket' && plan.protocol) headers.push(`Sec-WebSocket-Protocol: ${plan.protocol}`);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    if (sim.faults.down) {
      socket.destroy();
      return;
    }
    void serve(req, socket, head);
  });

  async function serve(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    let plan: SimUpgrade;
    try {
      plan = await sim.upgrade(requestFromIncoming(req, 'http'));
    } catch (e) {
      void writeRawResponse(socket, new Response(String((e as Error).message), { status: 500 }));
      return;
    }
    if (plan.kind === 'response') {
      void writeRawResponse(socket, plan.response);
      return;
    }
    if (plan.kind === 'websocket') {
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
        void writeRawResponse(socket, new Response('expected a WebSocket upgrade', { status: 400 }));
        return;
      }
      plans.set(req, plan);
      delete req.headers['sec-websocket-protocol'];
      const start = plan.start;
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = start({
          send: (d) => ws.send(d, { binary: true }),
          close: (code, reason) => ws.close(code, reason),
        });
        ws.on('message', (data: Buffer) => session.onMessage(new Uint8Array(data)));
        ws.on('close', () => session.onClose());
        ws.on('error', () => {});
      });
      return;
    }
    // raw SPDY/3.1
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${plan.protocol}\r\n\r\n`,
    );
    (socket as Duplex & { setNoDelay?(v: boolean): void }).setNoDelay?.(true);
    const session = plan.start({
      write: (d) => {
        if (!socket.destroyed) socket.write(d);
      },
      end: () => socket.end(),
    });
    if (head.length) session.onData(new Uint8Array(head));
    socket.on('data', (d: Buffer) => session.onData(new Uint8Array(d)));
    socket.on('close', () => session.onClose());
  }
}
