/**
 * Just enough of the scheduler, kubelet, Deployment and ReplicaSet controllers for `kubectl rollout
 * status`, `kubectl scale`, `rollout restart` and `describe pod` to behave: pods get scheduled, start and
 * turn Ready; Deployments own ReplicaSets named by pod-template-hash; ReplicaSets own pods; statuses and
 * Events follow. Reconciles run on timers (never inside a store write) and skip no-op writes, so they converge.
 */

import type { KubeObject } from './catalog/types.ts';
import { runInContainer } from './exec.ts';
import type { SimHost } from './host.ts';
import { defaultPodSpec } from './kinds.ts';
import { fnv32a, randomSuffix, safeEncode, stableStringify, timestamp } from './objects.ts';
import { clone, grKey, objectKey, type StoreEvent } from './store.ts';

type Obj = KubeObject & Record<string, any>;

const PODS = grKey('', 'pods');
const NODES = grKey('', 'nodes');
const RS = grKey('apps', 'replicasets');
const DEPLOY = grKey('apps', 'deployments');

const REVISION = 'deployment.kubernetes.io/revision';
const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';

function isController(ref: Record<string, unknown>, uid: string | undefined): boolean {
  return ref['uid'] === uid && ref['controller'] === true;
}

function ownerOf(obj: KubeObject, kind: string): Record<string, unknown> | undefined {
  return obj.metadata.ownerReferences?.find((r) => r['kind'] === kind && r['controller'] === true);
}

export class Controllers {
  private readonly pending = new Map<string, () => void>();
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(private readonly sim: SimHost) {
    this.unsubscribe = sim.store.subscribe('*', (ev) => this.onEvent(ev));
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
  }

  /** Coalesce work per key: many events → one reconcile on the next tick. */
  private enqueue(key: string, fn: () => void, delayMs = 0): void {
    if (this.stopped || this.pending.has(key)) return;
    const cancel = this.sim.timer(() => {
      this.pending.delete(key);
      if (!this.stopped) fn();
    }, delayMs);
    this.pending.set(key, cancel);
  }

  private onEvent(ev: StoreEvent): void {
    // karmada-apiserver runs no scheduler, kubelet or workload controllers
    if (this.sim.options.role === 'karmada') return;
    const o = ev.obj as Obj;
    const ns = o.metadata.namespace;
    const name = o.metadata.name!;
    if (ev.gr === PODS) {
      const live = ev.type !== 'DELETED' && !o.metadata.deletionTimestamp;
      // the default scheduler only takes pods that name it; others wait for their scheduler's Binding
      const ours = (o.spec?.schedulerName ?? 'default-scheduler') === 'default-scheduler';
      if (live && !o.spec?.nodeName && ours) {
        this.enqueue(`schedule:${ev.key}`, () => this.schedule(ns!, name));
      } else if (live && o.spec?.nodeName && o.status?.phase === 'Pending' && !o.status?.containerStatuses) {
        // bound by someone else (a Binding, or nodeName set at create): the kubelet starts it
        this.enqueue(`start:${ev.key}`, () => this.start(ns!, name), this.sim.options.podReadyDelayMs);
      }
      if (live && o.status?.phase === 'Running' && pendingEphemeral(o).length)
        this.enqueue(`ephemeral:${ev.key}`, () => this.startEphemeral(ns!, name));
      const rs = ownerOf(o, 'ReplicaSet');
      if (rs) this.enqueue(`rs:${ns}/${rs['name']}`, () => this.reconcileReplicaSet(ns!, String(rs['name'])));
    } else if (ev.gr === RS) {
      if (ev.type !== 'DELETED') this.enqueue(`rs:${ev.key}`, () => this.reconcileReplicaSet(ns!, name));
      const d = ownerOf(o, 'Deployment');
      if (d)
        this.enqueue(`deploy:${ns}/${d['name']}`, () => this.reconcileDeployment(ns!, String(d['name'])));
    } else if (ev.gr === DEPLOY && ev.type !== 'DELETED') {
      // status-only writes (ours) need no reconcile unless the spec moved
      if (
        ev.type === 'ADDED' ||
        ev.prev?.metadata.generation !== o.metadata.generation ||
        !o.status?.observedGeneration
      ) {
        this.enqueue(`deploy:${ev.key}`, () => this.reconcileDeployment(ns!, name));
      }
    }
  }

