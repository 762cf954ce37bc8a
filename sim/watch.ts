/**
 * WATCH streams framed like kube-apiserver's HTTP watch: HTTP 200, chunked, one
 * `{"type":…,"object":…}\n` JSON document per event, flushed per event (one enqueue per event).
 *
 * Semantics follow the watch cache: from "" / "0" the current state is replayed as ADDED; from N the
 * history after N; N older than compaction → a single ERROR event (410 Expired) then the end; label/field
 * selectors turn transitions into ADDED/DELETED; bookmarks; WatchList (sendInitialEvents).
 */

import type { KubeObject, ResourceDef } from './catalog/types.ts';
import { StatusError, type Target } from './http.ts';
import { parseRv, rvSyntax, tooLargeResourceVersion, validateListOptions } from './list.ts';
import { groupVersion, present } from './objects.ts';
import { queryBool } from './paths.ts';
import { PROTOBUF_WATCH, watchFrame } from './protobuf.ts';
import { type Selector, selectorMatches } from './selectors.ts';
import { expired, failure, type Status } from './status.ts';
import type { Store, StoreEvent } from './store.ts';
import { type IncludeObject, parseIncludeObject, partialObjectMetadata, toTable } from './table.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One open watch stream; the cluster keeps a set of them for openWatches()/cutWatches()/close(). */
export interface OpenWatch {
  /** abrupt end: the reader sees an error, as with a dropped connection */
  cut(reason?: string): void;
  /** clean end of the stream */
  end(): void;
}

export interface WatchRequest {
  def: ResourceDef;
  version: string;
  namespace: string | undefined;
  query: URLSearchParams;
  selector: Selector;
  target: Target;
  now: () => Date;
  bookmarkIntervalMs: number;
  /** cut the stream after this many events (faults.cutWatchesAfterEvents), read at each event */
  cutAfter: () => number | undefined;
  register: (w: OpenWatch) => () => void;
  /** timers are tracked by the cluster so close() can clear them */
  setTimer: (fn: () => void, ms: number, repeat?: boolean) => () => void;
}

const encoder = new TextEncoder();

