/**
 * An object answers under the name it was asked by (issue 29 item 0, docs/names.md), with real kubectl
 * 1.35 on Node and in workerd, in every scope that names its cluster: a namespace by fleet name at the
 * root (`-n default.clusterspace.member2`), the `/clusterspaces/member2` prefix (a kubeconfig context), and
 * the in-path forms (`/api/v1/namespaces/<ns>/clusterspaces/<c>/…`, `/apis/<g>/<v>/clusterspaces/<c>/…`,
 * asked over HTTP: kubectl cannot build them). create (JSON and protobuf bodies), apply --server-side, get,
 * patch, replace, list, get -w (JSON and Table) and delete all print the plain name kubectl was given; a fleet name given
 * inside such a scope comes back as given; the objects land in member2 only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const ok = (r: { code: number | null; stderr: string }) => [r.code, r.stderr];

describe.each(RUNTIMES)('an object answers under the name it was asked by, on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let m2: SimCluster;
  let others: SimCluster[];

  beforeAll(() => {
    m2 = f.member('member2');
    others = [f.member('member1'), f.member('member3'), f.sims.karmada];
  });

  const forms: Array<{ form: string; k: () => Kubectl; ns: string }> = [
    {
      form: 'namespace by fleet name at the root',
      k: () => f.kubectl(''),
      ns: 'default.clusterspace.member2',
    },
    {
      form: 'the /clusterspaces/member2 prefix',
      k: () => f.kubectl('/clusterspaces/member2'),
      ns: 'default',
    },
  ];

  for (const { form, k: kube, ns } of forms)
    it(`kubectl with ${form}: every verb prints the plain name it was given`, async () => {
      const k = kube();
      const tag = `${runtime}-${form.startsWith('namespace') ? 'ns' : 'px'}`;
      const name = `nsform-${tag}`;
      const run = (args: string[], stdin?: string) => k.run([...args, '-n', ns], { stdin });

      let r = await run(['create', 'configmap', name, '--from-literal=a=b', '-o', 'name']);
      expect(ok(r)).toEqual([0, '']);
      expect(r.stdout).toBe(`configmap/${name}\n`);
      expect(m2.get(CM, 'default', name)?.data).toEqual({ a: 'b' });
      // a protobuf body (kubectl 1.35 sends one for secrets)
      r = await run(['create', 'secret', 'generic', `s-${tag}`, '--from-literal=k=v', '-o', 'name']);
      expect([...ok(r), r.stdout]).toEqual([0, '', `secret/s-${tag}\n`]);
      expect(m2.get(SECRETS, 'default', `s-${tag}`)).toBeDefined();

      const ssa = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-${tag}\ndata:\n  x: "1"\n`;
      r = await run(['apply', '--server-side', '-f', '-', '-o', 'name'], ssa);
      expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/ssa-${tag}\n`]);
      r = await run(['apply', '--server-side', '-f', '-'], ssa);
      expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/ssa-${tag} serverside-applied\n`]);

      r = await run(['get', 'configmap', name, '-o', 'jsonpath={.metadata.name} {.metadata.namespace}']);
      expect([...ok(r), r.stdout]).toEqual([0, '', `${name} ${ns}`]);
      r = await run(['get', 'configmap', name]);
      expect(r.stdout).toMatch(new RegExp(`^${name}\\s`, 'm'));

      r = await run([
        'patch',
        'configmap',
        name,
        '--type',
        'merge',
        '-p',
        '{"data":{"a":"c"}}',
        '-o',
        'name',
      ]);
      expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/${name}\n`]);
      const current = JSON.parse((await run(['get', 'configmap', name, '-o', 'json'])).stdout);
      current.data = { a: 'd' };
      r = await run(['replace', '-f', '-', '-o', 'name'], JSON.stringify(current));
      expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/${name}\n`]);
      expect(m2.get(CM, 'default', name)?.data).toEqual({ a: 'd' });

      r = await run(['get', 'configmaps', '-o', 'name']);
      expect(ok(r)).toEqual([0, '']);
      expect(r.stdout.split('\n')).toContain(`configmap/${name}`);
      expect(r.stdout).not.toContain('.clusterspace.');

      const w = k.spawn(['get', 'configmaps', '-n', ns, '--watch', '-o', 'name']);
      // the default output: a Table watch (rows' cells and objects)
      const t = k.spawn(['get', 'configmaps', '-n', ns, '--watch']);
      const j = k.spawn([
        'get',
        'configmap',
        name,
        '-n',
        ns,
        '--watch',
        '-o',
        'jsonpath={.metadata.name}{"\\n"}',
      ]);
      try {
        await w.waitFor(new RegExp(`configmap/${name}\\n`));
        await j.waitFor(new RegExp(`^${name}$`, 'm'));
        for (let i = 0; !w.output().includes(`configmap/late-${tag}`) && i < 40; i++) {
          m2.create(CM, { metadata: { name: `late-${tag}-${i}`, namespace: 'default' } } as KubeObject);
          await w.waitFor(new RegExp(`configmap/late-${tag}`), 500).catch(() => {});
        }
        expect(w.output()).toContain(`configmap/late-${tag}`);
        await t.waitFor(new RegExp(`^late-${tag}-\\d+\\s`, 'm'));
        // a late object may sort before the name in the list kubectl prints first, its row then still in
        // the pipe: waited for as the late row is
        await t.waitFor(new RegExp(`^${name}\\s`, 'm'));
        expect(t.output()).toMatch(new RegExp(`^${name}\\s`, 'm'));
        expect(w.output() + j.output() + t.output()).not.toContain('.clusterspace.');
      } finally {
        w.stop();
        j.stop();
        t.stop();
      }

      for (const [kind, n] of [
        ['configmap', name],
        ['configmap', `ssa-${tag}`],
        ['secret', `s-${tag}`],
      ] as const) {
        r = await run(['delete', kind, n]);
        expect([...ok(r), r.stdout]).toEqual([0, '', `${kind} "${n}" deleted from ${ns} namespace\n`]);
      }
      expect(m2.get(CM, 'default', name)).toBeUndefined();
      for (const s of others) expect(s.list(CM).some((c) => c.metadata.name?.includes(tag))).toBe(false);
    });

  it('a fleet name given inside a fleet-named namespace comes back as given', async () => {
    const k = f.kubectl('');
    const ns = 'default.clusterspace.member2';
    const fleet = `spelled-${runtime}.clusterspace.member2`;
    let r = await k.run(['create', 'configmap', fleet, '-n', ns, '-o', 'name']);
    expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/${fleet}\n`]);
    r = await k.run(['get', 'configmap', fleet, '-n', ns, '-o', 'name']);
    expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/${fleet}\n`]);
    r = await k.run(['get', 'configmap', `spelled-${runtime}`, '-n', ns, '-o', 'name']);
    expect([...ok(r), r.stdout]).toEqual([0, '', `configmap/spelled-${runtime}\n`]);
    r = await k.run(['delete', 'configmap', fleet, '-n', ns]);
    expect([...ok(r), r.stdout]).toEqual([0, '', `configmap "${fleet}" deleted from ${ns} namespace\n`]);
    expect(m2.get(CM, 'default', `spelled-${runtime}`)).toBeUndefined();
  });

  it('the in-path forms: objects, lists, Tables, watch events and Statuses by plain name', async () => {
    const base = `${f.url}/api/v1/namespaces/default/clusterspaces/member2/configmaps`;
    const name = `inpath-${runtime}`;
    const json = { 'Content-Type': 'application/json' };
    const send = async (url: string, init: RequestInit = {}) => {
      const res = await fetch(url, init);
      return { status: res.status, body: (await res.json()) as any };
    };
    let r = await send(base, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name }, data: { a: 'b' } }),
    });
    expect([r.status, r.body.metadata?.name, r.body.metadata?.namespace]).toEqual([201, name, 'default']);
    r = await send(`${base}/${name}`);
    expect(r.body.metadata.name).toBe(name);
    r = await send(`${base}/${name}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: '{"data":{"a":"c"}}',
    });
    expect([r.status, r.body.metadata.name]).toEqual([200, name]);
    r = await send(`${base}/${name}`, { method: 'PUT', headers: json, body: JSON.stringify(r.body) });
    expect([r.status, r.body.metadata.name]).toEqual([200, name]);
    r = await send(`${base}?fieldSelector=metadata.name%3D${name}`);
    expect(r.body.items.map((i: any) => i.metadata.name)).toEqual([name]);
    r = await send(base, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    const row = r.body.rows.find((x: any) => x.cells[0] === name);
    expect(row?.object.metadata.name).toBe(name);
    // watch events
    const ac = new AbortController();
    const watch = await fetch(`${base}?watch=true&fieldSelector=metadata.name%3D${name}`, {
      signal: ac.signal,
    });
    const reader = watch.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect(JSON.parse(first.split('\n')[0]!).object.metadata.name).toBe(name);
    // a Status names the object as asked, and so does a fleet name given there
    r = await send(`${base}/nope-${runtime}`);
    expect([r.status, r.body.message]).toEqual([404, `configmaps "nope-${runtime}" not found`]);
    r = await send(`${base}/${name}.clusterspace.member2`);
    expect(r.body.metadata.name).toBe(`${name}.clusterspace.member2`);
    r = await send(`${base}/${name}`, { method: 'DELETE' });
    expect([r.status, r.body.details?.name ?? r.body.metadata?.name]).toEqual([200, name]);
    expect(m2.get(CM, 'default', name)).toBeUndefined();

    // cluster scope: /apis/<g>/<v>/clusterspaces/<c>/…
    const roles = `${f.url}/apis/rbac.authorization.k8s.io/v1/clusterspaces/member2/clusterroles`;
    r = await send(roles, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name }, rules: [] }),
    });
    expect([r.status, r.body.metadata.name]).toEqual([201, name]);
    r = await send(`${roles}/${name}`, { method: 'DELETE' });
    expect(r.status).toBe(200);
    expect(m2.get(ROLES, '', name)).toBeUndefined();
  });
});
