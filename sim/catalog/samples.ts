/**
 * The objects a simulated cluster starts with: a small, realistic, deterministic fleet.
 *
 * Every member has the usual namespaces, two nodes named after it, CoreDNS, kube-proxy, a
 * Prometheus StatefulSet, a finished Job, a CronJob, Services with Endpoints, ConfigMaps (kube-root-ca.crt
 * everywhere, `app-config` in default everywhere), Secrets and Events. Some names exist in several
 * clusters on purpose (deployment shop/web on member1 and member2 with different replica counts) and
 * some in one only (shop/api on member3). The karmada control plane holds the workload templates and
 * their PropagationPolicies, no pods or nodes. Output depends only on the cluster name and options.
 */
import { seededRandom, sha256Hex } from './hash.ts';
import type { CatalogOptions, KubeObject } from './types.ts';

export interface SampleObject {
  group: string;
  version: string;
  resource: string;
  object: KubeObject;
}

type Obj = Record<string, any>;

/**
 * All sample timestamps are offsets from this instant: midnight UTC 40 days before the process started, so
 * the demo's AGE columns read like a cluster built weeks ago (not years), and every call within a day
 * gives the same objects.
 */
const DAY = 86_400_000;
// 40½ days before the process started: every sample's age (creation times are a few hours into that
// first day) reads the same whatever the time of day (a day boundary made kubectl's AGE flip 40d/39d)
export const SAMPLE_EPOCH = Date.now() - 40 * DAY - DAY / 2;

