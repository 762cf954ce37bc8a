/**
 * The Node side of the fleet-exec route's EXEC_TRANSPORT (src/platform/types.ts): Node's fetch cannot open
 * a WebSocket, so this does, for `kubectl fleet exec`.
 * Opens an upstream exec WebSocket with `ws` (one header line per Impersonate-Group, the endpoint's CA,
 * client certificate and skip-verify), and answers like workerd's fetch does: a Response whose
 * `webSocket` is the accepted client socket, or the upstream's refusal as it came.
 */
import WebSocket from 'ws';
import type { ExecSocket } from '../../src/platform/types.ts';
import type { Transport } from '../../src/upstreams/transport.ts';

const HANDSHAKE = new Set([
  'upgrade',
  'connection',
  'sec-websocket-protocol',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'host',
  'content-length',
]);

/** The ws socket in the Workers shape; messages that arrive before a listener are kept for it. */
function adapt(ws: WebSocket): ExecSocket {
  const early: Array<{ data: string | ArrayBuffer }> = [];
  let onMessage: ((e: { data: string | ArrayBuffer }) => void) | undefined;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const e = {
      data: isBinary
        ? (data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer)
        : data.toString(),
    };
    if (onMessage) onMessage(e);
    else early.push(e);
  });
  return {
    accept() {},
    binaryType: 'arraybuffer',
    close: (code, reason) => ws.close(code, reason),
    addEventListener(type: string, f: (e: any) => void) {
      if (type === 'message') {
        onMessage = f;
        for (const e of early.splice(0)) f(e);
      } else if (type === 'close')
        ws.on('close', (code: number, reason: Buffer) => f({ code, reason: reason.toString() }));
      else ws.on('error', () => f(undefined));
    },
  } as ExecSocket;
}

export function nodeExecTransport(): Transport {
  return {
    send(ep, req) {
      const headers: Record<string, string | string[]> = {};
      req.headers.forEach((v, k) => {
        if (!HANDSHAKE.has(k)) headers[k] = v;
      });
      for (const [k, v] of req.headerLines ?? []) {
        const key = k.toLowerCase();
        const had = headers[key];
        headers[key] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
      }
      const protocols = (req.headers.get('sec-websocket-protocol') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      return new Promise<Response>((resolve, reject) => {
        const ws = new WebSocket(req.url.replace(/^http/, 'ws'), protocols, {
          headers,
          ...(ep.caPem ? { ca: ep.caPem } : {}),
          ...(ep.certPem ? { cert: ep.certPem, key: ep.keyPem } : {}),
          rejectUnauthorized: !ep.insecureSkipTLSVerify,
          handshakeTimeout: req.timeoutMs,
        });
        const onAbort = () => ws.terminate();
        req.signal?.addEventListener('abort', onAbort, { once: true });
        ws.once('open', () => {
          // Node's Response cannot carry 101; the route reads `webSocket`, not the status
          resolve(Object.assign(new Response(null, { status: 200 }), { webSocket: adapt(ws) }));
        });
        ws.once('unexpected-response', (_r, msg) => {
          const chunks: Buffer[] = [];
          msg.on('data', (d: Buffer) => chunks.push(d));
          msg.on('end', () => {
            ws.terminate();
            const h = new Headers();
            const type = msg.headers['content-type'];
            if (typeof type === 'string') h.set('Content-Type', type);
            resolve(new Response(Buffer.concat(chunks), { status: msg.statusCode ?? 502, headers: h }));
          });
        });
        ws.once('error', (e) => reject(e));
      });
    },
  };
}
