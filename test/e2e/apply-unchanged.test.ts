/**
 * `kubectl apply` of an unchanged manifest at the root says `unchanged` (issue 29 item 1), with real
 * kubectl 1.35 on Node and in workerd. kubectl's three-way diff reads the object's
 * `kubectl.kubernetes.io/last-applied-configuration`: the fleet stores it as the cluster knows the object
 * (plain name and namespace) and shows it back as the object is shown (docs/names.md), in objects, lists,
 * Tables' row objects and watch events, also when the client asks for protobuf first. JSON and YAML
 * manifests, `--prune -l`, `-k`, fleet names at the root and plain names in a namespace by fleet name;
 * server-side apply by fleet name twice.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const LAST = 'kubectl.kubernetes.io/last-applied-configuration';
const recordOf = (o: any) => JSON.parse(o.metadata.annotations[LAST]).metadata;

const yaml = (name: string, ns: string, label: string, v = '1') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  labels:\n    set: ${label}\ndata:\n  v: "${v}"\n`;

describe.each(RUNTIMES)('kubectl apply twice says unchanged, on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const m2 = () => f.member('member2');

  it('YAML and JSON manifests by fleet name at the root; plain names in a namespace by fleet name', async () => {
    const k = f.kubectl('');
    const byFleet = `ap-yaml-${runtime}.clusterspace.member2`;
    const json = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `ap-json-${runtime}.clusterspace.member2`, namespace: 'default' },
      data: { v: '1' },
    });
    const plainInNs = yaml(`ap-ns-${runtime}`, 'default.clusterspace.member2', 'ns');
    for (const [what, manifest, shown] of [
      ['YAML', yaml(byFleet, 'default', 'yml'), `configmap/${byFleet}`],
      ['JSON', json, `configmap/ap-json-${runtime}.clusterspace.member2`],
      ['plain in a namespace by fleet name', plainInNs, `configmap/ap-ns-${runtime}`],
    ] as const) {
      const first = await k.run(['apply', '-f', '-'], { stdin: manifest });
      expect([first.code, first.stderr, first.stdout], what).toEqual([0, '', `${shown} created\n`]);
      const again = await k.run(['apply', '-f', '-'], { stdin: manifest });
      expect([again.code, again.stderr, again.stdout], what).toEqual([0, '', `${shown} unchanged\n`]);
    }
    // stored as member2 knows the object
    const stored = m2().get(CM, 'default', `ap-yaml-${runtime}`) as any;
    expect(recordOf(stored)).toMatchObject({ name: `ap-yaml-${runtime}`, namespace: 'default' });
    expect(recordOf(m2().get(CM, 'default', `ap-ns-${runtime}`))).toMatchObject({
      name: `ap-ns-${runtime}`,
      namespace: 'default',
    });
    // and a real change is still one
    const changed = await k.run(['apply', '-f', '-'], { stdin: yaml(byFleet, 'default', 'yml', '2') });
    expect(changed.stdout).toBe(`configmap/${byFleet} configured\n`);
    expect(m2().get(CM, 'default', `ap-yaml-${runtime}`)?.data).toEqual({ v: '2' });
  });

  it('server-side apply by fleet name at the root, twice: the fleet name back, no conflict', async () => {
    const k = f.kubectl('');
    const name = `ssa-${runtime}.clusterspace.member2`;
    for (let i = 0; i < 2; i++) {
      const r = await k.run(['apply', '--server-side', '-f', '-'], { stdin: yaml(name, 'default', 'ssa') });
      expect([r.code, r.stderr, r.stdout]).toEqual([0, '', `configmap/${name} serverside-applied\n`]);
    }
    const stored = m2().get(CM, 'default', `ssa-${runtime}`) as any;
    expect(stored?.data).toEqual({ v: '1' });
    expect(stored.metadata.managedFields.map((m: any) => m.manager)).toEqual(['kubectl']);
  });

  it('apply --prune -l and apply -k, twice: unchanged, nothing pruned', async () => {
    const k = f.kubectl('');
    const dir = mkdtempSync(join(tmpdir(), 'fleet-apply-'));
    const label = `prune-${runtime}`;
    const names = [`pa-${runtime}.clusterspace.member2`, `pb-${runtime}.clusterspace.member2`];
    writeFileSync(join(dir, 'a.yaml'), names.map((n) => yaml(n, 'default', label)).join('---\n'));
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n- a.yaml\n');
    const prune = ['apply', '-f', join(dir, 'a.yaml'), '--prune', '-l', `set=${label}`, '-n', 'default'];
    const first = await k.run(prune);
    expect([first.code, first.stdout]).toEqual([0, names.map((n) => `configmap/${n} created\n`).join('')]);
    for (const args of [prune, ['apply', '-k', dir]]) {
      const again = await k.run(args);
      expect([again.code, again.stdout], args.join(' ')).toEqual([
        0,
        names.map((n) => `configmap/${n} unchanged\n`).join(''),
      ]);
    }
    for (const n of names) expect(m2().get(CM, 'default', n.split('.')[0]!)).toBeDefined();
  });

  it('the record names the object as shown: get -o yaml, a list, a Table, protobuf first, watch events', async () => {
    const k = f.kubectl('');
    const name = `rec-${runtime}.clusterspace.member2`;
    const made = await k.run(['apply', '-f', '-'], { stdin: yaml(name, 'default', 'rec') });
    expect(made.code).toBe(0);
    const one = await k.run(['get', 'configmap', name, '-n', 'default', '-o', 'yaml']);
    expect(one.stdout).toContain(`"name":"${name}"`);
    const list = JSON.parse(
      (await k.run(['get', 'configmaps', '-n', 'default', '-l', 'set=rec', '-o', 'json'])).stdout,
    );
    expect(list.items.map((i: any) => recordOf(i).name)).toEqual([name]);

    const base = `${f.url}/api/v1/namespaces/default/configmaps`;
    const protobufFirst = { Accept: 'application/vnd.kubernetes.protobuf,application/json' };
    const got = (await (await fetch(`${base}/${name}`, { headers: protobufFirst })).json()) as any;
    expect(recordOf(got)).toMatchObject({ name, namespace: 'default' });
    const listed = (await (
      await fetch(`${base}?labelSelector=set%3Drec`, { headers: protobufFirst })
    ).json()) as any;
    expect(listed.items.map((i: any) => recordOf(i).name)).toEqual([name]);
    const table = (await (
      await fetch(`${base}?labelSelector=set%3Drec&includeObject=Object`, {
        headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      })
    ).json()) as any;
    expect(table.rows.map((r: any) => recordOf(r.object).name)).toEqual([name]);

    const ac = new AbortController();
    const watch = await fetch(`${base}?watch=true&labelSelector=set%3Drec`, { signal: ac.signal });
    const first = new TextDecoder().decode((await watch.body!.getReader().read()).value);
    ac.abort();
    expect(recordOf(JSON.parse(first.split('\n')[0]!).object).name).toBe(name);
    // in a namespace by fleet name, the record says the name and namespace as asked
    const inNs = (await (
      await fetch(`${f.url}/api/v1/namespaces/default.clusterspace.member2/configmaps/rec-${runtime}`)
    ).json()) as any;
    expect(recordOf(inNs)).toMatchObject({
      name: `rec-${runtime}`,
      namespace: 'default.clusterspace.member2',
    });
  });
});
