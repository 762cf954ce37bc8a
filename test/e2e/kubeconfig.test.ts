/**
 * `fleet-apiserver kubeconfig`: contexts for the fleet root, the control plane and every member, from the
 * live membership, merged into an existing kubeconfig like `kubectl config set-*` — then used by the
 * real kubectl, over plain HTTP (no credentials) and over TLS with a bearer token (kubectl sends tokens
 * only over TLS).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildFleetKubeconfig, mergeKubeconfig } from '../../deploy/cli/kubeconfig-doc.ts';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { createTestCA } from '../helpers/tls.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };

/** the command as a user runs it; asynchronously, since the fleet it asks runs in this process */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/fleet-apiserver.mjs', 'kubeconfig', ...args], (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
function tmpFile(name: string, text?: string) {
  const f = join(mkdtempSync(join(tmpdir(), 'fleet-kc-')), name);
  if (text !== undefined) writeFileSync(f, text);
  return f;
}
/** kubectl with a kubeconfig file of ours (the helper's own file is only its fallback) */
function kubectlWith(file: string) {
  const k = new Kubectl('http://unused.invalid');
  return (args: string[]) => k.run(['--kubeconfig', file, ...args]);
}

describe('the kubeconfig document', () => {
  const input = {
    server: 'https://fleet.example:8443/',
    members: ['member2', 'member1'],
    controlPlane: true,
    auth: { token: 't0k' },
    tls: { certificateAuthorityData: 'Q0E=' },
    prefix: 'fleet-',
  };

  it('has the root, the control plane and one context per member, each its /clusterspaces/<c> URL', () => {
    const doc = buildFleetKubeconfig(input);
    expect(doc.contexts.map((c) => c.name)).toEqual(['fleet', 'karmada', 'member1', 'member2']);
    expect(doc.clusters.map((c) => c.cluster.server)).toEqual([
      'https://fleet.example:8443',
      'https://fleet.example:8443/clusterspaces/karmada',
      'https://fleet.example:8443/clusterspaces/member1',
      'https://fleet.example:8443/clusterspaces/member2',
    ]);
    for (const c of doc.clusters) expect(c.cluster['certificate-authority-data']).toBe('Q0E=');
    expect(doc.users).toEqual([{ name: 'fleet-user', user: { token: 't0k' } }]);
    expect(buildFleetKubeconfig({ ...input, controlPlane: false }).contexts.map((c) => c.name)).not.toContain(
      'karmada',
    );
  });

  it('writes the auth stanza chosen: exec plugin, client certificate, an existing user, none', () => {
    const exec = buildFleetKubeconfig({
      ...input,
      auth: {
        exec: { command: 'kubelogin', args: ['get-token'], apiVersion: 'client.authentication.k8s.io/v1' },
      },
    });
    expect(exec.users[0]!.user.exec).toMatchObject({ command: 'kubelogin', args: ['get-token'] });
    const cert = buildFleetKubeconfig({
      ...input,
      auth: { clientCertificateData: 'Qw==', clientKeyData: 'Sw==' },
    });
    expect(cert.users[0]!.user).toEqual({ 'client-certificate-data': 'Qw==', 'client-key-data': 'Sw==' });
    const existing = buildFleetKubeconfig({ ...input, auth: { existingUser: 'oidc' } });
    expect(existing.users).toEqual([]);
    expect(existing.contexts.every((c) => c.context.user === 'oidc')).toBe(true);
    expect(buildFleetKubeconfig({ ...input, auth: {} }).users[0]!.user).toEqual({});
  });

  it('merges like kubectl config set-*: same names replaced, others kept, current context kept unless asked', () => {
    const old = {
      apiVersion: 'v1',
      kind: 'Config',
      preferences: { colors: true },
      clusters: [
        { name: 'prod', cluster: { server: 'https://prod' } },
        { name: 'fleet-member1', cluster: { server: 'https://stale' } },
      ],
      users: [{ name: 'prod', user: { token: 'p' } }],
      contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'prod' } }],
      'current-context': 'prod',
    };
    const doc = buildFleetKubeconfig(input);
    const m = mergeKubeconfig(old, doc, false);
    expect(m.preferences).toEqual({ colors: true });
    expect(m['current-context']).toBe('prod');
    expect(m.clusters.filter((c) => c.name === 'fleet-member1')).toEqual([
      {
        name: 'fleet-member1',
        cluster: {
          server: 'https://fleet.example:8443/clusterspaces/member1',
          'certificate-authority-data': 'Q0E=',
        },
      },
    ]);
    expect(m.clusters.map((c) => c.name)).toContain('prod');
    expect(m.users.map((u) => u.name).sort()).toEqual(['fleet-user', 'prod']);
    expect(mergeKubeconfig(old, doc, true)['current-context']).toBe('fleet');
    expect(mergeKubeconfig(undefined, doc, false)['current-context']).toBe('fleet');
  });
});

