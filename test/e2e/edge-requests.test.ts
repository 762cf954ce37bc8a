/**
 * Edge requests answered as kube-apiserver (and Go's net/http in front of it) answers them, over raw
 * sockets and real kubectl 1.35, on Node and in workerd where the runtime lets the request reach the fleet:
 * - `GET //api/v1/pods`: kube's director matches `/api` only as a path prefix, so the not-found handler
 *   answers (404 NotFound Status), never the pods;
 * - `POST` to a named object's path, `PUT`/`PATCH` to a collection: go-restful's 405 MethodNotAllowed;
 * - a JSON body starting with a UTF-8 BOM: 400 (Go's JSON decoder refuses it); YAML: read (go-yaml skips it);
 * - Node only: Host missing, repeated or malformed: Go's 400, said in a Status; a raw backslash is a byte of
 *   the path, as Go reads it. workerd answers those itself before the worker runs (a bodyless or text
 *   400/500) and turns `\` into `/` like every WHATWG URL parser: not the fleet's to change.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../faults/client.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const NOT_FOUND =
  '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}\n';
const NOT_ALLOWED =
  '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n';

/** the body of a raw HTTP/1.1 answer (chunked or not) */
function bodyOf(text: string): string {
  const at = text.indexOf('\r\n\r\n');
  const head = text.slice(0, at).toLowerCase();
  let rest = text.slice(at + 4);
  if (!head.includes('transfer-encoding: chunked')) return rest;
  let out = '';
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const n = Number.parseInt(rest.slice(0, nl), 16);
    if (!n) return out;
    out += rest.slice(nl + 2, nl + 2 + n);
    rest = rest.slice(nl + 2 + n + 2);
  }
}

const head = (requestLine: string, lines: string[] = ['Host: fleet']) =>
  `${requestLine}\r\n${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`;

describe.each(RUNTIMES)('edge requests on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const port = () => Number(new URL(f.url).port);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-edges-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('GET //api/v1/pods is kube not-found handler 404, byte for byte', async () => {
    const r = await rawRequest(port(), head('GET //api/v1/pods HTTP/1.1'));
    expect(r.status).toBe(404);
    expect(bodyOf(r.text)).toBe(NOT_FOUND);
  });

  it('POST to a named object is a 405, through kubectl and raw; the object is not created', async () => {
    const file = join(dir, 'cm.json');
    writeFileSync(
      file,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'edge-post' } }),
    );
    const k = await f
      .kubectl()
      .run([
        'create',
        '--raw',
        '/api/v1/namespaces/default/configmaps/edge-post.clusterspace.member1',
        '-f',
        file,
      ]);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toContain('the server does not allow this method on the requested resource');
    const r = await rawRequest(
      port(),
      head('POST /api/v1/namespaces/default/configmaps/edge-post.clusterspace.member1 HTTP/1.1', [
        'Host: fleet',
        'Content-Type: application/json',
        'Content-Length: 2',
      ]),
      { body: '{}' },
    );
    expect(r.status).toBe(405);
    expect(bodyOf(r.text)).toBe(NOT_ALLOWED);
    // through a per-cluster context the fleet relays the cluster's own answer: the simulated one's is kube's
    const relayed = await fetch(
      `${f.url}/clusterspaces/member1/api/v1/namespaces/default/configmaps/edge-post`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'edge-post' } }),
      },
    );
    expect([relayed.status, await relayed.text()]).toEqual([405, NOT_ALLOWED]);
    const put = await fetch(`${f.url}/api/v1/namespaces/default/configmaps`, { method: 'PUT', body: '{}' });
    expect([put.status, await put.text()]).toEqual([405, NOT_ALLOWED]);
    expect(
      f.member('member1').get({ group: '', version: 'v1', resource: 'configmaps' }, 'default', 'edge-post'),
    ).toBeUndefined();
  });

  it('a JSON body with a UTF-8 BOM is refused as Go refuses it; YAML with one is read', async () => {
    const bom = '\uFEFF';
    const cm = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}.clusterspace.member1` },
    });
    const json = await fetch(`${f.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `${bom}${JSON.stringify(cm(`bom-json-${runtime}`))}`,
    });
    const status = (await json.json()) as { reason: string; message: string };
    expect([json.status, status.reason]).toEqual([400, 'BadRequest']);
    expect(status.message).toBe(
      "couldn't get version/kind; json parse error: invalid character 'ï' looking for beginning of value",
    );
    // JSON is YAML too (and all the worker reads of YAML): the BOM is what is tried here
    const yaml = await fetch(`${f.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/yaml' },
      body: `${bom}${JSON.stringify(cm(`bom-yaml-${runtime}`))}`,
    });
    expect([yaml.status, await yaml.text()]).toEqual([201, expect.any(String)]);
  });

  it.runIf(runtime === 'node')('a bad Host is Go net/http 400, said in a Status', async () => {
    for (const [lines, message] of [
      [[], 'missing required Host header'],
      [['Host: a b'], 'malformed Host header'],
      [['Host: a', 'Host: b'], 'too many Host headers'],
    ] as const) {
      const r = await rawRequest(port(), head('GET /api/v1/namespaces HTTP/1.1', [...lines]));
      expect(r.status, message).toBe(400);
      expect(JSON.parse(bodyOf(r.text))).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        code: 400,
        message,
      });
    }
  });

  it.runIf(runtime === 'node')('a raw backslash is a byte of the path, as Go reads it', async () => {
    const r = await rawRequest(port(), head('GET /api/v1/namespaces/default/configmaps/a\\b HTTP/1.1'));
    expect(r.status).toBe(404);
    const s = JSON.parse(bodyOf(r.text)) as { reason: string; message: string };
    expect(s.reason).toBe('NotFound');
    expect(s.message).toContain('a\\b');
  });

  // exec, attach and port-forward come to node:http's 'upgrade' event, outside the request handler: the
  // same head checks must hold there
  const upgrade = (target: string, lines: string[]) =>
    `GET ${target} HTTP/1.1\r\n${[
      ...lines,
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Protocol: v5.channel.k8s.io',
    ].join('\r\n')}\r\n\r\n`;
  const EXEC =
    '/api/v1/namespaces/shop/pods/web-4rjfz2q6f2-47gdp.clusterspace.member2/exec?command=ls&stdout=true';

  it.runIf(runtime === 'node')('an upgrade request with a bad Host gets the same 400 Status', async () => {
    for (const [lines, message] of [
      [[], 'missing required Host header'],
      [['Host: a', 'Host: b'], 'too many Host headers'],
    ] as const) {
      const r = await rawRequest(port(), upgrade(EXEC, [...lines]));
      expect(r.status, message).toBe(400);
      expect(JSON.parse(bodyOf(r.text))).toMatchObject({ kind: 'Status', reason: 'BadRequest', message });
    }
  });

  it.runIf(runtime === 'node')(
    'a raw backslash in an upgrade path is a byte of the name, not a slash',
    async () => {
      const r = await rawRequest(
        port(),
        upgrade('/api/v1/namespaces/shop/pods/a\\b/exec?command=ls&stdout=true', ['Host: fleet']),
      );
      expect(r.status).toBe(404);
      const s = JSON.parse(bodyOf(r.text)) as { reason: string; message: string };
      expect(s.reason).toBe('NotFound');
      expect(s.message).toContain('a\\b');
    },
  );
});