function ts(offsetSeconds: number): string {
  return new Date(SAMPLE_EPOCH + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A cluster's number: its trailing digits (member3 → 3), else a stable small number from its name. */
export function clusterNumber(cluster: string): number {
  const m = /(\d+)$/.exec(cluster);
  if (m) return Number(m[1]) % 200;
  return (Number.parseInt(sha256Hex(cluster).slice(0, 4), 16) % 150) + 50;
}

function uid(cluster: string, kind: string, ns: string, name: string): string {
  const h = sha256Hex(`${cluster}/${kind}/${ns}/${name}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Number.parseInt(h[16]!, 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// the alphabet of k8s.io/apimachinery/pkg/util/rand.SafeEncodeString
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
function safeString(seed: string, n: number): string {
  const h = sha256Hex(seed);
  let s = '';
  for (let i = 0; i < n; i++) s += SAFE[Number.parseInt(h.slice(i * 2, i * 2 + 2), 16) % SAFE.length];
  return s;
}

const FAKE_CA =
  '-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIFleetSimCAwDQYJKoZIhvcNAQELBQAwFTETMBEGA1UEAxMK\na3ViZXJuZXRlczAeFw0yNTA2MDEwODAwMDBaFw0zNTA1MzAwODAwMDBaMBUxEzAR\nBgNVBAMTCmt1YmVybmV0ZXMwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIB\n-----END CERTIFICATE-----\n';

class Builder {
  readonly out: SampleObject[] = [];
  constructor(
    readonly cluster: string,
    readonly opts: CatalogOptions,
  ) {}

  add(
    group: string,
    version: string,
    resource: string,
    kind: string,
    ns: string | undefined,
    name: string,
    createdAt: number,
    body: Obj,
    extraMeta: Obj = {},
  ): KubeObject {
    const metadata: Obj = { name };
    if (ns) metadata.namespace = ns;
    metadata.uid = uid(this.cluster, kind, ns ?? '', name);
    if (extraMeta.generation !== undefined) metadata.generation = extraMeta.generation;
    metadata.creationTimestamp = ts(createdAt);
    for (const [k, v] of Object.entries(extraMeta)) if (k !== 'generation') metadata[k] = v;
    const object = {
      apiVersion: group ? `${group}/${version}` : version,
      kind,
      metadata,
      ...body,
    } as KubeObject;
    this.out.push({ group, version, resource, object });
    return object;
  }

  ownerRef(o: KubeObject, controller = true): Obj {
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      uid: o.metadata.uid,
      controller,
      blockOwnerDeletion: true,
    };
  }
}

interface Workload {
  ns: string;
  name: string;
  replicas: number;
  image: string;
  port?: number;
  labels: Record<string, string>;
  createdAt: number;
  onControlPlane?: boolean;
}

function container(w: { name: string; image: string; port?: number }): Obj {
  const c: Obj = {
    name: w.name,
    image: w.image,
    imagePullPolicy: 'IfNotPresent',
    resources: { requests: { cpu: '100m', memory: '64Mi' } },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
  if (w.port) c.ports = [{ containerPort: w.port, name: 'http', protocol: 'TCP' }];
  return c;
}

function podSpecFor(containers: Obj[]): Obj {
  return {
    containers,
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  };
}

function member(b: Builder): void {
  const { cluster, opts } = b;
  const n = clusterNumber(cluster);
  const rng = seededRandom(cluster);
  const kubeVersion = opts.kubernetesVersion.startsWith('v')
    ? opts.kubernetesVersion
    : `v${opts.kubernetesVersion}`;

  // ------------------------------------------------------------------ namespaces, CA, service accounts
  const namespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'shop', 'monitoring'];
  namespaces.forEach((ns, i) => {
    const created = ns.startsWith('kube') || ns === 'default' ? 0 : 3600 + i * 60;
    b.add(
      '',
      'v1',
      'namespaces',
      'Namespace',
      undefined,
      ns,
      created,
      {
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      },
      { labels: { 'kubernetes.io/metadata.name': ns } },
    );
    b.add(
      '',
      'v1',
      'configmaps',
      'ConfigMap',
      ns,
      'kube-root-ca.crt',
      created + 5,
      { data: { 'ca.crt': FAKE_CA } },
      {
        annotations: {
          'kubernetes.io/description':
            'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
        },
      },
    );
    b.add('', 'v1', 'serviceaccounts', 'ServiceAccount', ns, 'default', created + 5, {});
  });

  // --------------------------------------------------------------------------------------- nodes
  const nodes = [`${cluster}-control-plane`, `${cluster}-worker`];
  const nodeIP = (i: number) => `172.18.${n}.${i + 2}`;
  nodes.forEach((node, i) => {
    const labels: Record<string, string> = {
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': node,
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/region': `region-${n}`,
    };
    if (i === 0) {
      labels['node-role.kubernetes.io/control-plane'] = '';
      labels['node.kubernetes.io/exclude-from-external-load-balancers'] = '';
    }
    const heartbeat = ts(86400 * 30);
    const cond = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      lastHeartbeatTime: heartbeat,
      lastTransitionTime: ts(20 + i * 10),
      reason,
      message,
    });
    b.add(
      '',
      'v1',
      'nodes',
      'Node',
      undefined,
      node,
      i * 10,
      {
        spec: {
          podCIDR: `10.${10 + n}.${i}.0/24`,
          podCIDRs: [`10.${10 + n}.${i}.0/24`],
          providerID: `kind://docker/${cluster}/${node}`,
          ...(i === 0
            ? { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }
            : {}),
        },
        status: {
          addresses: [
            { type: 'InternalIP', address: nodeIP(i) },
            { type: 'Hostname', address: node },
          ],
          allocatable: { cpu: '8', 'ephemeral-storage': '102175312Ki', memory: '16265584Ki', pods: '110' },
          capacity: { cpu: '8', 'ephemeral-storage': '102175312Ki', memory: '16265584Ki', pods: '110' },
          conditions: [
            cond(
              'MemoryPressure',
              'False',
              'KubeletHasSufficientMemory',
              'kubelet has sufficient memory available',
            ),
            cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
            cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
            cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
          ],
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: {
            architecture: 'amd64',
            bootID: uid(cluster, 'boot', '', node),
            containerRuntimeVersion: 'containerd://2.1.3',
            kernelVersion: '6.8.0-1031-azure',
            kubeProxyVersion: kubeVersion,
            kubeletVersion: kubeVersion,
            machineID: sha256Hex(`machine/${node}`).slice(0, 32),
            operatingSystem: 'linux',
            osImage: 'Debian GNU/Linux 12 (bookworm)',
            systemUUID: uid(cluster, 'system', '', node),
          },
        },
      },
      {
        labels,
        annotations: {
          'node.alpha.kubernetes.io/ttl': '0',
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
      },
    );
  });

  // ----------------------------------------------------------------------------------- workloads
  let podSeq = 0;
  const podIP = (node: number) => `10.${10 + n}.${node}.${10 + podSeq++}`;
  const runningPod = (
    ns: string,
    name: string,
    labels: Record<string, string>,
    spec: Obj,
    owner: Obj,
    createdAt: number,
    node: number,
    restarts = 0,
  ) => {
    const started = ts(createdAt + 4);
    const ip = podIP(node);
    const containerStatuses = (spec.containers as Obj[]).map((c) => {
      const s: Obj = {
        name: c.name,
        image: c.image,
        imageID: `${c.image.split(':')[0]}@sha256:${sha256Hex(c.image)}`,
        containerID: `containerd://${sha256Hex(`${cluster}/${ns}/${name}/${c.name}`)}`,
        ready: true,
        started: true,
        restartCount: restarts,
        state: { running: { startedAt: started } },
        lastState: {},
      };
      if (restarts > 0) {
        s.lastState = {
          terminated: {
            exitCode: 137,
            reason: 'OOMKilled',
            startedAt: ts(createdAt + 4),
            finishedAt: ts(createdAt + 86400),
            containerID: `containerd://${sha256Hex(`${cluster}/${ns}/${name}/${c.name}/prev`)}`,
          },
        };
      }
      return s;
    });
    const cond = (type: string) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: started,
    });
    return b.add(
      '',
      'v1',
      'pods',
      'Pod',
      ns,
      name,
      createdAt,
      {
        spec: { ...spec, nodeName: nodes[node], serviceAccountName: 'default', serviceAccount: 'default' },
        status: {
          phase: 'Running',
          conditions: [
            cond('PodReadyToStartContainers'),
            cond('Initialized'),
            cond('Ready'),
            cond('ContainersReady'),
            cond('PodScheduled'),
          ],
          hostIP: nodeIP(node),
          hostIPs: [{ ip: nodeIP(node) }],
          podIP: ip,
          podIPs: [{ ip }],
          qosClass: 'Burstable',
          startTime: ts(createdAt + 1),
          containerStatuses,
        },
      },
      { labels, ownerReferences: [owner] },
    );
  };

  const events: Array<{
    ns: string;
    obj: KubeObject;
    reason: string;
    message: string;
    type?: string;
    at: number;
    component: string;
    host?: string;
    fieldPath?: string;
  }> = [];

  const deployment = (w: Workload) => {
    const template = {
      metadata: { labels: { ...w.labels } },
      spec: podSpecFor([container({ name: w.name, image: w.image, port: w.port })]),
    };
    const dep = b.add(
      'apps',
      'v1',
      'deployments',
      'Deployment',
      w.ns,
      w.name,
      w.createdAt,
      {
        spec: {
          replicas: w.replicas,
          selector: { matchLabels: { ...w.labels } },
          template,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
        status: {
          observedGeneration: 1,
          replicas: w.replicas,
          updatedReplicas: w.replicas,
          readyReplicas: w.replicas,
          availableReplicas: w.replicas,
          conditions: [
            {
              type: 'Available',
              status: 'True',
              lastUpdateTime: ts(w.createdAt + 10),
              lastTransitionTime: ts(w.createdAt + 10),
              reason: 'MinimumReplicasAvailable',
              message: 'Deployment has minimum availability.',
            },
            {
              type: 'Progressing',
              status: 'True',
              lastUpdateTime: ts(w.createdAt + 10),
              lastTransitionTime: ts(w.createdAt),
              reason: 'NewReplicaSetAvailable',
              message: `ReplicaSet "${w.name}-${safeString(`${w.name}`, 10)}" has successfully progressed.`,
            },
          ],
        },
      },
      { generation: 1, labels: { ...w.labels }, annotations: { 'deployment.kubernetes.io/revision': '1' } },
    );
    const hash = safeString(`${w.name}`, 10);
    const rsName = `${w.name}-${hash}`;
    const rsLabels = { ...w.labels, 'pod-template-hash': hash };
    const rs = b.add(
      'apps',
      'v1',
      'replicasets',
      'ReplicaSet',
      w.ns,
      rsName,
      w.createdAt,
      {
        spec: {
          replicas: w.replicas,
          selector: { matchLabels: rsLabels },
          template: { metadata: { labels: rsLabels }, spec: template.spec },
        },
        status: {
          replicas: w.replicas,
          fullyLabeledReplicas: w.replicas,
          readyReplicas: w.replicas,
          availableReplicas: w.replicas,
          observedGeneration: 1,
        },
      },
      {
        generation: 1,
        labels: rsLabels,
        annotations: {
          'deployment.kubernetes.io/desired-replicas': String(w.replicas),
          'deployment.kubernetes.io/max-replicas': String(w.replicas + Math.ceil(w.replicas / 4)),
          'deployment.kubernetes.io/revision': '1',
        },
        ownerReferences: [b.ownerRef(dep)],
      },
    );
    events.push({
      ns: w.ns,
      obj: dep,
      reason: 'ScalingReplicaSet',
      message: `Scaled up replica set ${rsName} from 0 to ${w.replicas}`,
      at: w.createdAt,
      component: 'deployment-controller',
    });
    for (let i = 0; i < w.replicas; i++) {
      const podName = `${rsName}-${safeString(`${cluster}/${rsName}/${i}`, 5)}`;
      const node = w.onControlPlane ? 0 : rng() < 0.25 ? 0 : 1;
      const restarts = w.name === 'web' && i === 0 && n % 2 === 1 ? 2 : 0;
      const pod = runningPod(
        w.ns,
        podName,
        rsLabels,
        template.spec,
        b.ownerRef(rs),
        w.createdAt + 1,
        node,
        restarts,
      );
      events.push({
        ns: w.ns,
        obj: pod,
        reason: 'Scheduled',
        message: `Successfully assigned ${w.ns}/${podName} to ${nodes[node]}`,
        at: w.createdAt + 1,
        component: 'default-scheduler',
      });
      events.push({
        ns: w.ns,
        obj: pod,
        reason: 'Started',
        message: `Started container ${w.name}`,
        at: w.createdAt + 4,
        component: 'kubelet',
        host: nodes[node],
        fieldPath: `spec.containers{${w.name}}`,
      });
    }
    return dep;
  };

  deployment({
    ns: 'kube-system',
    name: 'coredns',
    replicas: 2,
    image: 'registry.k8s.io/coredns/coredns:v1.12.0',
    port: 8080,
    labels: { 'k8s-app': 'kube-dns' },
    createdAt: 30,
    onControlPlane: true,
  });
  const webReplicas = n % 3 === 1 ? 3 : n % 3 === 2 ? 2 : 0;
  if (webReplicas > 0) {
    deployment({
      ns: 'shop',
      name: 'web',
      replicas: webReplicas,
      image: 'nginx:1.27',
      port: 80,
      labels: { app: 'web' },
      createdAt: 7200,
    });
  }
  if (n % 3 === 0) {
    deployment({
      ns: 'shop',
      name: 'api',
      replicas: 2,
      image: 'ghcr.io/example/shop-api:2.4.1',
      port: 8080,
      labels: { app: 'api' },
      createdAt: 7300,
    });
  }

  // kube-proxy DaemonSet, one pod per node
  const kpLabels = { 'k8s-app': 'kube-proxy' };
  const kpSpec = {
    ...podSpecFor([container({ name: 'kube-proxy', image: `registry.k8s.io/kube-proxy:${kubeVersion}` })]),
    hostNetwork: true,
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    priorityClassName: 'system-node-critical',
  };
  const ds = b.add(
    'apps',
    'v1',
    'daemonsets',
    'DaemonSet',
    'kube-system',
    'kube-proxy',
    20,
    {
      spec: {
        selector: { matchLabels: kpLabels },
        template: { metadata: { labels: kpLabels }, spec: kpSpec },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        revisionHistoryLimit: 10,
      },
      status: {
        currentNumberScheduled: 2,
        desiredNumberScheduled: 2,
        numberAvailable: 2,
        numberMisscheduled: 0,
        numberReady: 2,
        observedGeneration: 1,
        updatedNumberScheduled: 2,
      },
    },
    { generation: 1, labels: kpLabels, annotations: { 'deprecated.daemonset.template.generation': '1' } },
  );
  nodes.forEach((_, i) => {
    runningPod(
      'kube-system',
      `kube-proxy-${safeString(`${cluster}/kube-proxy/${i}`, 5)}`,
      {
        ...kpLabels,
        'controller-revision-hash': safeString('kube-proxy', 10),
        'pod-template-generation': '1',
      },
      kpSpec,
      b.ownerRef(ds),
      21,
      i,
    );
  });

  // Prometheus StatefulSet in monitoring
  const promLabels = { app: 'prometheus' };
  const promSpec = podSpecFor([
    container({ name: 'prometheus', image: 'quay.io/prometheus/prometheus:v3.1.0', port: 9090 }),
  ]);
  const sts = b.add(
    'apps',
    'v1',
    'statefulsets',
    'StatefulSet',
    'monitoring',
    'prometheus',
    5400,
    {
      spec: {
        replicas: 1,
        serviceName: 'prometheus',
        selector: { matchLabels: promLabels },
        template: { metadata: { labels: promLabels }, spec: promSpec },
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      },
      status: {
        replicas: 1,
        readyReplicas: 1,
        currentReplicas: 1,
        updatedReplicas: 1,
        availableReplicas: 1,
        observedGeneration: 1,
        currentRevision: `prometheus-${safeString('prometheus', 10)}`,
        updateRevision: `prometheus-${safeString('prometheus', 10)}`,
        collisionCount: 0,
      },
    },
    { generation: 1, labels: promLabels },
  );
  runningPod(
    'monitoring',
    'prometheus-0',
    {
      ...promLabels,
      'apps.kubernetes.io/pod-index': '0',
      'statefulset.kubernetes.io/pod-name': 'prometheus-0',
    },
    promSpec,
    b.ownerRef(sts),
    5401,
    1,
  );

  // a finished Job with its Succeeded pod, and a CronJob
  const jobName = 'db-migrate';
  const jobUid = uid(cluster, 'Job', 'shop', jobName);
  const jobLabels = {
    'batch.kubernetes.io/controller-uid': jobUid,
    'batch.kubernetes.io/job-name': jobName,
    'controller-uid': jobUid,
    'job-name': jobName,
  };
  const jobSpec = {
    ...podSpecFor([
      {
        ...container({ name: 'migrate', image: 'ghcr.io/example/shop-api:2.4.1' }),
        command: ['/bin/migrate', 'up'],
      },
    ]),
    restartPolicy: 'Never',
  };
  const job = b.add(
    'batch',
    'v1',
    'jobs',
    'Job',
    'shop',
    jobName,
    7000,
    {
      spec: {
        parallelism: 1,
        completions: 1,
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        suspend: false,
        manualSelector: false,
        podReplacementPolicy: 'TerminatingOrFailed',
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': jobUid } },
        template: { metadata: { labels: jobLabels }, spec: jobSpec },
      },
      status: {
        startTime: ts(7000),
        completionTime: ts(7042),
        succeeded: 1,
        ready: 0,
        terminating: 0,
        uncountedTerminatedPods: {},
        conditions: [
          {
            type: 'SuccessCriteriaMet',
            status: 'True',
            lastProbeTime: ts(7042),
            lastTransitionTime: ts(7042),
            reason: 'CompletionsReached',
            message: 'Reached expected number of succeeded pods',
          },
          {
            type: 'Complete',
            status: 'True',
            lastProbeTime: ts(7042),
            lastTransitionTime: ts(7042),
            reason: 'CompletionsReached',
            message: 'Reached expected number of succeeded pods',
          },
        ],
      },
    },
    { generation: 1, labels: jobLabels },
  );
  const jobPod = `${jobName}-${safeString(`${cluster}/${jobName}`, 5)}`;
  const jobNode = 1;
  b.add(
    '',
    'v1',
    'pods',
    'Pod',
    'shop',
    jobPod,
    7000,
    {
      spec: {
        ...jobSpec,
        nodeName: nodes[jobNode],
        serviceAccountName: 'default',
        serviceAccount: 'default',
      },
      status: {
        phase: 'Succeeded',
        conditions: [
          {
            type: 'PodReadyToStartContainers',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: ts(7043),
          },
          {
            type: 'Initialized',
            status: 'True',
            lastProbeTime: null,
            lastTransitionTime: ts(7001),
            reason: 'PodCompleted',
          },
          {
            type: 'Ready',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: ts(7042),
            reason: 'PodCompleted',
          },
          {
            type: 'ContainersReady',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: ts(7042),
            reason: 'PodCompleted',
          },
          { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: ts(7000) },
        ],
        hostIP: nodeIP(jobNode),
        hostIPs: [{ ip: nodeIP(jobNode) }],
        podIP: podIP(jobNode),
        qosClass: 'Burstable',
        startTime: ts(7001),
        containerStatuses: [
          {
            name: 'migrate',
            image: 'ghcr.io/example/shop-api:2.4.1',
            imageID: `ghcr.io/example/shop-api@sha256:${sha256Hex('shop-api:2.4.1')}`,
            containerID: `containerd://${sha256Hex(`${cluster}/${jobPod}`)}`,
            ready: false,
            started: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: 0,
                reason: 'Completed',
                startedAt: ts(7003),
                finishedAt: ts(7040),
                containerID: `containerd://${sha256Hex(`${cluster}/${jobPod}`)}`,
              },
            },
            lastState: {},
          },
        ],
      },
    },
    { labels: jobLabels, ownerReferences: [b.ownerRef(job)], finalizers: [] },
  );
  b.add(
    'batch',
    'v1',
    'cronjobs',
    'CronJob',
    'shop',
    'nightly-report',
    7100,
    {
      spec: {
        schedule: '0 2 * * *',
        concurrencyPolicy: 'Forbid',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          spec: {
            template: {
              spec: {
                ...podSpecFor([container({ name: 'report', image: 'busybox:1.36' })]),
                restartPolicy: 'OnFailure',
              },
            },
          },
        },
      },
      status: { lastScheduleTime: ts(86400 * 29 + 7200), lastSuccessfulTime: ts(86400 * 29 + 7260) },
    },
    { generation: 1 },
  );

  // --------------------------------------------------------------------- services and endpoints
  const service = (
    ns: string,
    name: string,
    ip: string,
    ports: Obj[],
    selector: Obj | undefined,
    createdAt: number,
    labels?: Obj,
    epAddrs: string[] = [],
  ) => {
    b.add(
      '',
      'v1',
      'services',
      'Service',
      ns,
      name,
      createdAt,
      {
        spec: {
          clusterIP: ip,
          clusterIPs: [ip],
          internalTrafficPolicy: 'Cluster',
          ipFamilies: ['IPv4'],
          ipFamilyPolicy: 'SingleStack',
          ports,
          ...(selector ? { selector } : {}),
          sessionAffinity: 'None',
          type: 'ClusterIP',
        },
        status: { loadBalancer: {} },
      },
      labels ? { labels } : {},
    );
    if (epAddrs.length) {
      b.add(
        '',
        'v1',
        'endpoints',
        'Endpoints',
        ns,
        name,
        createdAt,
        {
          subsets: [
            {
              addresses: epAddrs.map((ip) => ({ ip })),
              ports: ports.map((p) => ({ name: p.name, port: p.targetPort ?? p.port, protocol: p.protocol })),
            },
          ],
        },
        labels ? { labels } : {},
      );
    }
  };
  service(
    'default',
    'kubernetes',
    '10.96.0.1',
    [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
    undefined,
    0,
    { component: 'apiserver', provider: 'kubernetes' },
    [nodeIP(0)],
  );
  const podIPsOf = (ns: string, label: string, value: string) =>
    b.out
      .filter(
        (o) =>
          o.resource === 'pods' &&
          o.object.metadata.namespace === ns &&
          o.object.metadata.labels?.[label] === value,
      )
      .map((o) => (o.object as Obj).status.podIP as string);
  service(
    'kube-system',
    'kube-dns',
    '10.96.0.10',
    [
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
      { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
    ],
    { 'k8s-app': 'kube-dns' },
    30,
    { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
    podIPsOf('kube-system', 'k8s-app', 'kube-dns'),
  );
  if (webReplicas > 0)
    service(
      'shop',
      'web',
      `10.96.${n}.80`,
      [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }],
      { app: 'web' },
      7200,
      { app: 'web' },
      podIPsOf('shop', 'app', 'web'),
    );
  if (n % 3 === 0)
    service(
      'shop',
      'api',
      `10.96.${n}.81`,
      [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080 }],
      { app: 'api' },
      7300,
      { app: 'api' },
      podIPsOf('shop', 'app', 'api'),
    );
  service(
    'monitoring',
    'prometheus',
    `10.96.${n}.90`,
    [{ name: 'web', port: 9090, protocol: 'TCP', targetPort: 9090 }],
    promLabels,
    5400,
    promLabels,
    podIPsOf('monitoring', 'app', 'prometheus'),
  );

  // ------------------------------------------------------------------- configmaps and secrets
  b.add(
    '',
    'v1',
    'configmaps',
    'ConfigMap',
    'default',
    'app-config',
    3000,
    {
      data: { 'cluster.name': cluster, 'log.level': n % 2 ? 'info' : 'debug', region: `region-${n}` },
    },
    { labels: { app: 'shop' } },
  );
  b.add('', 'v1', 'configmaps', 'ConfigMap', 'kube-system', 'coredns', 30, {
    data: {
      Corefile:
        '.:53 {\n    errors\n    health\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n       fallthrough in-addr.arpa ip6.arpa\n    }\n    forward . /etc/resolv.conf\n    cache 30\n    loop\n    reload\n}\n',
    },
  });
  b.add('', 'v1', 'secrets', 'Secret', 'shop', 'db-credentials', 6900, {
    type: 'Opaque',
    data: { username: btoa('shop'), password: btoa(sha256Hex(`pw/${cluster}`).slice(0, 16)) },
  });
  b.add('', 'v1', 'secrets', 'Secret', 'default', 'registry-credentials', 3000, {
    type: 'kubernetes.io/dockerconfigjson',
    data: {
      '.dockerconfigjson': btoa(JSON.stringify({ auths: { 'ghcr.io': { auth: btoa('robot:token') } } })),
    },
  });

  // ---------------------------------------------------------------------------------- events
  events.forEach((e, i) => {
    const io = e.obj;
    const name = `${io.metadata.name}.${(0x180000000000 + i * 0x1000 + n).toString(16)}`;
    b.add('', 'v1', 'events', 'Event', e.ns, name, e.at, {
      involvedObject: {
        apiVersion: io.apiVersion,
        kind: io.kind,
        name: io.metadata.name,
        namespace: io.metadata.namespace,
        uid: io.metadata.uid,
        ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
      },
      reason: e.reason,
      message: e.message,
      source: e.host ? { component: e.component, host: e.host } : { component: e.component },
      firstTimestamp: ts(e.at),
      lastTimestamp: ts(e.at),
      count: 1,
      type: e.type ?? 'Normal',
      eventTime: null,
      reportingComponent: e.component,
      reportingInstance: e.host ?? '',
    });
  });

  // ---------------------------------------------------------------------------------- widgets
  if (opts.crds) widgets(b, n);
}

