import { describe, expect, it } from 'vitest';
import { openPort, type PortTarget } from './httpd.ts';

const te = new TextEncoder();
const td = new TextDecoder();

/** what a port answers to `bytes` sent on one connection, and whether it closed */
function ask(t: PortTarget, port: number, bytes: string): { reply: string; ended: boolean } {
  let reply = '';
  let ended = false;
  const conn = openPort(
    t,
    port,
    (d) => {
      reply += td.decode(d);
    },
    () => {
      ended = true;
    },
  );
  conn.data(te.encode(bytes));
  return { reply, ended };
}

describe('a forwarded port', () => {
  // `kubectl run web --image=nginx` declares no port; nginx listens on 80 all the same
  const undeclared: PortTarget = { podName: 'web', containers: [{}] };

  it('answers HTTP on 80 though no container declares it, as the kubelet dials any port', () => {
    const r = ask(undeclared, 80, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(r.reply).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(r.reply).toContain('web');
    expect(r.ended).toBe(true);
  });

  it('answers HTTP on a port declared with an http* name, and echoes raw bytes and other ports', () => {
    const named: PortTarget = {
      podName: 'api',
      containers: [{ ports: [{ containerPort: 9090, name: 'http-api' }] }],
    };
    expect(ask(named, 9090, 'GET /healthz HTTP/1.1\r\n\r\n').reply).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*ok/);
    expect(ask(undeclared, 9090, 'GET / HTTP/1.1\r\n\r\n').reply).toBe('GET / HTTP/1.1\r\n\r\n');
    expect(ask(undeclared, 80, '\u0001\u0002 raw').reply).toBe('\u0001\u0002 raw');
  });
});
