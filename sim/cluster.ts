/**
 * SimCluster: a simulated kube-apiserver as one Web-standard `fetch(Request) → Response` handler.
 *
 * The request path mirrors kube-apiserver's: faults (the network) → request log → non-resource paths
 * (version, health, discovery, OpenAPI) → resource paths (resources.ts) → 404 page not found. Every
 * response gets the headers the real one adds (Audit-Id, APF uids, Cache-Control, Date).
 * `handle()` is the overridable seam: SimKarmada intercepts its proxy paths there.
 */

import { buildCatalog } from './catalog/index.ts';
import type { Catalog, KubeObject, ResourceDef } from './catalog/types.ts';
import { Controllers } from './controllers.ts';
import { serveDiscovery } from './discovery.ts';
import { type SimUpgrade, simUpgrade } from './exec.ts';
import { warningHeader } from './fieldvalidation.ts';
import type { SimFaults, SimHost } from './host.ts';
import { decorate, pageNotFound, StatusError, textResponse } from './http.ts';
import { LogStore } from './logs.ts';
import { type Gvr, groupVersion, microTimestamp, randomSuffix, timestamp } from './objects.ts';
import { parseResourcePath } from './paths.ts';
import { hasProtobuf, statusAnswer } from './protobuf.ts';
import { type SimRbac, simAuthorize } from './rbac.ts';
import { handleResource } from './resources.ts';
import { internalError, statusFor, statusResponse } from './status.ts';
import { clone, grKey, objectKey, Store } from './store.ts';
import type { OpenWatch } from './watch.ts';

export type { SimFaults } from './host.ts';

export interface SimClusterOptions {
  name: string;
  role?: 'member' | 'karmada';
  crds?: boolean;
  /** serve ClusterProfiles, as a cluster-inventory hub (sim/clusterprofiles.ts) */
  clusterInventory?: boolean;
  kubernetesVersion?: string;
  seed?: boolean;
  bookmarkIntervalMs?: number;
  continueTtlMs?: number;
  podReadyDelayMs?: number;
  now?: () => Date;
  /** inject a catalog (tests); default buildCatalog({ role, crds, kubernetesVersion }) */
  catalog?: Catalog;
  /** RBAC for impersonated users (rbac.ts); default: everything allowed */
  rbac?: SimRbac;
}

export interface ResolvedOptions {
  role: 'member' | 'karmada';
  crds: boolean;
  kubernetesVersion: string;
  seed: boolean;
  bookmarkIntervalMs: number;
  continueTtlMs: number;
  podReadyDelayMs: number;
}

export interface RequestRecord {
  method: string;
  url: string;
  headers: Record<string, string>;
}