function widgets(b: Builder, n: number): void {
  const colors = ['red', 'green', 'blue', 'amber'];
  b.add(
    'example.fleet.io',
    'v1',
    'widgets',
    'Widget',
    'default',
    'gizmo',
    4000,
    {
      spec: { size: 3 + (n % 3), color: colors[n % colors.length] },
      status: { phase: 'Ready' },
    },
    { generation: 1 },
  );
  b.add(
    'example.fleet.io',
    'v1',
    'widgets',
    'Widget',
    'shop',
    `sprocket-${n}`,
    7500,
    {
      spec: { size: 1, color: 'green' },
      status: { phase: 'Ready' },
    },
    { generation: 1 },
  );
}

function karmada(b: Builder): void {
  const namespaces = [
    'default',
    'kube-system',
    'kube-public',
    'kube-node-lease',
    'karmada-system',
    'shop',
    'monitoring',
  ];
  namespaces.forEach((ns, i) => {
    const created = ns.startsWith('kube') || ns === 'default' || ns === 'karmada-system' ? 0 : 3600 + i * 60;
    b.add(
      '',
      'v1',
      'namespaces',
      'Namespace',
      undefined,
      ns,
      created,
      {
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      },
      { labels: { 'kubernetes.io/metadata.name': ns } },
    );
    b.add('', 'v1', 'configmaps', 'ConfigMap', ns, 'kube-root-ca.crt', created + 5, {
      data: { 'ca.crt': FAKE_CA },
    });
    b.add('', 'v1', 'serviceaccounts', 'ServiceAccount', ns, 'default', created + 5, {});
  });
  b.add(
    '',
    'v1',
    'services',
    'Service',
    'default',
    'kubernetes',
    0,
    {
      spec: {
        clusterIP: '10.96.0.1',
        clusterIPs: ['10.96.0.1'],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 5443 }],
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
    { labels: { component: 'apiserver', provider: 'kubernetes' } },
  );
  b.add(
    '',
    'v1',
    'configmaps',
    'ConfigMap',
    'default',
    'app-config',
    3000,
    {
      data: { 'cluster.name': 'karmada', 'log.level': 'info', region: 'global' },
    },
    { labels: { app: 'shop' } },
  );

  // workload templates: replicas are the fleet-wide totals Karmada divides among members
  const template = (name: string, replicas: number, image: string, port: number, createdAt: number) =>
    b.add(
      'apps',
      'v1',
      'deployments',
      'Deployment',
      'shop',
      name,
      createdAt,
      {
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: podSpecFor([container({ name, image, port })]),
          },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
        status: {
          observedGeneration: 1,
          replicas,
          updatedReplicas: replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
        },
      },
      {
        generation: 1,
        labels: { app: name },
        annotations: {
          'propagationpolicy.karmada.io/name': `${name}-propagation`,
          'propagationpolicy.karmada.io/namespace': 'shop',
        },
      },
    );
  template('web', 5, 'nginx:1.27', 80, 7200);
  template('api', 2, 'ghcr.io/example/shop-api:2.4.1', 8080, 7300);
  // static weights that divide the template's replicas as its copies below hold them (web: 3 and 2 of 5,
  // as Karmada's division gives them), so the simulated propagation leaves the seeded copies as they are
  const policy = (name: string, clusters: string[], createdAt: number, weights?: number[]) =>
    b.add(
      'policy.karmada.io',
      'v1alpha1',
      'propagationpolicies',
      'PropagationPolicy',
      'shop',
      `${name}-propagation`,
      createdAt,
      {
        spec: {
          resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }],
          placement: {
            clusterAffinity: { clusterNames: clusters },
            replicaScheduling: weights
              ? {
                  replicaSchedulingType: 'Divided',
                  replicaDivisionPreference: 'Weighted',
                  weightPreference: {
                    staticWeightList: clusters.map((c, i) => ({
                      targetCluster: { clusterNames: [c] },
                      weight: weights[i]!,
                    })),
                  },
                }
              : { replicaSchedulingType: 'Duplicated' },
          },
          conflictResolution: 'Abort',
          priority: 0,
          preemption: 'Never',
        },
      },
      { generation: 1 },
    );
  policy('web', ['member1', 'member2'], 7190, [3, 2]);
  policy('api', ['member3'], 7290);
  b.add(
    'policy.karmada.io',
    'v1alpha1',
    'clusterpropagationpolicies',
    'ClusterPropagationPolicy',
    undefined,
    'shop-namespace',
    3600,
    {
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace', name: 'shop' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2', 'member3'] } },
      },
    },
    { generation: 1 },
  );
  if (b.opts.crds) widgets(b, 0);
}

