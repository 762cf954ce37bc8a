/**
 * The worker's configuration as an operator uploads it: `FLEET_CONFIG` as JSON, an inline kubeconfig as
 * JSON too, in workerd; invalid ones are answered with a 503 Status naming the field, as the README says.
 * The worker reads no YAML (js-yaml cannot be tree-shaken, wrangler.toml `[alias]`): what the fleet takes
 * as YAML is read as JSON, which is what kubectl, Helm and client-go send, server-side apply's
 * `application/apply-patch+yaml` included; a YAML document is refused with a Status that says so, except
 * through `/clusterspaces/<cluster>`, where the cluster itself reads the body.
 */
import { describe, expect, it } from 'vitest';
import { workerFleetsOverOneMember } from '../helpers/workerfleets.ts';

const fleets = workerFleetsOverOneMember();
const worker = (config: string) => fleets.start(config);

/** the control plane's kubeconfig, as `kubectl config view --raw --minify -o json` writes one */
function kubeconfig(server: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'karmada',
    clusters: [{ name: 'karmada', cluster: { server } }],
    users: [{ name: 'fleet', user: { token: 'fleet-demo-token' } }],
    contexts: [{ name: 'karmada', context: { cluster: 'karmada', user: 'fleet' } }],
  });
}

describe('FLEET_CONFIG in workerd: JSON', () => {
  it('serves a fleet configured in JSON with an inline JSON kubeconfig; JSON bodies under the YAML types', async () => {
    const url = await worker(
      JSON.stringify({
        controlPlane: { kubeconfig: { inline: kubeconfig(fleets.sims.karmadaUrl) } },
        members: { mode: 'karmada', refreshSeconds: 2 },
        authentication: { anonymous: { enabled: true } },
      }),
    );
    const r = await fetch(`${url}/clusterspaces/member1/api/v1/namespaces`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { kind: string; items: unknown[] };
    expect(body.kind).toBe('NamespaceList');
    expect(body.items.length).toBeGreaterThan(0);

    // at the fleet root (plain names: the control plane) the fleet reads write bodies itself: an
    // application/yaml body that is JSON (YAML's superset) is read
    const cms = `${url}/api/v1/namespaces/default/configmaps`;
    const created = await fetch(cms, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'from-yaml' },
        data: { note: 'two\nlines\n', n: '1' },
      }),
    });
    expect(created.status).toBe(201);
    const cm = (await created.json()) as { data: Record<string, string> };
    expect(cm.data).toEqual({ note: 'two\nlines\n', n: '1' });

    // server-side apply as kubectl and Helm send it: application/apply-patch+yaml, a JSON body
    const applied = await fetch(`${cms}/applied?fieldManager=kubectl`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied' },
        data: { a: 'b' },
      }),
    });
    expect([200, 201]).toContain(applied.status);
    expect(((await applied.json()) as { data: Record<string, string> }).data).toEqual({ a: 'b' });

    // a YAML document there is refused with a Status that says why, never forwarded
    const yamlDoc = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-real-yaml\ndata: {a: b}\n';
    const yaml = await fetch(cms, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: yamlDoc,
    });
    expect(yaml.status).toBe(400);
    const refused = (await yaml.json()) as { kind: string; message: string };
    expect(refused.kind).toBe('Status');
    expect(refused.message).toContain('the worker reads JSON only: YAML needs the Node server');

    // through /clusterspaces/<cluster> the body goes to that cluster byte for byte, which reads its YAML
    const direct = await fetch(`${url}/clusterspaces/member1/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: yamlDoc,
    });
    expect(direct.status).toBe(201);
  });

  it('answers every request with a 503 Status naming the bad field', async () => {
    const url = await worker(
      JSON.stringify({
        controlPlane: { server: 'ftp://karmada.example' },
        members: { mode: 'static', clusters: [{ name: 'all', server: 'https://m.example' }] },
        authentication: { anonymous: { enabled: true } },
      }),
    );
    const r = await fetch(`${url}/api/v1/pods`);
    expect(r.status).toBe(503);
    const s = (await r.json()) as { kind: string; message: string };
    expect(s.kind).toBe('Status');
    expect(s.message).toContain('FLEET_CONFIG: controlPlane.server: must be an http(s) URL');
    expect(s.message).toContain('FLEET_CONFIG: members.clusters[0].name: "all" and "karmada" are reserved');
  });

  it('answers a YAML configuration with a 503 Status saying the worker reads JSON', async () => {
    const url = await worker('controlPlane:\n  server: https://k.example\n');
    const r = await fetch(`${url}/api/v1/pods`);
    expect(r.status).toBe(503);
    const s = (await r.json()) as { message: string };
    expect(s.message).toContain('FLEET_CONFIG: not valid JSON: ');
    expect(s.message).toContain('(the worker reads JSON only: YAML needs the Node server)');
  });
});
