/**
 * One cluster's initial events, for a watch that asked for them (WatchList, or a watch from RV "" or "0"),
 * made safe to restart. Initial events come in key order, not RV order, so an upstream watch cut during
 * them cannot resume from "the last RV seen": objects with a higher RV than the cut-off one would be lost.
 * Instead the cluster's initial phase is restarted (a fresh snapshot), and this record turns the second
 * snapshot into exactly what the client is missing:
 * - an object the client already has at the same RV is not sent again;
 * - one it has at another RV comes as MODIFIED (it changed between the snapshots);
 * - one it has that the new snapshot no longer holds comes as DELETED when the snapshot ends.
 * The record lives only until the cluster's `initial-events-end` bookmark; it holds one key and RV per
 * object sent (plus the few metadata fields a DELETED event needs), never whole objects.
 *
 * For the same reason the RV the merged stream gives its client during a cluster's initial events keeps
 * that cluster's entry where the phase started (StreamRV.writer): a client that resumes from one of them
 * gets the cluster's snapshot again, never the rest of it after a mid-snapshot RV. A WatchList's own
 * initial events (before its initial-events-end bookmark) carry their own RV instead: StreamRV.writer says why.
 */

export interface SentObject {
  rv: string;
  /** kind, apiVersion and identifying metadata (upstream form): enough for a DELETED event */
  stub: Record<string, any>;
}

export type InitialVerdict =
  /** send the event as it came */
  | { send: true; type: string }
  /** the client already has exactly this: drop it */
  | { send: false };

/** the identity of an object within one cluster: its uid, else namespace/name */
export function objectKey(obj: Record<string, any>): string | undefined {
  const md = obj.metadata;
  if (!md || typeof md !== 'object') return undefined;
  if (typeof md.uid === 'string' && md.uid) return `uid:${md.uid}`;
  if (typeof md.name !== 'string' || !md.name) return undefined;
  return `${md.namespace ?? ''}/${md.name}`;
}

function stubOf(obj: Record<string, any>): Record<string, any> {
  const md = obj.metadata ?? {};
  const metadata: Record<string, unknown> = { name: md.name, resourceVersion: md.resourceVersion };
  if (md.namespace !== undefined) metadata.namespace = md.namespace;
  if (md.uid !== undefined) metadata.uid = md.uid;
  return { kind: obj.kind, apiVersion: obj.apiVersion, metadata };
}

export class InitialPhase {
  /** what the client holds of this cluster's objects, as sent during this phase */
  private readonly sent = new Map<string, SentObject>();
  /** while a restarted snapshot streams: what the client held when it restarted, and what came again */
  private replay: { held: Map<string, SentObject>; again: Set<string> } | undefined;

  /** The upstream watch broke before its initial events ended: the next snapshot replays them. */
  restart(): void {
    this.replay = { held: new Map(this.sent), again: new Set() };
  }

  /**
   * One event of the (possibly restarted) snapshot: whether and as what it goes to the client. `ownRV`:
   * the object's RV in its cluster, when its metadata carries another (a relay group's composite).
   */
  event(type: string, obj: Record<string, any>, ownRV?: string): InitialVerdict {
    const key = objectKey(obj);
    if (!key) return { send: true, type };
    const rv = ownRV ?? String(obj.metadata?.resourceVersion ?? '');
    if (type === 'DELETED') {
      this.sent.delete(key);
      this.replay?.held.delete(key);
      return { send: true, type };
    }
    const before = this.sent.get(key);
    this.sent.set(key, { rv, stub: stubOf(obj) });
    if (!this.replay) return { send: true, type };
    this.replay.again.add(key);
    if (!this.replay.held.has(key)) return { send: true, type };
    if (before && before.rv === rv) return { send: false };
    return { send: true, type: 'MODIFIED' };
  }

  /**
   * The snapshot ended (`initial-events-end`): the objects the client holds that the restarted snapshot
   * no longer has, to be sent as DELETED (upstream form). Empty when the phase was never restarted.
   */
  end(): Array<Record<string, any>> {
    if (!this.replay) return [];
    const gone: Array<Record<string, any>> = [];
    for (const [key, s] of this.replay.held) if (!this.replay.again.has(key)) gone.push(s.stub);
    this.replay = undefined;
    return gone;
  }
}