const HEALTH_PATHS = /^\/(healthz|livez|readyz)(\/.*)?$/;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class SimCluster implements SimHost {
  readonly name: string;
  readonly faults: SimFaults = { latencyMs: 0, down: false };
  /** replaced only when a CRD comes or goes (serveGadgets) */
  catalog: Catalog;
  readonly store: Store;
  readonly logs = new LogStore();
  readonly options: ResolvedOptions;
  requests: RequestRecord[] = [];
  /** RBAC this cluster enforces on the (impersonated) user; undefined: everything allowed (rbac.ts) */
  rbac?: SimRbac;

  private readonly nowFn: () => Date;
  private readonly watches = new Set<OpenWatch>();
  private readonly streams = new Set<() => void>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly controllers: Controllers;
  /** APF answers with the uids of the FlowSchema / PriorityLevel that classified the request */
  private readonly flowSchemaUid = crypto.randomUUID();
  private readonly priorityLevelUid = crypto.randomUUID();
  private closed = false;

  constructor(opts: SimClusterOptions) {
    this.name = opts.name;
    this.options = {
      role: opts.role ?? 'member',
      crds: opts.crds ?? false,
      kubernetesVersion: opts.kubernetesVersion ?? 'v1.35.0',
      seed: opts.seed ?? true,
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 1000,
      continueTtlMs: opts.continueTtlMs ?? 5 * 60_000,
      podReadyDelayMs: opts.podReadyDelayMs ?? 200,
    };
    this.nowFn = opts.now ?? (() => new Date());
    this.rbac = opts.rbac;
    this.catalog =
      opts.catalog ??
      buildCatalog({
        role: this.options.role,
        crds: this.options.crds,
        kubernetesVersion: this.options.kubernetesVersion,
        ...(opts.clusterInventory ? { clusterInventory: true } : {}),
      });
    // real clusters never start at RV 1; a plausible offset per cluster also keeps clusters' RVs distinct
    let h = 0;
    for (const ch of this.name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    this.store = new Store(() => this.clock().getTime(), this.options.continueTtlMs, 1000 + (h % 9000));
    if (this.options.seed) {
      for (const s of this.catalog.sampleObjects(this.name)) {
        try {
          this.create({ group: s.group, version: s.version, resource: s.resource }, s.object);
        } catch {
          // a sample the catalog does not serve in this configuration: skip
        }
      }
    }
    this.controllers = new Controllers(this);
  }

  clock(): Date {
    return this.nowFn();
  }

  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  // ------------------------------------------------------------------------------------------ HTTP

  async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = v;
    });
    this.requests.push({ method: req.method, url: req.url, headers });
    if (this.requests.length > 1000) this.requests.splice(0, this.requests.length - 1000);

    if (this.faults.down) throw connectionRefused();
    if (this.faults.latencyMs > 0) await sleep(this.faults.latencyMs);
    if (this.faults.down) throw connectionRefused();

    let res: Response;
    const fail = this.faults.failRequests;
    if (fail && !HEALTH_PATHS.test(url.pathname) && (fail.count === undefined || fail.count > 0)) {
      if (fail.count !== undefined) fail.count--;
      res = statusResponse(
        statusFor(fail.code, fail.reason, fail.message ?? `simulated failure: ${fail.reason}`),
      );
    } else {
      try {
        res = await this.handle(req, url);
      } catch (e) {
        const status =
          e instanceof StatusError ? e.status : internalError(e instanceof Error ? e.message : String(e));
        res = statusAnswer(req.headers.get('accept'), status, this.speaksProtobuf(url, req.method));
        if (e instanceof StatusError)
          for (const w of e.warnings) res.headers.append('Warning', warningHeader(w));
      }
    }
    return decorate(res, {
      'Audit-Id': crypto.randomUUID(),
      'Cache-Control': 'no-cache, private',
      'X-Kubernetes-Pf-Flowschema-Uid': this.flowSchemaUid,
      'X-Kubernetes-Pf-Prioritylevel-Uid': this.priorityLevelUid,
      Date: this.clock().toUTCString(),
    });
  }

  /**
   * An HTTP/1.1 upgrade (exec, attach, port-forward): the answer, or the session to run (exec.ts). Logged
   * and authorized like any request.
   */
  async upgrade(req: Request): Promise<SimUpgrade> {
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = v;
    });
    this.requests.push({ method: req.method, url: req.url, headers });
    const refused = await simAuthorize(this.rbac, req, new URL(req.url));
    if (refused) return { kind: 'response', response: refused };
    return simUpgrade(this, req);
  }

  /**
   * Whether errors on this path may be protobuf (kube's ErrorNegotiated uses the endpoint's serializers):
   * resource paths of built-in kinds yes; custom resources and non-resource paths (discovery, OpenAPI) no.
   */
  private speaksProtobuf(url: URL, method: string): boolean {
    const info = parseResourcePath(url.pathname, method, url.searchParams);
    if (!info) return false;
    const def = this.catalog.find(info.group, info.version, info.resource);
    return !!def && !def.custom && hasProtobuf(groupVersion(def.group, info.version), def.kind);
  }

  /** Route one request. Subclasses intercept paths here before calling super. */
  protected async handle(req: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    if (HEALTH_PATHS.test(path)) {
      return new Response('ok', {
        status: 200,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
      });
    }
    const refused = await simAuthorize(this.rbac, req, url);
    if (refused) return refused;
    if (req.method === 'GET' || req.method === 'HEAD') {
      const d = serveDiscovery(this.catalog, req, path);
      if (d) return d;
    }
    const info = parseResourcePath(path, req.method, url.searchParams);
    if (info) return handleResource(this, req, url, info);
    if (path === '/' && req.method === 'GET') {
      return textResponse(
        JSON.stringify(
          {
            paths: [
              '/api',
              '/api/v1',
              '/apis',
              '/healthz',
              '/livez',
              '/openapi/v2',
              '/openapi/v3',
              '/readyz',
              '/version',
            ],
          },
          null,
          2,
        ),
        200,
        'application/json',
      );
    }
    return pageNotFound();
  }

  // ------------------------------------------------------------------------------------------ streams and timers

  registerWatch(w: OpenWatch): () => void {
    this.watches.add(w);
    return () => this.watches.delete(w);
  }

  openWatches(): number {
    return this.watches.size;
  }

  cutWatches(): void {
    for (const w of [...this.watches]) w.cut('connection reset by peer');
  }

  /** Other long-lived streams (log follow): ended by close(). */
  trackStream(stop: () => void): () => void {
    this.streams.add(stop);
    return () => this.streams.delete(stop);
  }

  timer(fn: () => void, ms: number, repeat = false): () => void {
    if (this.closed) return () => {};
    if (repeat) {
      const id = setInterval(fn, ms);
      this.timers.add(id);
      return () => {
        clearInterval(id);
        this.timers.delete(id);
      };
    }
    const id = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, ms);
    this.timers.add(id);
    return () => {
      clearTimeout(id);
      this.timers.delete(id);
    };
  }

  close(): void {
    this.closed = true;
    for (const id of this.timers) {
      clearTimeout(id);
      clearInterval(id);
    }
    this.timers.clear();
    for (const w of [...this.watches]) w.end();
    for (const s of [...this.streams]) s();
    this.streams.clear();
    this.controllers.stop();
  }

  compact(): void {
    this.store.compact();
  }

  /**
   * The Gadget CRD installed (or removed) while clients run: discovery answers the new group from now on;
   * removing it deletes every gadget (DELETED events), as kube-apiserver does with a CRD's objects.
   */
  serveGadgets(on: boolean): void {
    const gvr = { group: 'gadgets.fleet.io', version: 'v1', resource: 'gadgets' };
    if (!on && this.catalog.find(gvr.group, gvr.version, gvr.resource))
      for (const o of this.list(gvr)) this.remove(gvr, o.metadata.namespace, o.metadata.name ?? '');
    this.catalog = buildCatalog({ ...this.catalog.options, gadgets: on });
  }

  // ------------------------------------------------------------------------------------------ direct store access

  resolve(gvr: Gvr): ResourceDef {
    const def = this.catalog.find(gvr.group, gvr.version, gvr.resource);
    if (!def)
      throw new Error(`${this.name} does not serve ${groupVersion(gvr.group, gvr.version)}/${gvr.resource}`);
    return def;
  }

  /** Store an object as given (status included), filling identity fields. Emits ADDED. */
  create(gvr: Gvr, obj: KubeObject): KubeObject {
    const def = this.resolve(gvr);
    const o = clone(obj);
    o.apiVersion = groupVersion(def.group, gvr.version);
    o.kind = def.kind;
    o.metadata ??= {};
    if (!o.metadata.name && o.metadata.generateName)
      o.metadata.name = `${o.metadata.generateName}${randomSuffix()}`;
    if (!o.metadata.name) throw new Error('create: metadata.name required');
    if (def.namespaced) o.metadata.namespace ??= 'default';
    else delete o.metadata.namespace;
    const key = objectKey(o.metadata.namespace, o.metadata.name);
    if (this.store.get(grKey(def.group, def.resource), key)) {
      throw new Error(`${def.resource} "${o.metadata.name}" already exists`);
    }
    o.metadata.uid ??= crypto.randomUUID();
    o.metadata.creationTimestamp ??= timestamp(this.clock());
    delete o.metadata.resourceVersion;
    return this.store.put(grKey(def.group, def.resource), key, o);
  }

  /** Replace an object (no optimistic concurrency). Emits MODIFIED. */
  update(gvr: Gvr, obj: KubeObject): KubeObject {
    const def = this.resolve(gvr);
    const key = objectKey(
      def.namespaced ? (obj.metadata.namespace ?? 'default') : undefined,
      obj.metadata.name ?? '',
    );
    const old = this.store.get(grKey(def.group, def.resource), key);
    if (!old) throw new Error(`${def.resource} "${obj.metadata.name}" not found`);
    const o = clone(obj);
    o.apiVersion = old.apiVersion;
    o.kind = def.kind;
    o.metadata.uid = old.metadata.uid;
    o.metadata.creationTimestamp = old.metadata.creationTimestamp;
    if (def.namespaced) o.metadata.namespace = old.metadata.namespace;
    return this.store.put(grKey(def.group, def.resource), key, o);
  }

  remove(gvr: Gvr, namespace: string | undefined, name: string): void {
    const def = this.resolve(gvr);
    const gr = grKey(def.group, def.resource);
    const obj = this.store.get(gr, objectKey(def.namespaced ? namespace : undefined, name));
    if (!obj) return;
    if (gr === grKey('', 'namespaces')) {
      // no Terminating phase on the direct path: contents go at once, then the namespace
      for (const other of this.store.resources()) {
        for (const { obj: o } of this.store.snapshot(other, undefined, name)) {
          if (o.metadata.namespace === name) this.deleteObject(other, o, 'Background');
        }
      }
    }
    this.deleteObject(gr, obj, 'Background');
  }

  get(gvr: Gvr, namespace: string | undefined, name: string): KubeObject | undefined {
    const def = this.resolve(gvr);
    return this.store.get(
      grKey(def.group, def.resource),
      objectKey(def.namespaced ? namespace : undefined, name),
    );
  }

  list(gvr: Gvr, namespace?: string): KubeObject[] {
    const def = this.resolve(gvr);
    return this.store.list(grKey(def.group, def.resource), def.namespaced ? namespace : undefined);
  }

  appendLog(namespace: string, pod: string, container: string | undefined, line: string): void {
    let c = container;
    if (!c) {
      const p = this.store.get(grKey('', 'pods'), objectKey(namespace, pod)) as
        | (KubeObject & Record<string, any>)
        | undefined;
      c = p?.spec?.containers?.[0]?.name ?? pod;
    }
    this.logs.append(namespace, pod, c!, line, this.clock());
  }

  /** A running container whose logs were never written gets a few plausible startup lines. */
  ensureLogs(pod: KubeObject & Record<string, any>): void {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    for (const c of pod.spec?.containers ?? []) {
      if (this.logs.has(ns, name, c.name)) continue;
      const started =
        Date.parse(pod.status?.startTime ?? pod.metadata.creationTimestamp ?? '') || this.clock().getTime();
      const lines = [
        `starting ${c.name} (image ${c.image ?? 'unknown'})`,
        `${c.name}: configuration loaded from environment`,
        `${c.name}: listening on :${c.ports?.[0]?.containerPort ?? 8080}`,
        `${c.name}: ready`,
      ];
      lines.forEach((l, i) => {
        this.logs.append(ns, name, c.name, l, new Date(started + i * 1000));
      });
    }
  }

  // ------------------------------------------------------------------------------------------ deletion (GC, namespaces)

  /** Delete an object and, unless orphaning, its dependents (what the garbage collector does, but at once). */
  deleteObject(gr: string, obj: KubeObject, propagation: 'Background' | 'Orphan'): KubeObject {
    const gone = this.store.delete(gr, objectKey(obj.metadata.namespace, obj.metadata.name!));
    if (!gone) return obj;
    if (gr === grKey('', 'pods')) this.logs.dropPod(obj.metadata.namespace ?? '', obj.metadata.name!);
    const uid = obj.metadata.uid;
    if (!uid) return gone;
    for (const other of this.store.resources()) {
      for (const { obj: dep } of this.store.snapshot(other, undefined, obj.metadata.namespace)) {
        const refs = dep.metadata.ownerReferences ?? [];
        if (!refs.some((r) => r['uid'] === uid)) continue;
        if (propagation === 'Orphan') {
          const o = clone(dep);
          o.metadata.ownerReferences = refs.filter((r) => r['uid'] !== uid);
          if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
          this.store.put(other, objectKey(o.metadata.namespace, o.metadata.name!), o);
        } else {
          this.deleteObject(other, dep, 'Background');
        }
      }
    }
    return gone;
  }

  /** Namespace deletion: Terminating at once (returned), contents then the namespace removed shortly after. */
  terminateNamespace(ns: KubeObject): KubeObject {
    const gr = grKey('', 'namespaces');
    const name = ns.metadata.name!;
    const o = clone(ns) as KubeObject & Record<string, any>;
    if (o.status?.phase === 'Terminating') return ns;
    o.metadata.deletionTimestamp = timestamp(this.clock());
    o.status = { ...(o.status ?? {}), phase: 'Terminating' };
    const terminating = this.store.put(gr, objectKey(undefined, name), o);
    this.timer(() => {
      for (const other of this.store.resources()) {
        if (other === gr) continue;
        for (const { obj } of this.store.snapshot(other, undefined, name)) {
          if (obj.metadata.namespace === name) this.deleteObject(other, obj, 'Background');
        }
      }
      this.store.delete(gr, objectKey(undefined, name));
    }, 10);
    return terminating;
  }

  /** core/v1 Event about an object, as the scheduler, kubelet and controllers record them. */
  recordEvent(
    involved: KubeObject,
    reason: string,
    message: string,
    component: string,
    type: 'Normal' | 'Warning' = 'Normal',
    host?: string,
  ): void {
    const ns = involved.metadata.namespace ?? 'default';
    const now = this.clock();
    const name = `${involved.metadata.name}.${[...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: ns },
      involvedObject: {
        kind: involved.kind,
        namespace: involved.metadata.namespace,
        name: involved.metadata.name,
        uid: involved.metadata.uid,
        apiVersion: involved.apiVersion,
        resourceVersion: involved.metadata.resourceVersion,
      },
      reason,
      message,
      source: host ? { component, host } : { component },
      firstTimestamp: timestamp(now),
      lastTimestamp: timestamp(now),
      count: 1,
      type,
      eventTime: null,
      reportingComponent: component,
      reportingInstance: host ?? '',
    };
    if (component === 'default-scheduler') {
      ev['firstTimestamp'] = null;
      ev['lastTimestamp'] = null;
      ev['eventTime'] = microTimestamp(now);
      ev['action'] = 'Binding';
      ev['reportingInstance'] = `default-scheduler-${this.name}-control-plane`;
      delete ev['count'];
    }
    try {
      this.create({ group: '', version: 'v1', resource: 'events' }, ev);
    } catch {
      // events are best effort, as in a real cluster
    }
  }
}

function connectionRefused(): TypeError {
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  return new TypeError('fetch failed: connect ECONNREFUSED', { cause });
}
