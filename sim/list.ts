/**
 * LIST with kube-apiserver's semantics: resourceVersion / resourceVersionMatch, limit + continue at a
 * fixed snapshot (etcd MVCC), remainingItemCount, selectors, and Table / PartialObjectMetadataList output.
 *
 * The continue token has the real shape: base64url(JSON {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}).
 */

import type { KubeObject, ResourceDef } from './catalog/types.ts';
import { objectResponse, StatusError, type Target } from './http.ts';
import { groupVersion, present } from './objects.ts';
import { protobufResponse } from './protobuf.ts';
import { type Selector, selectorEmpty, selectorMatches } from './selectors.ts';
import { badRequest, expired, failure, invalid, type Status } from './status.ts';
import type { Store } from './store.ts';
import { parseIncludeObject, partialObjectMetadata, toTable } from './table.ts';

export const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export const LIST_EXPIRED = 'The resourceVersion for the provided list is too old.';

function b64urlEncode(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function b64urlDecode(s: string): string {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

export function encodeContinue(rv: number, startKey: string): string {
  return b64urlEncode(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${startKey}\u0000` }));
}

export function decodeContinue(token: string): { rv: number; start: string } {
  let parsed: { v?: string; rv?: number; start?: string };
  // Go's base64.RawURLEncoding: the first byte outside the alphabet, or a lone last byte
  const bad = token.search(/[^A-Za-z0-9_-]/);
  const at = bad >= 0 ? bad : token.length % 4 === 1 ? token.length - 1 : -1;
  if (at >= 0)
    throw new StatusError(
      badRequest(
        `invalid continue token: continue key is not valid: illegal base64 data at input byte ${at}`,
      ),
    );
  try {
    parsed = JSON.parse(b64urlDecode(token));
  } catch {
    throw new StatusError(
      badRequest('invalid continue token: continue key is not valid: illegal base64 data at input byte 0'),
    );
  }
  if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') {
    throw new StatusError(
      badRequest(
        'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
      ),
    );
  }
  return { rv: parsed.rv, start: parsed.start };
}

/** Too large resource version: what the watch cache answers when asked for an RV it has not seen yet. */
export function tooLargeResourceVersion(requested: number, current: number): Status {
  return failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

function listOptionsInvalid(causes: Array<{ field: string; message: string; reason?: string }>): StatusError {
  return new StatusError(
    invalid(
      'ListOptions',
      'meta.k8s.io',
      '',
      causes.map((c) => ({ reason: c.reason ?? 'FieldValueForbidden', message: c.message, field: c.field })),
    ),
  );
}

/** The words of Go's strconv.ParseUint failing on a resource version, as the storage layer wraps them. */
export function rvSyntax(s: string): string {
  return `resourceVersion: Invalid value: ${JSON.stringify(s)}: strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`;
}

export function parseRv(s: string, what = 'resourceVersion'): number {
  if (!/^\d+$/.test(s)) {
    throw new StatusError(
      what === 'resourceVersion'
        ? badRequest(`invalid resource version: ${rvSyntax(s)}`)
        : badRequest(`invalid ${what}: ${s}`),
    );
  }
  return Number(s);
}

export interface ListRequest {
  def: ResourceDef;
  version: string;
  namespace: string | undefined;
  query: URLSearchParams;
  selector: Selector;
  target: Target;
  now: Date;
}

/** Validation of ListOptions shared by list and watch (apimachinery ValidateListOptions). */
export function validateListOptions(q: URLSearchParams, watch: boolean): void {
  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const sendInitial = q.get('sendInitialEvents');
  const errs: Array<{ field: string; message: string; reason?: string }> = [];
  if (watch) {
    // apimachinery's validateWatchOptions (1.35: bookmarks are no longer required for sendInitialEvents)
    if (sendInitial !== null && match !== 'NotOlderThan')
      errs.push({
        field: 'resourceVersionMatch',
        message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      });
    if (match !== '') {
      if (sendInitial === null)
        errs.push({
          field: 'resourceVersionMatch',
          message:
            'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        });
      if (match !== 'NotOlderThan')
        errs.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${match}": supported values: "NotOlderThan"`,
        });
    }
  } else if (sendInitial !== null) {
    errs.push({
      field: 'sendInitialEvents',
      message: 'Forbidden: sendInitialEvents is forbidden for list',
    });
  } else if (match !== '') {
    // apimachinery's ValidateListOptions: every problem, in its order
    if (rv === '') {
      errs.push({
        field: 'resourceVersionMatch',
        message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      });
    }
    if (q.get('continue')) {
      errs.push({
        field: 'resourceVersionMatch',
        message: 'Forbidden: resourceVersionMatch is forbidden when continue is provided',
      });
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push({
        field: 'resourceVersionMatch',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""`,
      });
    }
    if (match === 'Exact' && rv === '0') {
      errs.push({
        field: 'resourceVersionMatch',
        message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      });
    }
  }
  if (errs.length > 0) throw listOptionsInvalid(errs);
}

export function serveList(store: Store, gr: string, r: ListRequest): Response {
  const q = r.query;
  validateListOptions(q, false);
  const rvParam = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const cont = q.get('continue') ?? '';
  const limitParam = q.get('limit');
  if (limitParam !== null && limitParam !== '' && !/^-?\d+$/.test(limitParam))
    throw new StatusError(
      badRequest(`strconv.ParseInt: parsing ${JSON.stringify(limitParam)}: invalid syntax`),
    );
  // resourceVersion=0 is served whole from the watch cache, which ignores limit
  const limit =
    limitParam && /^\d+$/.test(limitParam) && !(rvParam === '0' && !q.get('continue'))
      ? Number(limitParam)
      : 0;
  const current = store.resourceVersion;
  const compacted = store.compactedRevision;

  let snapshotRv = current;
  let startAfter = '';
  if (cont) {
    const tok = decodeContinue(cont);
    if (rvParam !== '' && rvParam !== '0') {
      throw new StatusError(badRequest('specifying resource version is not allowed when using continue'));
    }
    startAfter = tok.start;
    if (tok.rv !== 0) {
      if (tok.rv < compacted) {
        // handleCompactedErrorForPaging: a fresh token continues from the same key at the latest RV
        const st = expired(CONTINUE_EXPIRED);
        st.metadata = {
          continue: encodeContinue(0, tok.start.endsWith('\u0000') ? tok.start.slice(0, -1) : tok.start),
        };
        throw new StatusError(st);
      }
      snapshotRv = tok.rv;
    }
  } else if (rvParam !== '' && rvParam !== '0') {
    const n = parseRv(rvParam);
    if (match === 'Exact') {
      if (n > current) throw new StatusError(tooLargeResourceVersion(n, current));
      if (n < compacted) throw new StatusError(expired(LIST_EXPIRED));
      snapshotRv = n;
    } else if (n > current) {
      throw new StatusError(tooLargeResourceVersion(n, current));
    }
  }

  const all = store.snapshot(gr, snapshotRv, r.namespace);
  const items: KubeObject[] = [];
  let lastKey = '';
  let more = false;
  let remaining = 0;
  let i = 0;
  for (; i < all.length; i++) {
    const e = all[i]!;
    if (startAfter && e.key < startAfter) continue;
    if (!selectorMatches(r.selector, e.obj, r.def.resource)) continue;
    items.push(e.obj);
    lastKey = e.key;
    if (limit > 0 && items.length >= limit) {
      // etcd pages by keys, filtering after: a full page continues when any key follows, matching or not
      more = i + 1 < all.length;
      i++;
      break;
    }
  }
  if (more && selectorEmpty(r.selector)) {
    for (let j = i; j < all.length; j++) if (!startAfter || all[j]!.key >= startAfter) remaining++;
  }
  const meta: Record<string, unknown> = { resourceVersion: String(snapshotRv) };
  if (more) {
    meta['continue'] = encodeContinue(snapshotRv, lastKey);
    if (selectorEmpty(r.selector)) meta['remainingItemCount'] = remaining;
  }
  const body = renderList(r, items, meta);
  if (r.target.encoding === 'protobuf' && r.target.as !== 'Table') {
    return protobufResponse(body, 200, () => objectResponse(r.target, body));
  }
  return objectResponse(r.target, body);
}

export function renderList(r: ListRequest, items: KubeObject[], meta: Record<string, unknown>): unknown {
  switch (r.target.as) {
    case 'Table': {
      const include = parseIncludeObject(r.query.get('includeObject'));
      if (!include) {
        throw new StatusError(
          badRequest(
            `Unable to convert to Table as requested: includeObject: Invalid value: "${r.query.get('includeObject')}": must be 'Metadata', 'Object', 'None', or empty`,
          ),
        );
      }
      return toTable(
        r.def,
        items.map((o) => present(o, r.def, r.version)),
        meta,
        { version: r.target.version, includeObject: include, now: r.now },
      );
    }
    case 'PartialObjectMetadataList': {
      const v = r.target.version;
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${v}`,
        metadata: meta,
        // kube builds this list from a nil slice: no items encode as null
        items: items.length ? items.map((o) => partialObjectMetadata(present(o, r.def, r.version), v)) : null,
      };
    }
    default:
      return {
        kind: `${r.def.kind}List`,
        apiVersion: groupVersion(r.def.group, r.version),
        metadata: meta,
        items: items.map((o) => present(o, r.def, r.version, !!r.def.custom)),
      };
  }
}
