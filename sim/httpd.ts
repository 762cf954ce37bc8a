/**
 * What answers on a simulated container's port when it is port-forwarded to.
 *
 * - An HTTP port (80 / 8000 / 8080 / 3000 / 5000, declared or not, as the kubelet dials any port; or one a
 *   container declares with an `http*` name) is a tiny
 *   HTTP/1.1 server, the way an nginx-like image answers: `GET /` (and `HEAD /`) 200 with a small HTML page
 *   naming the pod, `/healthz` 200 `ok`, other paths 404, other methods 405; keep-alive unless the client
 *   says `Connection: close` (or speaks HTTP/1.0); a malformed request gets a 400 and the connection closed.
 * - Bytes that do not start like an HTTP request, and every other port, are echoed back: a loopback that
 *   lets raw-byte tests check the tunnel itself.
 */

const te = new TextEncoder();
const td = new TextDecoder('latin1');

export interface PortConn {
  data(d: Uint8Array): void;
  /** the client half-closed */
  fin(): void;
}

export interface PortTarget {
  podName: string;
  containers: Array<{ ports?: Array<{ containerPort?: number; name?: string }> }>;
}

const HTTP_PORTS = new Set([80, 3000, 5000, 8000, 8080]);

/**
 * Does an HTTP server listen on `port`? The kubelet's port-forward dials the port in the pod's network
 * namespace whether a container declares it or not (declaring is informational), so an nginx pod that
 * declares nothing still answers HTTP on 80: the usual HTTP ports serve HTTP declared or not, and any
 * port a container declares with an `http*` name does too.
 */
export function servesHttp(t: PortTarget, port: number): boolean {
  if (HTTP_PORTS.has(port)) return true;
  for (const c of t.containers)
    for (const p of c.ports ?? []) if (p.containerPort === port && /^http/.test(p.name ?? '')) return true;
  return false;
}

const METHOD_START = /^[A-Z]{1,10} /;

/** One accepted connection to the container's port. `write` sends bytes back, `end` half-closes. */
export function openPort(
  t: PortTarget,
  port: number,
  write: (d: Uint8Array) => void,
  end: () => void,
): PortConn {
  if (!servesHttp(t, port)) return { data: write, fin: end };
  let mode: 'sniff' | 'http' | 'echo' = 'sniff';
  let buf = '';
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    end();
  };
  const serve = () => {
    while (!closed) {
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) {
        if (buf.length > 16 * 1024) {
          write(
            te.encode(
              response(431, 'Request Header Fields Too Large', 'text/plain', 'header too large\n', false),
            ),
          );
          close();
        }
        return;
      }
      const lines = buf.slice(0, head).split('\r\n');
      const m = /^([A-Z]+) (\S+) HTTP\/(1\.[01])$/.exec(lines[0] ?? '');
      if (!m) {
        write(te.encode(response(400, 'Bad Request', 'text/plain', 'bad request\n', false)));
        close();
        return;
      }
      const headers = new Map<string, string>();
      for (const l of lines.slice(1)) {
        const c = l.indexOf(':');
        if (c > 0) headers.set(l.slice(0, c).trim().toLowerCase(), l.slice(c + 1).trim());
      }
      const length = Number(headers.get('content-length') ?? '0');
      if (!Number.isFinite(length) || length < 0) {
        write(te.encode(response(400, 'Bad Request', 'text/plain', 'bad content-length\n', false)));
        close();
        return;
      }
      if (buf.length < head + 4 + length) return; // body still coming
      buf = buf.slice(head + 4 + length);
      const [, method, target, version] = m;
      const keepAlive =
        version === '1.1'
          ? headers.get('connection')?.toLowerCase() !== 'close'
          : /keep-alive/i.test(headers.get('connection') ?? '');
      write(te.encode(answer(t, method!, target!, keepAlive)));
      if (!keepAlive) close();
    }
  };
  // until the first bytes tell HTTP from anything else, they are kept as they came
  let pending: Uint8Array[] = [];
  return {
    data(d) {
      if (closed) return;
      if (mode === 'echo') return write(d);
      if (mode === 'sniff') {
        pending.push(d);
        const start = td.decode(concat(pending).subarray(0, 11));
        // a method name so far, too short to see its space yet: wait
        if (/^[A-Z]{0,10}$/.test(start) && start.length < 11) return;
        const raw = concat(pending);
        pending = [];
        if (!METHOD_START.test(start)) {
          mode = 'echo';
          write(raw);
          return;
        }
        mode = 'http';
        buf = td.decode(raw);
      } else buf += td.decode(d);
      serve();
    },
    fin() {
      if (mode === 'sniff' && pending.length) write(concat(pending));
      close();
    },
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

function answer(t: PortTarget, method: string, target: string, keepAlive: boolean): string {
  const path = target.split('?')[0];
  if (method !== 'GET' && method !== 'HEAD')
    return response(
      405,
      'Method Not Allowed',
      'text/plain',
      'method not allowed\n',
      keepAlive,
      method === 'HEAD',
    );
  if (path === '/' || path === '/index.html') {
    const page = `<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>Hello from ${escapeHtml(t.podName)}</h1></body></html>\n`;
    return response(200, 'OK', 'text/html', page, keepAlive, method === 'HEAD');
  }
  if (path === '/healthz') return response(200, 'OK', 'text/plain', 'ok\n', keepAlive, method === 'HEAD');
  return response(404, 'Not Found', 'text/plain', '404 page not found\n', keepAlive, method === 'HEAD');
}

function response(
  code: number,
  text: string,
  type: string,
  body: string,
  keepAlive: boolean,
  head = false,
): string {
  const b = te.encode(body);
  return (
    `HTTP/1.1 ${code} ${text}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Length: ${b.length}\r\n` +
    `Connection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n${head ? '' : body}`
  );
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
