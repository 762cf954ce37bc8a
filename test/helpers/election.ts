/**
 * One candidate of client-go's leader election (leaderelection.go tryAcquireOrRenew) over a Lease, run
 * with @kubernetes/client-node's CoordinationV1Api, which has no election of its own: the simulated
 * fleet's e2e test and the real bed's suite elect with it.
 */
import * as k8s from '@kubernetes/client-node';

/** One candidate running client-go's election loop over a Lease (`stop()`: it stops renewing, as if dead). */
export class Candidate {
  leading = false;
  private observed: { record: string; at: number } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    readonly id: string,
    private readonly api: k8s.CoordinationV1Api,
    private readonly ns: string,
    private readonly name: string,
    private readonly leaseSeconds: number,
    private readonly retryMs: number,
  ) {}

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      const ok = await this.tryAcquireOrRenew().catch(() => false);
      if (this.stopped) return;
      this.leading = ok;
      this.timer = setTimeout(loop, this.retryMs);
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    this.leading = false;
    clearTimeout(this.timer);
  }

  private spec(acquire: Date | undefined, transitions: number): k8s.V1LeaseSpec {
    const now = new k8s.V1MicroTime();
    return {
      holderIdentity: this.id,
      leaseDurationSeconds: this.leaseSeconds,
      acquireTime: acquire ?? now,
      renewTime: now,
      leaseTransitions: transitions,
    };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    let lease: k8s.V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name: this.name, namespace: this.ns });
    } catch (err) {
      if ((err as { code?: number }).code !== 404) return false;
      try {
        await this.api.createNamespacedLease({
          namespace: this.ns,
          body: { metadata: { name: this.name, namespace: this.ns }, spec: this.spec(undefined, 0) },
        });
        return true;
      } catch {
        return false; // someone else created it first: 409 AlreadyExists
      }
    }
    const spec = lease.spec ?? {};
    // client-go compares the raw record, and times the lease by when *it* saw the record change
    const record = JSON.stringify(spec);
    if (record !== this.observed?.record) this.observed = { record, at: Date.now() };
    const held = spec.holderIdentity && spec.holderIdentity !== this.id;
    if (held && this.observed.at + (spec.leaseDurationSeconds ?? this.leaseSeconds) * 1000 > Date.now())
      return false;
    const mine = spec.holderIdentity === this.id;
    const next = this.spec(
      mine ? spec.acquireTime : undefined,
      (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
    );
    try {
      // the read's resourceVersion goes back: a write in between makes this a 409 Conflict
      const out = await this.api.replaceNamespacedLease({
        name: this.name,
        namespace: this.ns,
        body: { ...lease, spec: next },
      });
      this.observed = { record: JSON.stringify(out.spec ?? {}), at: Date.now() };
      return true;
    } catch {
      return false;
    }
  }
}
