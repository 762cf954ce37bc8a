/**
 * The fleet with client-go's wire format (issue 10, Build 2), on Node and in workerd, members reached
 * through Karmada's cluster proxy. The request bodies are kubectl 1.35's own: captured from the real binary
 * against a recording stub, then sent to the fleet at the root (fleet names), in the in-path form
 * (`…/clusterspaces/member2/…`) and through `/clusterspaces/member2` (plain names). Each must land in member2
 * under its plain name without fleet markers; a protobuf update's composite resourceVersion must reach
 * member2 as its own (a stale one gets member2's 409); answers to a client that asks protobuf first
 * (`application/vnd.kubernetes.protobuf,application/json`, what kubectl and Helm send) must be readable.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubectlPath } from '../../scripts/kubectl.mjs';
import type { KubeObject } from '../../sim/index.ts';
import { decodeObject, encodeObject } from '../../sim/proto/envelope.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PB = 'application/vnd.kubernetes.protobuf';
const TYPED_ACCEPT = `${PB},application/json`;
const MARK = 'fleet.karmada.io/cluster';
const NS = 'shop';
type Obj = KubeObject & Record<string, any>;

interface Captured {
  method: string;
  /** the path kubectl wrote to (against a plain server) */
  path: string;
  contentType: string;
  accept: string;
  body: Uint8Array<ArrayBuffer>;
}

/**
 * What kubectl sends for one command, recorded by a stub that answers every write with the body it got
 * (a valid object for kubectl to print) and 404 to anything else.
 */
async function capture(args: string[]): Promise<Captured> {
  let got: Captured | undefined;
  const srv: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' || req.method === 'PUT') {
        got = {
          method: req.method,
          path: new URL(req.url!, 'http://x').pathname,
          contentType: String(req.headers['content-type']),
          accept: String(req.headers.accept),
          body: new Uint8Array(Buffer.concat(chunks)),
        };
        res.writeHead(201, { 'content-type': String(req.headers['content-type']) });
        res.end(Buffer.concat(chunks));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  try {
    await new Promise<void>((resolve, reject) => {
      const p = spawn(kubectlPath(), [`--server=http://127.0.0.1:${port}`, ...args], { stdio: 'ignore' });
      p.on('error', reject);
      p.on('close', () => resolve());
    });
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
  if (!got) throw new Error(`kubectl ${args.join(' ')} wrote nothing`);
  return got;
}

/** kubectl commands whose typed clients send protobuf, one per kind, for a given object name. */
const COMMANDS: Record<
  string,
  { args: (name: string) => string[]; gvr: [string, string, string]; namespaced: boolean }
> = {
  Secret: {
    args: (n) => ['create', 'secret', 'generic', n, '-n', NS, '--from-literal=k=v'],
    gvr: ['', 'v1', 'secrets'],
    namespaced: true,
  },
  ConfigMap: {
    args: (n) => ['create', 'configmap', n, '-n', NS, '--from-literal=k=v'],
    gvr: ['', 'v1', 'configmaps'],
    namespaced: true,
  },
  Deployment: {
    args: (n) => ['create', 'deployment', n, '-n', NS, '--image=nginx:1.27'],
    gvr: ['apps', 'v1', 'deployments'],
    namespaced: true,
  },
  Job: {
    args: (n) => ['create', 'job', n, '-n', NS, '--image=busybox', '--', 'true'],
    gvr: ['batch', 'v1', 'jobs'],
    namespaced: true,
  },
  ServiceAccount: {
    args: (n) => ['create', 'serviceaccount', n, '-n', NS],
    gvr: ['', 'v1', 'serviceaccounts'],
    namespaced: true,
  },
  Service: {
    args: (n) => ['create', 'service', 'clusterip', n, '-n', NS, '--tcp=80:80'],
    gvr: ['', 'v1', 'services'],
    namespaced: true,
  },
  PriorityClass: {
    args: (n) => ['create', 'priorityclass', n, '--value=10'],
    gvr: ['scheduling.k8s.io', 'v1', 'priorityclasses'],
    namespaced: false,
  },
  Namespace: {
    args: (n) => ['create', 'namespace', n],
    gvr: ['', 'v1', 'namespaces'],
    namespaced: false,
  },
};

/** The collection URL path of a kind in one of the fleet's forms. */
function collection(
  form: 'root' | 'inpath' | 'prefix',
  gvr: [string, string, string],
  namespaced: boolean,
): string {
  const [g, v, r] = gvr;
  const base = g ? `/apis/${g}/${v}` : `/api/${v}`;
  const ns = namespaced ? `/namespaces/${NS}` : '';
  if (form === 'inpath') return `${base}${ns}/clusterspaces/member2/${r}`;
  if (form === 'prefix') return `/clusterspaces/member2${base}${ns}/${r}`;
  return `${base}${ns}/${r}`;
}

/** An answer read as client-go reads it: by its Content-Type. */
async function readAnswer(res: Response): Promise<Obj> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const ct = res.headers.get('content-type') ?? '';
  if (ct.startsWith(PB)) return decodeObject(bytes) as Obj;
  expect(ct).toMatch(/^application\/json/);
  return JSON.parse(new TextDecoder().decode(bytes));
}

