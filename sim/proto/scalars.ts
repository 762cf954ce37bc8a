/**
 * Kubernetes' special scalar types, as apimachinery writes them in JSON: metav1.Time (RFC 3339, whole
 * seconds, UTC: Go's time.RFC3339 after .UTC()), metav1.MicroTime (RFC 3339 with six fractional digits) and
 * metav1.Duration (Go's time.Duration String/ParseDuration: "1h0m0s", "1.5s", "300ms").
 */

export class ValueError extends Error {}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function rfc3339(seconds: number, frac: string): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) throw new ValueError(`time out of range: ${seconds}`);
  const y = d.getUTCFullYear();
  return `${pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}${frac}Z`;
}

/** metav1.Time: JSON keeps whole seconds (the nanos a Go client may send are dropped, as kube's JSON does). */
export function formatTime(seconds: number): string {
  return rfc3339(seconds, '');
}

export function formatMicroTime(seconds: number, nanos: number): string {
  return rfc3339(seconds, `.${pad(Math.floor(nanos / 1000), 6)}`);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp → [seconds, nanos] since the epoch; what Go's time.Parse(RFC3339) accepts. */
export function parseTime(s: string): [number, number] {
  const m = RFC3339.exec(s);
  if (!m)
    throw new ValueError(`parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": cannot parse`);
  const [, y = '', mo = '', d = '', h = '', mi = '', se = '', frac, zone = 'Z'] = m;
  // setUTCFullYear, not Date.UTC: the latter maps years 0-99 to 1900-1999.
  const dt = new Date(0);
  dt.setUTCFullYear(+y, +mo - 1, +d);
  dt.setUTCHours(+h, +mi, +se, 0);
  let secs = dt.getTime() / 1000;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    secs -= sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  const nanos = frac ? Number(frac.slice(1, 10).padEnd(9, '0')) : 0;
  return [secs, nanos];
}

const HOUR = 3_600_000_000_000n;
const MINUTE = 60_000_000_000n;
const SECOND = 1_000_000_000n;

function fraction(v: bigint, unit: bigint, digits: number): string {
  const whole = v / unit;
  const rest = (v % unit).toString().padStart(digits, '0').replace(/0+$/, '');
  return rest ? `${whole}.${rest}` : `${whole}`;
}

/** Go's time.Duration.String() for a count of nanoseconds. */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  const u = neg ? -ns : ns;
  let out: string;
  if (u < 1000n) out = `${u}ns`;
  else if (u < 1_000_000n) out = `${fraction(u, 1000n, 3)}µs`;
  else if (u < 1_000_000_000n) out = `${fraction(u, 1_000_000n, 6)}ms`;
  else {
    const h = u / HOUR;
    const m = (u % HOUR) / MINUTE;
    const s = fraction(u % MINUTE, SECOND, 9);
    out = h > 0n ? `${h}h${m}m${s}s` : m > 0n ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's time.ParseDuration. */
export function parseDuration(s: string): bigint {
  const bad = () => new ValueError(`time: invalid duration ${JSON.stringify(s)}`);
  let rest = s;
  let sign = 1n;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1n;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw bad();
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (rest) {
    const m = re.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw bad();
    const unit = DURATION_UNITS[m[3] ?? ''] ?? 1n;
    total += BigInt(m[1] || '0') * unit;
    if (m[2]) total += (BigInt(m[2]) * unit) / 10n ** BigInt(m[2].length);
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}
