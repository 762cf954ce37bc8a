/**
 * The faults the proxy can inject, one per request. Byte counts are wire bytes: for `headers`, the
 * status line and header block; for `body`, everything after it (chunk framing and gzip included).
 */
export type Fault =
  /** close the connection at once, before any byte of a response (as a dead host's accept-then-drop) */
  | { kind: 'refuse' }
  /** TCP RST at once */
  | { kind: 'rst' }
  /** answer this status without reaching the target: a kube Status body, `body` as given, or none (`null`) */
  | { kind: 'status'; code: number; message?: string; body?: string | null }
  /** send N bytes of headers or body, then keep the socket open and silent */
  | { kind: 'stall'; phase: 'headers' | 'body'; bytes: number }
  /** send N bytes of headers or body, then a clean FIN */
  | { kind: 'cut'; phase: 'headers' | 'body'; bytes: number }
  /** send N bytes of headers or body, then a TCP RST */
  | { kind: 'rstAfter'; phase: 'headers' | 'body'; bytes: number }
  /** the target's headers, then a clean FIN before any body byte */
  | { kind: 'eofAfterHeaders' }
  /** `head`: these bytes instead of a response; `body`: the target's headers, then these bytes as the body */
  | { kind: 'garbage'; where: 'head' | 'body'; bytes?: string }
  /** the whole body, `bytes` at a time every `intervalMs` */
  | { kind: 'drip'; bytes: number; intervalMs: number }
  /** a watch (NDJSON) body: forward K lines (events), then FIN / RST / silence */
  | { kind: 'cutAfterEvents'; events: number }
  | { kind: 'rstAfterEvents'; events: number }
  | { kind: 'stallAfterEvents'; events: number }
  /** a watch body: forward K events, then an ERROR event carrying this Status, then FIN */
  | { kind: 'statusAfterEvents'; events: number; code: number; message?: string };

export function faultName(f: Fault): string {
  switch (f.kind) {
    case 'status':
      return `status ${f.code}${f.body === null ? ' (no body)' : ''}`;
    case 'stall':
    case 'cut':
    case 'rstAfter':
      return `${f.kind} after ${f.bytes} ${f.phase} bytes`;
    case 'garbage':
      return `garbage ${f.where}`;
    case 'drip':
      return `drip ${f.bytes}B/${f.intervalMs}ms`;
    case 'cutAfterEvents':
    case 'rstAfterEvents':
    case 'stallAfterEvents':
      return `${f.kind} ${f.events}`;
    case 'statusAfterEvents':
      return `ERROR ${f.code} after ${f.events} events`;
    default:
      return f.kind;
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** a kube-apiserver Status body, as it answers errors (410 is "Expired", as for a compacted resourceVersion) */
export function statusBody(code: number, message?: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: message ?? (code === 410 ? 'too old resource version: 1 (2)' : `injected ${code}`),
    reason: REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'),
    code,
  });
}
