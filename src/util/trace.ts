/**
 * W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/), which kube-apiserver accepts
 * and passes on: the fleet forwards a valid header to every upstream call of the request and writes the
 * trace id into the audit line. An invalid header is ignored, as the specification asks.
 */
export interface TraceParent {
  header: string;
  traceId: string;
  spanId: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export function parseTraceparent(value: string | null | undefined): TraceParent | undefined {
  if (!value) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId] = m as unknown as [string, string, string, string];
  // version ff is invalid; version 00 has exactly four fields; all-zero ids are invalid
  if (version === 'ff' || (version === '00' && m[5] !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { header: value.trim(), traceId, spanId };
}