  // ------------------------------------------------------------------------------------------ scheduler + kubelet

  private nodeNames(): string[] {
    const names = this.sim.store.snapshot(NODES).map((e) => e.obj.metadata.name!);
    return names.length ? names : [`${this.sim.name}-control-plane`];
  }

  private schedule(ns: string, name: string): void {
    const pod = this.sim.store.get(PODS, objectKey(ns, name)) as Obj | undefined;
    if (!pod || pod.spec?.nodeName || pod.metadata.deletionTimestamp) return;
    const nodes = this.nodeNames();
    const node = nodes[fnv32a(`${ns}/${name}`) % nodes.length]!;
    const now = timestamp(this.sim.clock());
    pod.spec = { ...(pod.spec ?? {}), nodeName: node };
    pod.status = {
      ...(pod.status ?? {}),
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now }],
    };
    const scheduled = this.sim.store.put(PODS, objectKey(ns, name), pod);
    this.sim.recordEvent(
      scheduled,
      'Scheduled',
      `Successfully assigned ${ns}/${name} to ${node}`,
      'default-scheduler',
    );
    this.enqueue(`start:${ns}/${name}`, () => this.start(ns, name), this.sim.options.podReadyDelayMs);
  }

  private start(ns: string, name: string): void {
    const pod = this.sim.store.get(PODS, objectKey(ns, name)) as Obj | undefined;
    if (!pod || pod.metadata.deletionTimestamp || pod.status?.phase !== 'Pending') return;
    const node: string = pod.spec?.nodeName ?? this.nodeNames()[0]!;
    const now = timestamp(this.sim.clock());
    const n = fnv32a(`${this.sim.name}/${ns}/${name}`);
    const hostIP = `172.18.0.${(fnv32a(node) % 200) + 2}`;
    const podIP = `10.244.${(n >>> 8) % 250}.${(n % 250) + 2}`;
    const containers: any[] = pod.spec?.containers ?? [];
    const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
    pod.status = {
      phase: 'Running',
      conditions: [
        cond('PodReadyToStartContainers'),
        cond('Initialized'),
        cond('Ready'),
        cond('ContainersReady'),
        (pod.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled') ?? cond('PodScheduled'),
      ],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: now,
      containerStatuses: containers.map((c) => {
        const image: string = c.image ?? 'unknown';
        const ref = image.includes('/') ? image : `docker.io/library/${image}`;
        const digest = [...stableStringify(image)].reduce(
          (h, ch) => Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0,
          2166136261,
        );
        return {
          name: c.name,
          state: { running: { startedAt: now } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: ref.includes(':') ? ref : `${ref}:latest`,
          imageID: `${ref.split(':')[0]}@sha256:${digest.toString(16).padStart(8, '0').repeat(8)}`,
          containerID: `containerd://${crypto.randomUUID().replace(/-/g, '')}${crypto.randomUUID().replace(/-/g, '')}`,
          started: true,
        };
      }),
      qosClass: pod.status?.qosClass ?? 'BestEffort',
    };
    const running = this.sim.store.put(PODS, objectKey(ns, name), pod);
    for (const c of containers) {
      this.sim.recordEvent(
        running,
        'Pulled',
        `Container image "${c.image}" already present on machine`,
        'kubelet',
        'Normal',
        node,
      );
      this.sim.recordEvent(running, 'Created', `Created container: ${c.name}`, 'kubelet', 'Normal', node);
      this.sim.recordEvent(running, 'Started', `Started container ${c.name}`, 'kubelet', 'Normal', node);
    }
    this.sim.ensureLogs(running);
  }

  /**
   * The kubelet starts an ephemeral container it has no status for (kubectl debug adds one): running at
   * once, its command run in the simulated shell with its output in the container's log, then terminated
   * with the command's exit code, as a container whose process ends.
   */
  private startEphemeral(ns: string, name: string): void {
    const pod = this.sim.store.get(PODS, objectKey(ns, name)) as Obj | undefined;
    if (!pod || pod.metadata.deletionTimestamp) return;
    const fresh = pendingEphemeral(pod);
    if (!fresh.length) return;
    const now = timestamp(this.sim.clock());
    const next = clone(pod) as Obj;
    next.status.ephemeralContainerStatuses = [
      ...(pod.status?.ephemeralContainerStatuses ?? []),
      ...fresh.map((c) => ephemeralStatus(c, { running: { startedAt: now } })),
    ];
    const running = this.sim.store.put(PODS, objectKey(ns, name), next) as Obj;
    for (const c of fresh) {
      this.sim.recordEvent(
        running,
        'Started',
        `Started container ${c.name}`,
        'kubelet',
        'Normal',
        pod.spec?.nodeName,
      );
      // an interactive container (kubectl debug -i) waits for its attached session; others just run
      if (c.stdin) continue;
      void runInContainer(this.sim, running, c).then((code) => this.endEphemeral(ns, name, c.name, code));
    }
  }

  private endEphemeral(ns: string, name: string, container: string, exitCode: number): void {
    const pod = this.sim.store.get(PODS, objectKey(ns, name)) as Obj | undefined;
    if (!pod || this.stopped) return;
    const next = clone(pod) as Obj;
    const now = timestamp(this.sim.clock());
    next.status.ephemeralContainerStatuses = (pod.status?.ephemeralContainerStatuses ?? []).map((st: any) =>
      st.name !== container
        ? st
        : {
            ...st,
            ready: false,
            state: {
              terminated: {
                exitCode,
                reason: exitCode === 0 ? 'Completed' : 'Error',
                startedAt: st.state?.running?.startedAt ?? now,
                finishedAt: now,
                containerID: st.containerID,
              },
            },
          },
    );
    this.sim.store.put(PODS, objectKey(ns, name), next);
  }

  // ------------------------------------------------------------------------------------------ ReplicaSet

  private reconcileReplicaSet(ns: string, name: string): void {
    const rs = this.sim.store.get(RS, objectKey(ns, name)) as Obj | undefined;
    if (!rs || rs.metadata.deletionTimestamp) return;
    const pods = this.sim.store
      .snapshot(PODS, undefined, ns)
      .map((e) => e.obj as Obj)
      .filter((p) => (p.metadata.ownerReferences ?? []).some((r) => isController(r, rs.metadata.uid)));
    const want: number = rs.spec?.replicas ?? 1;
    if (pods.length < want) {
      for (let i = pods.length; i < want; i++) this.createPod(rs);
      return; // the pods' events bring us back for status
    }
    if (pods.length > want) {
      // newest first, like the controller's ranking of not-ready/young pods
      const victims = [...pods]
        .sort((a, b) =>
          String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
        )
        .slice(0, pods.length - want);
      for (const v of victims) {
        this.sim.deleteObject(PODS, v, 'Background');
        this.sim.recordEvent(
          rs,
          'SuccessfulDelete',
          `Deleted pod: ${v.metadata.name}`,
          'replicaset-controller',
        );
      }
      return;
    }
    const ready = pods.filter((p) =>
      p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    const status: Record<string, unknown> = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.length,
      ...(ready ? { readyReplicas: ready, availableReplicas: ready } : {}),
      observedGeneration: rs.metadata.generation ?? 1,
    };
    if (stableStringify(status) !== stableStringify(rs.status ?? {})) {
      rs.status = status;
      this.sim.store.put(RS, objectKey(ns, name), rs);
    }
  }

  private createPod(rs: Obj): void {
    const tpl = clone(rs.spec?.template ?? {}) as Obj;
    const ns = rs.metadata.namespace!;
    const name = `${rs.metadata.name}-${randomSuffix(5)}`;
    const spec = tpl.spec ?? { containers: [] };
    defaultPodSpec(spec);
    spec.serviceAccountName ??= 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        generateName: `${rs.metadata.name}-`,
        namespace: ns,
        labels: { ...(tpl.metadata?.labels ?? {}) },
        ...(tpl.metadata?.annotations ? { annotations: { ...tpl.metadata.annotations } } : {}),
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: rs.metadata.name,
            uid: rs.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec,
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    };
    const created = this.sim.create({ group: '', version: 'v1', resource: 'pods' }, pod);
    this.sim.recordEvent(
      rs,
      'SuccessfulCreate',
      `Created pod: ${created.metadata.name}`,
      'replicaset-controller',
    );
  }

  // ------------------------------------------------------------------------------------------ Deployment

  private reconcileDeployment(ns: string, name: string): void {
    const d = this.sim.store.get(DEPLOY, objectKey(ns, name)) as Obj | undefined;
    if (!d || d.metadata.deletionTimestamp || d.spec?.paused) return;
    const template = d.spec?.template ?? {};
    const hash = safeEncode(String(fnv32a(stableStringify(template))));
    const owned = this.sim.store
      .snapshot(RS, undefined, ns)
      .map((e) => e.obj as Obj)
      .filter((r) => (r.metadata.ownerReferences ?? []).some((ref) => isController(ref, d.metadata.uid)));
    const want: number = d.spec?.replicas ?? 1;
    // the current ReplicaSet is the one whose template equals the Deployment's (minus pod-template-hash)
    const sameTemplate = (r: Obj) => {
      const t = clone(r.spec?.template ?? {}) as Obj;
      if (t.metadata?.labels) delete t.metadata.labels['pod-template-hash'];
      return stableStringify(t) === stableStringify(template);
    };
    let current =
      owned.find(sameTemplate) ?? owned.find((r) => r.metadata.labels?.['pod-template-hash'] === hash);
    const revisions = owned.map((r) => Number(r.metadata.annotations?.[REVISION] ?? 0));
    const maxRevision = revisions.length ? Math.max(...revisions) : 0;
    if (!current) {
      const rsName = `${name}-${hash}`;
      const tpl = clone(template) as Obj;
      tpl.metadata = {
        ...(tpl.metadata ?? {}),
        labels: { ...(tpl.metadata?.labels ?? {}), 'pod-template-hash': hash },
      };
      const rs: KubeObject = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: rsName,
          namespace: ns,
          labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash },
          annotations: {
            'deployment.kubernetes.io/desired-replicas': String(want),
            'deployment.kubernetes.io/max-replicas': String(want + Math.ceil(want / 4)),
            [REVISION]: String(maxRevision + 1),
          },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name,
              uid: d.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
          generation: 1,
        },
        spec: {
          replicas: want,
          selector: {
            ...(d.spec?.selector ?? {}),
            matchLabels: { ...(d.spec?.selector?.matchLabels ?? {}), 'pod-template-hash': hash },
          },
          template: tpl,
        },
        status: { replicas: 0 },
      };
      current = this.sim.create({ group: 'apps', version: 'v1', resource: 'replicasets' }, rs) as Obj;
      this.sim.recordEvent(
        d,
        'ScalingReplicaSet',
        `Scaled up replica set ${rsName} from 0 to ${want}`,
        'deployment-controller',
      );
    } else if (current.spec?.replicas !== want) {
      const from = current.spec?.replicas;
      current.spec = { ...current.spec, replicas: want };
      current.metadata.generation = (current.metadata.generation ?? 1) + 1;
      current.metadata.annotations = {
        ...(current.metadata.annotations ?? {}),
        'deployment.kubernetes.io/desired-replicas': String(want),
      };
      current = this.sim.store.put(RS, objectKey(ns, current.metadata.name!), current) as Obj;
      this.sim.recordEvent(
        d,
        'ScalingReplicaSet',
        `Scaled ${want > (from ?? 0) ? 'up' : 'down'} replica set ${current.metadata.name} from ${from} to ${want}`,
        'deployment-controller',
      );
    }
    // an older ReplicaSet the template is back to (a rollback) becomes the newest revision, its old number
    // kept in revision-history, as kube-controller-manager's deployment controller does
    const currentRevision = Number(current.metadata.annotations?.[REVISION] ?? 0);
    if (currentRevision < maxRevision) {
      const history = current.metadata.annotations?.[REVISION_HISTORY];
      current.metadata.annotations = {
        ...(current.metadata.annotations ?? {}),
        [REVISION]: String(maxRevision + 1),
        [REVISION_HISTORY]: history ? `${history},${currentRevision}` : String(currentRevision),
      };
      current = this.sim.store.put(RS, objectKey(ns, current.metadata.name!), current) as Obj;
    }
    for (const old of owned) {
      if (old.metadata.name === current.metadata.name || old.spec?.replicas === 0) continue;
      const from = old.spec?.replicas;
      old.spec = { ...old.spec, replicas: 0 };
      old.metadata.generation = (old.metadata.generation ?? 1) + 1;
      this.sim.store.put(RS, objectKey(ns, old.metadata.name!), old);
      this.sim.recordEvent(
        d,
        'ScalingReplicaSet',
        `Scaled down replica set ${old.metadata.name} from ${from} to 0`,
        'deployment-controller',
      );
    }
    this.updateDeploymentStatus(d, current, owned);
  }

  private updateDeploymentStatus(d: Obj, current: Obj, owned: Obj[]): void {
    const ns = d.metadata.namespace!;
    const all = [current, ...owned.filter((o) => o.metadata.name !== current.metadata.name)].map(
      (r) => (this.sim.store.get(RS, objectKey(ns, r.metadata.name!)) as Obj | undefined) ?? r,
    );
    const sum = (f: (r: Obj) => number) => all.reduce((n, r) => n + f(r), 0);
    const cur = all[0]!;
    const want: number = d.spec?.replicas ?? 1;
    const replicas = sum((r) => r.status?.replicas ?? 0);
    const updated = cur.status?.replicas ?? 0;
    const ready = sum((r) => r.status?.readyReplicas ?? 0);
    const available = sum((r) => r.status?.availableReplicas ?? 0);
    const now = timestamp(this.sim.clock());
    const complete = updated === want && replicas === want && available === want;
    const prevConds: any[] = d.status?.conditions ?? [];
    const cond = (type: string, status: string, reason: string, message: string) => {
      const prev = prevConds.find((c) => c.type === type);
      const same = prev && prev.status === status;
      return {
        type,
        status,
        lastUpdateTime: prev && prev.reason === reason ? prev.lastUpdateTime : now,
        lastTransitionTime: same ? prev.lastTransitionTime : now,
        reason,
        message,
      };
    };
    const status: Record<string, unknown> = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas,
      updatedReplicas: updated,
      ...(ready ? { readyReplicas: ready } : {}),
      ...(available ? { availableReplicas: available } : {}),
      ...(replicas - available > 0 ? { unavailableReplicas: replicas - available } : {}),
      conditions: [
        available >= want
          ? cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
          : cond(
              'Available',
              'False',
              'MinimumReplicasUnavailable',
              'Deployment does not have minimum availability.',
            ),
        complete
          ? cond(
              'Progressing',
              'True',
              'NewReplicaSetAvailable',
              `ReplicaSet "${cur.metadata.name}" has successfully progressed.`,
            )
          : cond(
              'Progressing',
              'True',
              'ReplicaSetUpdated',
              `ReplicaSet "${cur.metadata.name}" is progressing.`,
            ),
      ],
    };
    const latest = this.sim.store.get(DEPLOY, objectKey(ns, d.metadata.name!)) as Obj | undefined;
    if (!latest) return;
    // the Deployment carries its current ReplicaSet's revision (kubectl rollout history/undo read it)
    const revision = cur.metadata.annotations?.[REVISION];
    if (revision !== undefined && latest.metadata.annotations?.[REVISION] !== revision) {
      latest.metadata.annotations = { ...(latest.metadata.annotations ?? {}), [REVISION]: revision };
      latest.status = status;
      this.sim.store.put(DEPLOY, objectKey(ns, d.metadata.name!), latest);
      return;
    }
    const strip = (s: any) =>
      stableStringify({
        ...s,
        conditions: (s?.conditions ?? []).map((c: any) => ({
          ...c,
          lastUpdateTime: 0,
          lastTransitionTime: 0,
        })),
      });
    if (strip(status) === strip(latest.status ?? {})) return;
    latest.status = status;
    this.sim.store.put(DEPLOY, objectKey(ns, d.metadata.name!), latest);
  }
}

/** Ephemeral containers of the pod the kubelet has not started yet (no status entry). */
function pendingEphemeral(pod: Obj): any[] {
  const known = new Set((pod.status?.ephemeralContainerStatuses ?? []).map((s: any) => s.name));
  return (pod.spec?.ephemeralContainers ?? []).filter((c: any) => !known.has(c.name));
}

function ephemeralStatus(c: any, state: Record<string, unknown>): Record<string, unknown> {
  const image: string = c.image ?? 'unknown';
  const ref = image.includes('/') ? image : `docker.io/library/${image}`;
  return {
    name: c.name,
    state,
    lastState: {},
    ready: false,
    restartCount: 0,
    image: ref.includes(':') ? ref : `${ref}:latest`,
    imageID: `${ref.split(':')[0]}@sha256:${'0'.repeat(64)}`,
    containerID: `containerd://${crypto.randomUUID().replace(/-/g, '')}`,
  };
}