const FORMS = ['root', 'inpath', 'prefix'] as const;

describe.each(process.env.PRT ? [process.env.PRT as 'node'] : RUNTIMES)(
  'protobuf through the fleet on %s',
  (runtime) => {
    const f = useSimFleet(runtime);
    const bodies = new Map<string, Captured>();
    const plain = (kind: string, form: string) => `pb-${kind.toLowerCase()}-${form}-${runtime[0]}`;
    const wire = (kind: string, form: string) =>
      form === 'prefix' ? plain(kind, form) : `${plain(kind, form)}.clusterspace.member2`;

    beforeAll(async () => {
      for (const kind of Object.keys(COMMANDS))
        for (const form of FORMS)
          bodies.set(`${kind}/${form}`, await capture(COMMANDS[kind]!.args(wire(kind, form))));
    }, 120_000);

    it('kubectl writes these kinds in protobuf and asks protobuf first', () => {
      for (const [key, c] of bodies) {
        expect(c.contentType, key).toBe(PB);
        expect(c.accept, key).toBe(TYPED_ACCEPT);
        expect([...c.body.subarray(0, 4)], key).toEqual([0x6b, 0x38, 0x73, 0x00]);
      }
    });

    it.each(FORMS)(
      'creates from kubectl’s protobuf bodies (%s): plain names in member2, fleet names back',
      async (form) => {
        const m2 = f.member('member2');
        for (const [kind, cmd] of Object.entries(COMMANDS)) {
          const c = bodies.get(`${kind}/${form}`)!;
          const res = await fetch(
            `${f.url}${collection(form, cmd.gvr, cmd.namespaced)}?fieldManager=kubectl-create`,
            {
              method: 'POST',
              headers: { 'content-type': c.contentType, accept: c.accept },
              body: c.body,
            },
          );
          const answer = await readAnswer(res);
          expect(res.status, `${kind} ${form}: ${JSON.stringify(answer)}`).toBe(201);
          expect(answer.kind).toBe(kind);
          expect(answer.metadata.name).toBe(wire(kind, form));
          const [group, version, resource] = cmd.gvr;
          const stored = m2.get(
            { group, version, resource },
            cmd.namespaced ? NS : undefined,
            plain(kind, form),
          ) as Obj;
          expect(stored, `${kind} ${form} in member2`).toBeDefined();
          expect(stored.metadata.labels?.[MARK]).toBeUndefined();
          expect(stored.metadata.annotations?.[MARK]).toBeUndefined();
          for (const other of ['member1', 'member3'])
            expect(
              f
                .member(other)
                .get({ group, version, resource }, cmd.namespaced ? NS : undefined, plain(kind, form)),
            ).toBeUndefined();
        }
      },
    );

    it('a protobuf update carries a composite resourceVersion that reaches member2 as its own; a stale one is 409', async () => {
      const m2 = f.member('member2');
      const name = `pb-update-${runtime}`;
      const fleetName = `${name}.clusterspace.member2`;
      const c = await capture(COMMANDS.ConfigMap!.args(fleetName));
      let res = await fetch(`${f.url}/api/v1/namespaces/${NS}/configmaps`, {
        method: 'POST',
        headers: { 'content-type': PB, accept: TYPED_ACCEPT },
        body: c.body,
      });
      expect(res.status).toBe(201);
      for (const form of ['root', 'inpath'] as const) {
        // what a typed client does: GET (protobuf first), change, PUT the object back in protobuf
        const path = `${collection(form, ['', 'v1', 'configmaps'], true)}/${fleetName}`;
        res = await fetch(`${f.url}${path}`, { headers: { accept: TYPED_ACCEPT } });
        expect(res.status).toBe(200);
        const got = await readAnswer(res);
        const composite = got.metadata.resourceVersion as string;
        const own = (m2.get({ group: '', version: 'v1', resource: 'configmaps' }, NS, name) as Obj).metadata
          .resourceVersion;
        expect(composite).not.toBe(own);
        const next = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: fleetName, namespace: NS, resourceVersion: composite },
          data: { k: `v-${form}` },
        };
        res = await fetch(`${f.url}${path}`, {
          method: 'PUT',
          headers: { 'content-type': PB, accept: TYPED_ACCEPT },
          body: encodeObject(next),
        });
        const put = await readAnswer(res);
        expect(res.status, JSON.stringify(put)).toBe(200);
        expect(put.metadata.name).toBe(fleetName);
        const stored = m2.get({ group: '', version: 'v1', resource: 'configmaps' }, NS, name) as Obj;
        expect(stored.data).toEqual({ k: `v-${form}` });
        expect(stored.metadata.resourceVersion).not.toBe(own);
        // the same composite again is stale now: member2's own Conflict
        res = await fetch(`${f.url}${path}`, {
          method: 'PUT',
          headers: { 'content-type': PB, accept: TYPED_ACCEPT },
          body: encodeObject({ ...next, data: { k: 'stale' } }),
        });
        const st = await readAnswer(res);
        expect(res.status).toBe(409);
        expect(st).toMatchObject({ kind: 'Status', reason: 'Conflict' });
        expect(st.message).toContain('the object has been modified');
      }
    });

    // through /clusterspaces/<c> the fleet is a transparent proxy: bodies go as they are, markers included
    it.each(['root', 'inpath'] as const)(
      'a protobuf body’s fleet marker never reaches member2 (%s)',
      async (form) => {
        const m2 = f.member('member2');
        const name = `pb-marked-${form}-${runtime}`;
        const body = encodeObject({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: `${name}.clusterspace.member2`,
            namespace: NS,
            labels: { app: 'x', [MARK]: 'member2' },
            annotations: { note: 'kept', [MARK]: 'member2' },
          },
          data: { k: 'v' },
        });
        const res = await fetch(`${f.url}${collection(form, ['', 'v1', 'configmaps'], true)}`, {
          method: 'POST',
          headers: { 'content-type': PB, accept: TYPED_ACCEPT },
          body,
        });
        expect(res.status, JSON.stringify(await readAnswer(res.clone()))).toBe(201);
        const stored = m2.get({ group: '', version: 'v1', resource: 'configmaps' }, NS, name) as Obj;
        expect(stored.metadata.labels).toEqual({ app: 'x' });
        expect(stored.metadata.annotations).toEqual({ note: 'kept' });
      },
    );

    it('answers a protobuf-first client readably: merged and passthrough reads, errors', async () => {
      const name = plain('Secret', 'root');
      // the root: one object by fleet name, and a merged list
      let res = await fetch(`${f.url}/api/v1/namespaces/${NS}/secrets/${name}.clusterspace.member2`, {
        headers: { accept: TYPED_ACCEPT },
      });
      expect(res.status).toBe(200);
      expect((await readAnswer(res)).metadata.name).toBe(`${name}.clusterspace.member2`);
      res = await fetch(`${f.url}/api/v1/namespaces/${NS}/secrets`, { headers: { accept: TYPED_ACCEPT } });
      expect(res.status).toBe(200);
      const list = await readAnswer(res);
      expect(list.kind).toBe('SecretList');
      expect(list.items.map((i: Obj) => i.metadata.name)).toContain(`${name}.clusterspace.member2`);
      // through the prefix the member's protobuf passes through unchanged
      res = await fetch(
        `${f.url}/clusterspaces/member2/api/v1/namespaces/${NS}/secrets/${plain('Secret', 'prefix')}`,
        {
          headers: { accept: TYPED_ACCEPT },
        },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(PB);
      expect((await readAnswer(res)).metadata.name).toBe(plain('Secret', 'prefix'));
      // a missing object is a NotFound Status the client can read, in either encoding
      for (const path of [
        `/api/v1/namespaces/${NS}/secrets/nope.clusterspace.member2`,
        `/api/v1/namespaces/${NS}/clusterspaces/member2/secrets/nope`,
        `/clusterspaces/member2/api/v1/namespaces/${NS}/secrets/nope`,
      ]) {
        res = await fetch(`${f.url}${path}`, { headers: { accept: TYPED_ACCEPT } });
        expect(res.status, path).toBe(404);
        expect(await readAnswer(res), path).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      }
    });
  },
);
