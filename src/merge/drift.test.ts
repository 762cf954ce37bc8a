import { describe, expect, it } from 'vitest';
import { describeDifference, driftOf } from './drift.ts';

const manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    labels: { app: 'web' },
    annotations: { 'resourcebinding.karmada.io/name': 'web-deployment' },
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' }, creationTimestamp: null },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: {} }] },
    },
  },
};

/** The copy as a member stores it: identity, defaults, status, labels of its own. */
function live(): any {
  const l = JSON.parse(JSON.stringify(manifest));
  Object.assign(l.metadata, {
    uid: 'u',
    resourceVersion: '42',
    generation: 3,
    managedFields: [{ manager: 'karmada-controller-manager' }],
    labels: { app: 'web', 'pod-template-hash': 'x' },
    annotations: { ...l.metadata.annotations, 'deployment.kubernetes.io/revision': '1' },
  });
  delete l.spec.template.metadata.creationTimestamp;
  delete l.spec.template.spec.containers[0].resources;
  l.spec.template.spec.containers[0].terminationMessagePath = '/dev/termination-log';
  l.spec.strategy = { type: 'RollingUpdate' };
  l.status = { replicas: 2, readyReplicas: 1 };
  return l;
}

describe('driftOf', () => {
  it('what the member owns is never drift: status, identity, defaults, its own labels, dropped empties', () => {
    expect(driftOf(manifest, live())).toEqual([]);
  });

  it('a field the manifest sets and the member changed is one difference, with its path', () => {
    const l = live();
    l.spec.template.spec.containers[0].image = 'nginx:1.25';
    l.spec.replicas = 5;
    expect(driftOf(manifest, l)).toEqual([
      { path: 'spec.replicas', template: 2, member: 5 },
      { path: 'spec.template.spec.containers[0].image', template: 'nginx:1.27', member: 'nginx:1.25' },
    ]);
  });

  it('labels and annotations the template sets are compared, keys in brackets; removed ones show absent', () => {
    const l = live();
    l.metadata.labels.app = 'other';
    delete l.metadata.annotations['resourcebinding.karmada.io/name'];
    const d = driftOf(manifest, l);
    expect(d).toEqual([
      { path: 'metadata.labels["app"]', template: 'web', member: 'other' },
      {
        path: 'metadata.annotations["resourcebinding.karmada.io/name"]',
        template: 'web-deployment',
        member: undefined,
      },
    ]);
    expect(describeDifference(d[1]!)).toBe(
      'metadata.annotations["resourcebinding.karmada.io/name"]: template "web-deployment", member (absent)',
    );
  });

  it('a list of another length is one difference at the list', () => {
    const l = live();
    l.spec.template.spec.containers.push({ name: 'sidecar', image: 'envoy' });
    expect(driftOf(manifest, l).map((d) => d.path)).toEqual(['spec.template.spec.containers']);
  });

  it('an int-or-string stored the other way is the same value', () => {
    expect(driftOf({ spec: { port: 80 } }, { spec: { port: '80' } })).toEqual([]);
    expect(driftOf({ spec: { port: 80 } }, { spec: { port: 81 } })).toHaveLength(1);
  });
});
