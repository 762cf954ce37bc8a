/**
 * A canned upstream process (started by ./canned.ts): clusters that answer from bytes serialised once, so
 * that "every cluster listed in parallel, unmerged" measures the network and the load generator, not a
 * simulator computing its answers.
 *
 * The bytes are real simulator output: at start one simulated cluster (sim/) is filled with BASE pods as
 * the other cases fill it (bench/cases/passthrough.ts benchPod, ≈ 3 KiB of JSON each) and asked once for
 * its JSON list, its Table list and one pod. Larger lists repeat those items under new names (`r<k>-web-…`,
 * so names stay unique within a cluster); smaller ones take the first items. Every cluster of a `serve`
 * call answers the same bytes (the fleet tells clusters apart by name; it never compares their items).
 *
 * Paths answered (anything else is a 404 Status, counted by path so the report can show what was asked):
 *   /version, /api, /api/v1, /apis (discovery, minimal);
 *   /api/v1/pods and /api/v1/namespaces/<ns>/pods: the JSON list, or the Table when the Accept header asks
 *   for `as=Table`; with `watch=true` a watch stream: `watchEvents` MODIFIED events written at once, RVs
 *   above the list's, then held open (no further bytes) until the client goes;
 *   /api/v1/namespaces/<ns>/pods/<name>: the canned pod.
 * Each answer waits `latencyMs` before its head (a cluster's round trip and its own work).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CannedReply, CannedRequest, CannedSpec } from './canned.ts';
import { type Base, listBytes, makeBase, watchBytes } from './canned-bodies.ts';

export { CANNED_NS } from './canned-bodies.ts';

const DISCOVERY: Record<string, unknown> = {
  '/version': {
    major: '1',
    minor: '35',
    gitVersion: 'v1.35.0-canned',
    gitCommit: 'canned',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.25',
    compiler: 'gc',
    platform: 'linux/amd64',
  },
  '/api': {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
  },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      {
        name: 'pods',
        singularName: 'pod',
        namespaced: true,
        kind: 'Pod',
        verbs: ['get', 'list', 'watch'],
        shortNames: ['po'],
      },
    ],
  },
  '/apis': { kind: 'APIGroupList', apiVersion: 'v1', groups: [] },
};

interface Served {
  json: Buffer;
  table: Buffer;
  watch: Buffer;
  latencyMs: number;
}

let base: Base | undefined;
let current: Served | undefined;
let servers: Server[] = [];
const unknownPaths = new Map<string, number>();
const openWatches = new Set<ServerResponse>();
let answered = 0;

function send(res: ServerResponse, status: number, body: Buffer, type = 'application/json'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}

function notFound(res: ServerResponse, path: string): void {
  unknownPaths.set(path, (unknownPaths.get(path) ?? 0) + 1);
  send(
    res,
    404,
    Buffer.from(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server could not find the requested resource',
        reason: 'NotFound',
        code: 404,
      }),
    ),
  );
}

const POD_PATH = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+$/;
const LIST_PATH = /^\/api\/v1\/(?:namespaces\/[^/]+\/)?pods$/;

function answer(req: IncomingMessage, res: ServerResponse): void {
  const s = current!;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  answered++;
  if (LIST_PATH.test(path)) {
    if (query.get('watch') === 'true' || query.get('watch') === '1') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.write(s.watch);
      openWatches.add(res);
      res.on('close', () => openWatches.delete(res));
      return;
    }
    send(res, 200, /as=Table/.test(req.headers.accept ?? '') ? s.table : s.json);
  } else if (POD_PATH.test(path)) send(res, 200, base!.pod);
  else if (DISCOVERY[path]) send(res, 200, Buffer.from(JSON.stringify(DISCOVERY[path])));
  else notFound(res, path);
}

async function closeServers(): Promise<void> {
  for (const w of openWatches) w.destroy();
  openWatches.clear();
  await Promise.all(
    servers.map(
      (srv) =>
        new Promise<void>((done) => {
          srv.close(() => done());
          srv.closeAllConnections();
        }),
    ),
  );
  servers = [];
}

async function serve(spec: CannedSpec): Promise<CannedReply> {
  await closeServers();
  base ??= await makeBase();
  current = {
    json: listBytes(base.listHead, 'items', base.items, spec.pods, false),
    table: listBytes(base.tableHead, 'rows', base.rows, spec.pods, true),
    watch: watchBytes(base, spec.watchEvents ?? 0),
    latencyMs: spec.latencyMs,
  };
  const urls: string[] = [];
  for (let i = 0; i < spec.clusters; i++) {
    const srv = createServer({ keepAlive: true }, (req, res) => {
      const delay = current?.latencyMs ?? 0;
      if (delay > 0) setTimeout(() => answer(req, res), delay);
      else answer(req, res);
    });
    srv.keepAliveTimeout = 60_000;
    await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done));
    servers.push(srv);
    urls.push(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
  }
  return {
    urls,
    bytes: { json: current.json.length, table: current.table.length, watch: current.watch.length },
  };
}

process.on('message', (msg: CannedRequest) => {
  const reply = (ok: boolean, result: unknown) => process.send?.({ id: msg.id, ok, result });
  const run = async (): Promise<unknown> => {
    if (msg.cmd === 'serve') return serve(msg.arg as CannedSpec);
    if (msg.cmd === 'counters') {
      const r = { answered, openWatches: openWatches.size, unknownPaths: Object.fromEntries(unknownPaths) };
      return r;
    }
    if (msg.cmd === 'close') {
      await closeServers();
      setImmediate(() => process.exit(0));
      return null;
    }
    throw new Error(`canned: unknown command ${msg.cmd}`);
  };
  run().then(
    (r) => reply(true, r),
    (e: unknown) => reply(false, e instanceof Error ? (e.stack ?? e.message) : String(e)),
  );
});
process.on('disconnect', () => process.exit(0));
// ready once the base data is built: a harness starts these while it starts the rest, not in a case's time
makeBase().then(
  (b) => {
    base ??= b;
    process.send?.({ id: 0, ok: true, result: 'ready' });
  },
  (e: unknown) => {
    console.error(`canned: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
