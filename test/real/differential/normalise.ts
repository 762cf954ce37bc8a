/**
 * What must differ between two servers holding the same objects, normalised away before comparing: uids,
 * times, resource versions, continue tokens, allocated IPs, Age cells, and the numbers in messages that name
 * a resource version. Everything else is compared value by value and reported as JSON paths.
 */

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;
/** keys whose values are one server's own (normalised to their presence) */
const OWN = new Set([
  'uid',
  'resourceVersion',
  'continue',
  'clusterIP',
  'clusterIPs',
  'storageVersionHash',
  'serverAddress',
]);

/** A message with its server-specific numbers (resource versions) replaced. */
export function normaliseMessage(m: string): string {
  return m
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\b\d{3,}\b/g, '<n>');
}

export function normalise(v: unknown, key = ''): unknown {
  if (OWN.has(key)) return v === undefined || v === '' ? v : `<${key}>`;
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort()) out[k] = normalise(o[k], k);
    // a generated name's random suffix
    if (typeof o.generateName === 'string' && typeof o.name === 'string' && o.name.startsWith(o.generateName))
      out.name = `${o.generateName}<suffix>`;
    // a Table's Age cells tell time since creation, which differs by the moments the two seeds took
    if (o.kind === 'Table' && Array.isArray(o.columnDefinitions) && Array.isArray(o.rows)) {
      const ages = (o.columnDefinitions as Array<{ name: string }>)
        .map((c, i) => (/^(Age|Last Seen|Duration|Last Schedule|Created At)$/.test(c.name) ? i : -1))
        .filter((i) => i >= 0);
      out.rows = (out.rows as Array<{ cells?: unknown[] }>).map((r) => ({
        ...r,
        cells: r.cells?.map((c, i) => (ages.includes(i) ? '<age>' : c)),
      }));
    }
    return out;
  }
  if (typeof v === 'string') {
    if (TIME.test(v)) return '<time>';
    if (UUID.test(v)) return '<uid>';
    if (IPV4.test(v) && key !== 'ip') return '<ip>';
    if (key === 'message' || key === 'reason' || key === 'text') return normaliseMessage(v);
  }
  return v;
}

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'absent' : s.length > 160 ? `${s.slice(0, 157)}...` : s;
};

/** The paths where `sim` and `real` differ (both normalised), each with both values. */
export function differences(sim: unknown, real: unknown, path = '', out: string[] = []): string[] {
  if (out.length >= 8) return out;
  if (sim && real && typeof sim === 'object' && typeof real === 'object') {
    if (Array.isArray(sim) !== Array.isArray(real)) {
      out.push(`${path || '.'}: sim said ${show(sim)}, real said ${show(real)}`);
      return out;
    }
    if (Array.isArray(sim) && Array.isArray(real)) {
      if (sim.length !== real.length) {
        out.push(
          `${path}: sim said ${sim.length} entries ${show(sim)}, real said ${real.length} ${show(real)}`,
        );
        return out;
      }
      for (const [i, x] of sim.entries()) differences(x, real[i], `${path}[${i}]`, out);
      return out;
    }
    const s = sim as Record<string, unknown>;
    const r = real as Record<string, unknown>;
    for (const k of new Set([...Object.keys(s), ...Object.keys(r)]))
      differences(s[k], r[k], `${path}.${k}`, out);
    return out;
  }
  if (
    typeof sim === 'string' &&
    typeof real === 'string' &&
    sim !== real &&
    (sim.length > 150 || real.length > 150)
  ) {
    // long texts: where they part
    let i = 0;
    while (i < sim.length && sim[i] === real[i]) i++;
    const at = (t: string) => JSON.stringify(`${i > 30 ? '…' : ''}${t.slice(Math.max(0, i - 30), i + 90)}`);
    out.push(`${path || '.'}: from character ${i}, sim said ${at(sim)}, real said ${at(real)}`);
  } else if (JSON.stringify(sim) !== JSON.stringify(real))
    out.push(`${path || '.'}: sim said ${show(sim)}, real said ${show(real)}`);
  return out;
}