/** A Karmada Cluster object for a member (for seeding a karmada control plane with its members). */
export function karmadaClusterObject(
  name: string,
  kubernetesVersion: string,
  apiEndpoint = `https://${name}.local:6443`,
): KubeObject {
  const n = clusterNumber(name);
  return {
    apiVersion: 'cluster.karmada.io/v1alpha1',
    kind: 'Cluster',
    metadata: {
      name,
      uid: uid('karmada', 'Cluster', '', name),
      creationTimestamp: ts(600 + n),
      finalizers: ['karmada.io/cluster-controller'],
    },
    spec: {
      apiEndpoint,
      id: uid(name, 'kube-system', '', 'kube-system'),
      impersonatorSecretRef: { name, namespace: 'karmada-cluster' },
      secretRef: { name, namespace: 'karmada-cluster' },
      syncMode: 'Push',
      region: `region-${n}`,
      resourceModels: [],
    },
    status: {
      kubernetesVersion: kubernetesVersion.startsWith('v') ? kubernetesVersion : `v${kubernetesVersion}`,
      apiEnablements: [],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'ClusterReady',
          message: 'cluster is healthy and ready to accept workloads',
          lastTransitionTime: ts(620 + n),
        },
      ],
      nodeSummary: { totalNum: 2, readyNum: 2 },
    },
  };
}

export function sampleObjects(cluster: string, opts: CatalogOptions): SampleObject[] {
  const b = new Builder(cluster, opts);
  if (opts.role === 'karmada') karmada(b);
  else member(b);
  return b.out;
}