export function serveWatch(store: Store, gr: string, r: WatchRequest): Response {
  const q = r.query;
  validateListOptions(q, true);
  const rvParam = q.get('resourceVersion') ?? '';
  const sendInitialParam = q.get('sendInitialEvents');
  const bookmarks = queryBool(q, 'allowWatchBookmarks');
  const timeoutSeconds = Number(q.get('timeoutSeconds') ?? '0');
  const include: IncludeObject = parseIncludeObject(q.get('includeObject')) ?? 'Metadata';
  // Typed watches in protobuf: length-delimited WatchEvent frames (Tables stay JSON, as kube has no Table protobuf).
  const proto = r.target.encoding === 'protobuf' && r.target.as !== 'Table';
  const frame = (type: string, object: unknown): Uint8Array =>
    (proto && watchFrame(type, object)) || encoder.encode(`${JSON.stringify({ type, object })}\n`);

  // Decide what to replay before any byte goes out, so a 504/400 is still a plain HTTP error.
  const current = store.resourceVersion;
  const compacted = store.compactedRevision;
  let fromRv: number | undefined; // replay history after this RV
  let tooOld: Status | undefined;
  const initialState =
    sendInitialParam === 'true' || (sendInitialParam === null && (rvParam === '' || rvParam === '0'));
  if (rvParam !== '' && rvParam !== '0') {
    // a watch from an unparsable RV fails in the storage layer: a 500, as kube answers it
    if (!/^\d+$/.test(rvParam))
      throw new StatusError({ ...failure(500, '', rvSyntax(rvParam)), reason: undefined } as Status);
    const n = parseRv(rvParam);
    if (sendInitialParam === 'true') {
      if (n > current) throw new StatusError(tooLargeResourceVersion(n, current));
    } else if (n < compacted) {
      tooOld = expired(`too old resource version: ${n} (${compacted})`);
    } else {
      fromRv = n;
    }
  }

  let tableHeadersSent = false;
  let events = 0;
  let closed = false;
  let unregister = () => {};
  let unsubscribe = () => {};
  const stopTimers: Array<() => void> = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    unregister();
    for (const s of stopTimers) s();
  };

  const render = (obj: KubeObject): unknown => {
    const full = present(obj, r.def, r.version);
    switch (r.target.as) {
      case 'Table': {
        const t = toTable(
          r.def,
          [full],
          { resourceVersion: obj.metadata.resourceVersion ?? '' },
          {
            version: r.target.version,
            includeObject: include,
            noHeaders: tableHeadersSent,
            now: r.now(),
          },
        );
        tableHeadersSent = true;
        return t;
      }
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        return partialObjectMetadata(full, r.target.version);
      default:
        return full;
    }
  };

  const bookmarkObject = (rv: number, initialEventsEnd: boolean): unknown => {
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata['annotations'] = { 'k8s.io/initial-events-end': 'true' };
    switch (r.target.as) {
      case 'Table':
        return {
          kind: 'Table',
          apiVersion: `meta.k8s.io/${r.target.version}`,
          metadata: { resourceVersion: String(rv) },
          columnDefinitions: null,
          rows: [],
        };
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${r.target.version}`, metadata };
      default:
        return { kind: r.def.kind, apiVersion: groupVersion(r.def.group, r.version), metadata };
    }
  };

  const send = (type: WatchEventType, object: unknown) => {
    if (closed) return;
    controller.enqueue(frame(type, object));
    if (type === 'BOOKMARK' || type === 'ERROR') return;
    events++;
    const limit = r.cutAfter();
    if (limit !== undefined && events >= limit) cut('watch cut by fault injection');
  };

  const cut = (reason = 'watch stream cut') => {
    if (closed) return;
    cleanup();
    controller.error(new TypeError(`terminated: ${reason}`));
  };
  const end = () => {
    if (closed) return;
    cleanup();
    controller.close();
  };

  const inScope = (obj: KubeObject | undefined): boolean =>
    !!obj &&
    (r.namespace === undefined || obj.metadata.namespace === r.namespace) &&
    selectorMatches(r.selector, obj, r.def.resource);

  /** The watch cache's filtering: a transition into/out of the selector is ADDED/DELETED. */
  const onEvent = (ev: StoreEvent) => {
    const now = inScope(ev.obj);
    const before = inScope(ev.prev);
    if (ev.type === 'ADDED') {
      if (now) send('ADDED', render(ev.obj));
    } else if (ev.type === 'DELETED') {
      if (before) send('DELETED', render(ev.obj));
    } else if (now && before) send('MODIFIED', render(ev.obj));
    else if (now) send('ADDED', render(ev.obj));
    // leaving the selector: the object as it was when it matched, at the event's RV (cacheWatcher)
    else if (before && ev.prev)
      send(
        'DELETED',
        render({
          ...ev.prev,
          metadata: { ...ev.prev.metadata, resourceVersion: ev.obj.metadata.resourceVersion },
        }),
      );
  };

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (tooOld) {
        controller.enqueue(frame('ERROR', tooOld));
        closed = true;
        controller.close();
        return;
      }
      const self: OpenWatch = { cut, end };
      unregister = r.register(self);
      if (initialState) {
        for (const e of store.snapshot(gr, current, r.namespace)) {
          if (selectorMatches(r.selector, e.obj, r.def.resource)) send('ADDED', render(e.obj));
        }
        if (sendInitialParam === 'true') send('BOOKMARK', bookmarkObject(current, true));
      } else if (fromRv !== undefined) {
        for (const ev of store.eventsSince(gr, fromRv)) onEvent(ev);
      }
      if (closed) return;
      unsubscribe = store.subscribe(gr, onEvent, r.namespace);
      if (bookmarks) {
        stopTimers.push(
          r.setTimer(
            () => send('BOOKMARK', bookmarkObject(store.resourceVersion, false)),
            r.bookmarkIntervalMs,
            true,
          ),
        );
      }
      if (timeoutSeconds > 0) stopTimers.push(r.setTimer(end, timeoutSeconds * 1000));
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(stream, {
    status: 200,
    headers: {
      'Content-Type': proto ? PROTOBUF_WATCH : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    },
  });
}