describe('fleet-apiserver kubeconfig against a running fleet', () => {
  let sims: ServedSimFleet;
  let plain: RunningFleet;
  let secure: RunningFleet;
  let fixed: RunningFleet;
  const ca = createTestCA();
  beforeAll(async () => {
    sims = await startSimFleet();
    plain = await startFleet('node', sims.karmadaConfig());
    secure = await startFleet(
      'node',
      sims.karmadaConfig({ authentication: { staticTokens: { csv: 'kc-token,kate,k-1,"dev"\n' } } }),
      { tls: ca.server() },
    );
    // static members: `edge` is member2's cluster under another name, `gone` answers nobody, member3 is
    // left out; Karmada's Cluster objects still say member1, member2, member3
    const urls = sims.memberUrls;
    fixed = await startFleet(
      'node',
      sims.staticConfig({
        members: {
          mode: 'static',
          clusters: [
            { name: 'member1', server: urls.get('member1')!, token: 'fleet-demo-token' },
            { name: 'edge', server: urls.get('member2')!, token: 'fleet-demo-token' },
            { name: 'gone', server: 'http://127.0.0.1:1', token: 'fleet-demo-token' },
          ],
        },
      }),
    );
  });
  afterAll(async () => {
    await fixed?.stop();
    await plain?.stop();
    await secure?.stop();
    await sims?.close();
  });

  it('writes a context per member from the live membership and kubectl uses --context fleet and member1', async () => {
    const file = tmpFile(
      'config',
      'apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: "https://prod.example"}\ncontexts:\n- name: prod\n  context: {cluster: prod, user: prod}\nusers:\n- name: prod\n  user: {token: keep-me}\ncurrent-context: prod\n',
    );
    const r = await cli(['--server', plain.url, '--kubeconfig', file]);
    expect(r.stderr).toContain('wrote contexts fleet, karmada, member1, member2, member3');
    expect(r.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const doc = parseYaml(readFileSync(file, 'utf8'));
    expect(doc['current-context']).toBe('prod');
    expect(doc.users.find((u: any) => u.name === 'prod').user.token).toBe('keep-me');

    const k = kubectlWith(file);
    const root = await k([
      '--context',
      'fleet',
      'get',
      'ns',
      'default',
      'default.clusterspace.member2',
      '-o',
      'name',
    ]);
    expect(root.stderr).toBe('');
    expect(root.stdout.trim().split('\n')).toEqual([
      'namespace/default',
      'namespace/default.clusterspace.member2',
    ]);
    const one = await k([
      '--context',
      'member1',
      'get',
      'pods',
      '-A',
      '--no-headers',
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name',
    ]);
    expect(one.code).toBe(0);
    const got = one.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).join('/'))
      .sort();
    const want = sims.members
      .get('member1')!
      .list(PODS)
      .map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
    expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual(want.sort());
    const cp = await k(['--context', 'karmada', 'get', 'clusters', '-o', 'name']);
    expect(cp.stdout.trim().split('\n')).toEqual([
      'cluster.cluster.karmada.io/member1',
      'cluster.cluster.karmada.io/member2',
      'cluster.cluster.karmada.io/member3',
    ]);
  });

  it('over TLS with a bearer token: the CA is embedded and kubectl authenticates as the token’s user', async () => {
    const caFile = tmpFile('ca.crt', ca.cert);
    const file = tmpFile('config');
    const r = await cli([
      '--server',
      secure.url,
      '--kubeconfig',
      file,
      '--token',
      'kc-token',
      '--certificate-authority',
      caFile,
      '--set-current',
    ]);
    expect(r.stderr).toContain('wrote contexts fleet, karmada, member1, member2, member3');
    expect(r.code).toBe(0);
    const k = kubectlWith(file);
    const who = await k(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    expect(who.stderr).toBe('');
    expect(who.stdout).toBe('kate');
    const m2 = await k(['--context', 'member2', 'get', 'ns', 'default', '-o', 'name']);
    expect(m2.stdout.trim()).toBe('namespace/default');
  });

  it('a wrong token is refused when it asks the fleet for its members, and nothing is written', async () => {
    const caFile = tmpFile('ca.crt', ca.cert);
    const file = tmpFile('config');
    const r = await cli([
      '--server',
      secure.url,
      '--kubeconfig',
      file,
      '--token',
      'nope',
      '--certificate-authority',
      caFile,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/401/);
    expect(() => statSync(file)).toThrow();
  });

  it('static members: a context per member the fleet serves, down ones included, none for other Clusters', async () => {
    const r = await cli(['--server', fixed.url, '--kubeconfig', '-']);
    expect(r.code, r.stderr).toBe(0);
    const doc = parseYaml(r.stdout);
    expect(doc.contexts.map((c: any) => c.name)).toEqual(['fleet', 'karmada', 'edge', 'gone', 'member1']);
    const edge = doc.clusters.find((c: any) => c.name === 'fleet-edge');
    expect(edge.cluster.server).toBe(`${fixed.url}/clusterspaces/edge`);
    const file = tmpFile('config', r.stdout);
    const got = await kubectlWith(file)(['--context', 'edge', 'get', 'ns', 'default', '-o', 'name']);
    expect(got.stderr).toBe('');
    expect(got.stdout.trim()).toBe('namespace/default');
  });

  it('bad usage exits 2 with the usage text', async () => {
    const r = await cli(['--kubeconfig', '-']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--server is required');
    expect(r.stderr).toContain('Usage: fleet-apiserver kubeconfig');
  });
});
