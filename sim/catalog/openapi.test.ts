import { describe, expect, it } from 'vitest';
import { buildCatalog } from './index.ts';
import { OpenApi, schemaName } from './openapi.ts';
import { resourceTable } from './resources.ts';

const member = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.35.0' });

function refs(doc: unknown, out: string[] = []): string[] {
  if (Array.isArray(doc)) for (const d of doc) refs(d, out);
  else if (doc && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      if (k === '$ref') out.push(v as string);
      else refs(v, out);
    }
  }
  return out;
}

describe('openapi v3 root', () => {
  it('lists every group-version with a content hash', () => {
    const root = member.openapiV3Root() as { paths: Record<string, { serverRelativeURL: string }> };
    for (const p of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/batch/v1', 'version']) {
      expect(root.paths[p]?.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${p}\\?hash=[0-9A-F]{64}$`));
    }
    expect(root.paths['apis/cluster.karmada.io/v1alpha1']).toBeUndefined();
  });

  it('hashes are stable across catalogs with the same content', () => {
    const again = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.35.0' });
    expect(again.openapiV3Root()).toEqual(member.openapiV3Root());
    const karmada = buildCatalog({
      role: 'karmada',
      crds: true,
      kubernetesVersion: 'v1.35.0',
    }).openapiV3Root() as any;
    const m = member.openapiV3Root() as any;
    expect(karmada.paths['apis/apps/v1']).toEqual(m.paths['apis/apps/v1']);
    expect(karmada.paths['apis/cluster.karmada.io/v1alpha1']).toBeDefined();
    expect(karmada.paths['apis/example.fleet.io/v1']).toBeDefined();
  });

  it('a hash changes when its document changes', () => {
    const all = resourceTable({ role: 'member', crds: false });
    const fewer = all.filter((r) => !(r.group === 'apps' && r.resource === 'statefulsets'));
    const a = new OpenApi(all);
    const b = new OpenApi(fewer);
    expect(a.hash('apis/apps/v1')).not.toBe(b.hash('apis/apps/v1'));
    expect(a.hash('apis/batch/v1')).toBe(b.hash('apis/batch/v1'));
    expect(a.hash('api/v1')).toBe(b.hash('api/v1'));
  });
});

describe('openapi v3 documents', () => {
  it('404s for unknown paths', () => {
    expect(member.openapiV3('apis/nope/v1')).toBeUndefined();
    expect(member.openapiV3('apis/apps/v1beta1')).toBeUndefined();
  });

  it('every kind has its GVK, every $ref resolves, every PATCH takes fieldValidation', () => {
    const root = member.openapiV3Root() as { paths: Record<string, unknown> };
    for (const path of Object.keys(root.paths)) {
      const doc = member.openapiV3(path) as any;
      expect(doc.openapi).toBe('3.0.0');
      const schemas = doc.components.schemas as Record<string, any>;
      for (const r of refs(doc))
        expect(schemas[r.replace('#/components/schemas/', '')], `${path}: ${r}`).toBeDefined();
      const parts = path.split('/');
      if (!(parts[0] === 'api' && parts.length === 2) && !(parts[0] === 'apis' && parts.length === 3))
        continue;
      const [group, version] = parts[0] === 'api' ? ['', parts[1]!] : [parts[1]!, parts[2]!];
      const defs = member.resources.filter((r) => r.group === group && r.version === version);
      for (const d of defs) {
        const s = schemas[schemaName(d.group, d.version, d.kind)];
        expect(s, `${path} ${d.kind}`).toBeDefined();
        expect(s['x-kubernetes-group-version-kind']).toContainEqual({ group, version, kind: d.kind });
        expect(s.description).toBeTruthy();
        if (d.verbs.includes('patch')) {
          const ops = Object.values(doc.paths as Record<string, any>).filter(
            (p) => p.patch?.['x-kubernetes-group-version-kind']?.kind === d.kind,
          );
          expect(ops.length, `${d.kind} patch`).toBeGreaterThan(0);
          expect(ops[0].patch.parameters.map((p: any) => p.name)).toContain('fieldValidation');
        }
      }
    }
  });

  it('describes deployment.spec.replicas and ObjectMeta like kubectl explain needs', () => {
    const doc = member.openapiV3('apis/apps/v1') as any;
    const deployment = doc.components.schemas['io.k8s.api.apps.v1.Deployment'];
    expect(deployment.properties.spec.allOf[0].$ref).toBe(
      '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec',
    );
    const replicas = doc.components.schemas['io.k8s.api.apps.v1.DeploymentSpec'].properties.replicas;
    expect(replicas).toMatchObject({ type: 'integer', format: 'int32' });
    expect(replicas.description).toMatch(/Number of desired pods/);
    const meta = doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'];
    for (const f of [
      'name',
      'namespace',
      'labels',
      'annotations',
      'uid',
      'resourceVersion',
      'ownerReferences',
    ]) {
      expect(meta.properties[f]?.description, f).toBeTruthy();
    }
    const container = doc.components.schemas['io.k8s.api.core.v1.Container'];
    expect(container.properties.image.type).toBe('string');
    expect(container.properties.ports.items.allOf ?? container.properties.ports.items.$ref).toBeTruthy();
  });

  it('covers Pod, Service, ConfigMap, Secret, Namespace in api/v1 and Job in batch/v1 in full', () => {
    const core = (member.openapiV3('api/v1') as any).components.schemas;
    for (const k of ['Pod', 'Service', 'ConfigMap', 'Secret', 'Namespace']) {
      const s = core[`io.k8s.api.core.v1.${k}`];
      expect(s['x-kubernetes-preserve-unknown-fields'], k).toBeUndefined();
      expect(Object.keys(s.properties)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata']));
    }
    expect(core['io.k8s.api.core.v1.PodSpec'].properties.containers.type).toBe('array');
    const batch = (member.openapiV3('apis/batch/v1') as any).components.schemas;
    expect(batch['io.k8s.api.batch.v1.JobSpec'].properties.backoffLimit.type).toBe('integer');
    // other kinds are permissive so validation never rejects a valid manifest
    expect(batch['io.k8s.api.batch.v1.CronJob']['x-kubernetes-preserve-unknown-fields']).toBe(true);
  });
});

describe('openapi v2', () => {
  it('is a Swagger 2.0 document whose refs resolve', () => {
    const doc = member.openapiV2() as any;
    expect(doc.swagger).toBe('2.0');
    for (const r of refs(doc)) expect(doc.definitions[r.replace('#/definitions/', '')], r).toBeDefined();
    expect(doc.definitions['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    expect(doc.definitions['io.k8s.api.apps.v1.Deployment'].properties.spec.$ref).toBe(
      '#/definitions/io.k8s.api.apps.v1.DeploymentSpec',
    );
    const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(patch.parameters.map((p: any) => p.name)).toContain('fieldValidation');
  });
});
