/**
 * The worker's configuration as an operator writes it: `FLEET_CONFIG` in YAML (comments, flow maps, an
 * inline kubeconfig in a block scalar), read by the fleet's YAML reader (js-yaml) in workerd; invalid ones are
 * answered with a 503 Status naming the field or the line, as the README says. Also an `application/yaml`
 * request body, read by the same reader on the write path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { type RunningFleet, startWorkerFleet } from '../helpers/fleet.ts';

let sims: ServedSimFleet;
const running: RunningFleet[] = [];

async function worker(config: string): Promise<string> {
  const f = await startWorkerFleet(config);
  running.push(f);
  return f.url;
}

beforeAll(async () => {
  sims = await startSimFleet({ members: ['member1'] });
});
afterAll(async () => {
  await Promise.all(running.map((f) => f.stop()));
  await sims?.close();
});

/** the control plane's kubeconfig, indented into the configuration as a literal block */
function kubeconfig(server: string): string {
  return `apiVersion: v1
kind: Config
current-context: karmada
clusters:
- name: karmada
  cluster:
    server: ${server}
users:
- name: fleet
  user:
    token: fleet-demo-token
contexts:
- name: karmada
  context: {cluster: karmada, user: fleet}
`;
}

describe('FLEET_CONFIG in YAML (workerd)', () => {
  it('serves a fleet configured in YAML with an inline YAML kubeconfig', async () => {
    const inline = kubeconfig(sims.karmadaUrl)
      .split('\n')
      .map((l) => (l ? `      ${l}` : l))
      .join('\n');
    const url = await worker(`# the Karmada control plane, from its kubeconfig
controlPlane:
  kubeconfig:
    inline: |
${inline}
members: {mode: karmada, refreshSeconds: 2}
authentication:
  anonymous: { enabled: true } # the demo lets anyone in
`);
    const r = await fetch(`${url}/clusterspaces/member1/api/v1/namespaces`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { kind: string; items: unknown[] };
    expect(body.kind).toBe('NamespaceList');
    expect(body.items.length).toBeGreaterThan(0);

    // a write whose body is YAML goes through the same reader
    const created = await fetch(`${url}/clusterspaces/member1/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  note: |\n    two\n    lines\n  n: "1"\n',
    });
    expect(created.status).toBe(201);
    const cm = (await created.json()) as { data: Record<string, string> };
    expect(cm.data).toEqual({ note: 'two\nlines\n', n: '1' });
  });

  it('answers every request with a 503 Status naming the bad field', async () => {
    const url = await worker(
      `controlPlane: {server: ftp://karmada.example}\nmembers: {mode: static, clusters: [{name: all, server: https://m.example}]}\nauthentication: {anonymous: {enabled: true}}\n`,
    );
    const r = await fetch(`${url}/api/v1/pods`);
    expect(r.status).toBe(503);
    const s = (await r.json()) as { kind: string; message: string };
    expect(s.kind).toBe('Status');
    expect(s.message).toContain('FLEET_CONFIG: controlPlane.server: must be an http(s) URL');
    expect(s.message).toContain('FLEET_CONFIG: members.clusters[0].name: "all" and "karmada" are reserved');
  });

  it('answers with a 503 Status naming the line of a YAML mistake', async () => {
    const url = await worker('controlPlane:\n  server: https://k.example\n  server: https://again.example\n');
    const r = await fetch(`${url}/api/v1/pods`);
    expect(r.status).toBe(503);
    const s = (await r.json()) as { message: string };
    expect(s.message).toContain(
      'FLEET_CONFIG: not valid YAML/JSON: duplicated mapping key at line 3, column 3',
    );
  });
});
