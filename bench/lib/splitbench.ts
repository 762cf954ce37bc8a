/**
 * The list splitter alone on a synthetic pod list, in this process (not a test):
 * `node --import tsx -e "import('./bench/lib/splitbench.ts').then(m => console.log(m.benchmarkSplitter()))"`
 * The bench's merged-list cases measure the whole fleet; this isolates the scanner (moved out of
 * src/merge/jsonsplit/index.ts, which keeps only what the fleet runs).
 */
import { ListSplitter, parseItem } from '../../src/merge/jsonsplit/index.ts';

const decoder = new TextDecoder();

export function syntheticPod(i: number): unknown {
  return {
    metadata: {
      name: `web-${i.toString(36)}-7d9f8b6c5d-x${i % 97}`,
      generateName: 'web-7d9f8b6c5d-',
      namespace: `team-${i % 20}`,
      uid: `5f0c3f1e-${(i * 7919).toString(16).padStart(4, '0')}-4b6e-9c3a-1d2e3f4a5b6c`,
      resourceVersion: String(100000 + i),
      creationTimestamp: '2025-01-01T00:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d9f8b6c5d', tier: i % 2 ? 'frontend' : 'backend' },
      annotations: {
        'kubectl.kubernetes.io/restartedAt': '2025-01-01T00:00:00Z',
        note: 'quote " and \\ and ü €',
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8b6c5d', uid: 'abc', controller: true },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web:1.2.3',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          env: [
            { name: 'A', value: 'x'.repeat(40) },
            { name: 'B', value: '1.5e3' },
          ],
          volumeMounts: [
            { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
        },
      ],
      nodeName: `node-${i % 50}`,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:05Z' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:05Z' },
      ],
      hostIP: '10.0.0.1',
      podIP: `10.1.${(i >> 8) & 255}.${i & 255}`,
      startTime: '2025-01-01T00:00:00Z',
      containerStatuses: [{ name: 'web', ready: true, restartCount: 0, started: true, image: 'web:1.2.3' }],
      qosClass: 'Burstable',
    },
  };
}

export interface SplitterBenchmark {
  pods: number;
  bytes: number;
  chunkSize: number;
  /** split only (items as byte views) */
  splitMs: number;
  splitMBps: number;
  /** split, then TextDecoder + JSON.parse each item (what a rewriting merge does) */
  splitAndParseMs: number;
  /** TextDecoder + JSON.parse of the whole body (holds it all in memory) */
  jsonParseMs: number;
  jsonParseMBps: number;
}

/** Splits a synthetic pod list fed in `chunkSize` chunks; best of `rounds`. Pure: no I/O. */
export function benchmarkSplitter(pods = 10_000, chunkSize = 64 * 1024, rounds = 5): SplitterBenchmark {
  const items: unknown[] = [];
  for (let i = 0; i < pods; i++) items.push(syntheticPod(i));
  const body = new TextEncoder().encode(
    JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '123456' }, items }),
  );
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < body.length; o += chunkSize) chunks.push(body.subarray(o, o + chunkSize));
  const time = (f: () => void) => {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      f();
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  };
  let count = 0;
  const splitMs = time(() => {
    const s = new ListSplitter();
    count = 0;
    for (const c of chunks) s.push(c, () => count++);
    s.end();
  });
  if (count !== pods + 2) throw new Error(`benchmark: expected ${pods + 2} events, got ${count}`);
  const splitAndParseMs = time(() => {
    const s = new ListSplitter();
    for (const c of chunks)
      s.push(c, (e) => {
        if (e.type === 'item') parseItem(e.bytes);
      });
    s.end();
  });
  const jsonParseMs = time(() => {
    JSON.parse(decoder.decode(body));
  });
  const mb = body.length / 1e6;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    pods,
    bytes: body.length,
    chunkSize,
    splitMs: round(splitMs),
    splitMBps: round(mb / (splitMs / 1000)),
    splitAndParseMs: round(splitAndParseMs),
    jsonParseMs: round(jsonParseMs),
    jsonParseMBps: round(mb / (jsonParseMs / 1000)),
  };
}
