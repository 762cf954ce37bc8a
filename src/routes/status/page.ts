/**
 * The fleet status page (`/fleet/`): one self-contained document, no framework and no build step, so
 * the same bytes are served by Node and a Worker. It polls `/fleet/api/clusters` (state, version,
 * latency, last error per cluster) and counts objects of a chosen kind per cluster from the fleet's own
 * merged Table list (the CLUSTER column), with the caller's identity like any other request.
 */
export const STATUS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fleet-apiserver · fleet status</title>
<style>
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #6e7781; }
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 68rem; padding: 0 1rem; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  .sub { color: var(--muted); margin: 0 0 1.5rem; }
  table { border-collapse: collapse; width: 100%; margin-bottom: 2rem; }
  th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #d0d7de55; vertical-align: top; }
  th { font-weight: 600; font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  .state { font-weight: 600; white-space: nowrap; }
  .state::before { content: "●"; margin-right: .4rem; }
  .ready { color: var(--ok); } .unreachable { color: var(--bad); } .notready { color: var(--warn); }
  .err { color: var(--bad); font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-word; }
  .summary { display: flex; gap: 2rem; margin-bottom: 1.5rem; }
  .summary div { font-size: 1.6rem; font-weight: 600; } .summary span { display: block; font-size: .8rem; color: var(--muted); font-weight: 400; }
  label { font-weight: 600; margin-right: .5rem; } select { font: inherit; padding: .2rem .4rem; }
  #problem { color: var(--bad); }
</style>
</head>
<body>
<h1>Fleet status</h1>
<p class="sub">Every cluster of the fleet as this server reaches it · updated <time id="updated">…</time> <span id="problem" role="alert"></span></p>
<section class="summary" aria-label="summary">
  <div id="total">–<span>clusters</span></div>
  <div id="ready" class="ready">–<span>reachable</span></div>
  <div id="down" class="unreachable">–<span>unreachable</span></div>
</section>
<table id="clusters" aria-label="clusters">
  <thead><tr><th>Cluster</th><th>State</th><th>Kubernetes</th><th class="num">Latency</th><th>Karmada</th><th>Last error</th></tr></thead>
  <tbody></tbody>
</table>
<p><label for="kind">Objects per cluster:</label>
<select id="kind">
  <option value="/api/v1/pods">pods</option>
  <option value="/apis/apps/v1/deployments">deployments</option>
  <option value="/api/v1/services">services</option>
  <option value="/api/v1/namespaces">namespaces</option>
  <option value="/api/v1/nodes">nodes</option>
  <option value="/api/v1/configmaps">configmaps</option>
  <option value="/apis/batch/v1/jobs">jobs</option>
</select></p>
<table id="counts" aria-label="objects per cluster">
  <thead><tr><th>Cluster</th><th class="num">Objects</th></tr></thead>
  <tbody></tbody>
</table>
<script>
const base = location.pathname.replace(/\\/fleet\\/?$/, '');
const $ = (id) => document.getElementById(id);
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
function cell(text, cls) { const td = document.createElement('td'); td.textContent = text; if (cls) td.className = cls; return td; }
function row(cells) { const tr = document.createElement('tr'); for (const c of cells) tr.append(c); return tr; }
async function clusters() {
  const r = await fetch(base + '/fleet/api/clusters', { headers: { Accept: 'application/json' }, cache: 'no-store' });
  if (!r.ok) throw new Error('clusters: ' + r.status);
  const doc = await r.json();
  const body = $('clusters').tBodies[0];
  body.replaceChildren(...doc.clusters.map((c) => {
    const tr = row([
      cell(c.name), cell(c.state, 'state ' + c.state.replace(/\\s/g, '')), cell(c.version || '–'),
      cell(c.latencyMs == null ? '–' : c.latencyMs + ' ms', 'num'),
      cell(c.karmada || '–'), cell(c.lastError ? c.lastError.message : '', 'err'),
    ]);
    tr.dataset.cluster = c.name; tr.dataset.state = c.state;
    return tr;
  }));
  $('total').firstChild.nodeValue = doc.clusters.length;
  $('ready').firstChild.nodeValue = doc.clusters.filter((c) => c.state === 'ready').length;
  $('down').firstChild.nodeValue = doc.clusters.filter((c) => c.state !== 'ready').length;
  return doc.clusters;
}
async function counts(list) {
  const per = new Map(list.map((c) => [c.name, 0]));
  let cont = '';
  for (let page = 0; page < 20; page++) {
    const q = new URLSearchParams({ limit: '500', includeObject: 'None' });
    if (cont) q.set('continue', cont);
    const r = await fetch(base + $('kind').value + '?' + q, { headers: { Accept: TABLE }, cache: 'no-store' });
    if (!r.ok) throw new Error($('kind').selectedOptions[0].text + ': ' + r.status);
    const t = await r.json();
    const at = (t.columnDefinitions || []).findIndex((d) => d.name === 'Cluster');
    for (const rw of t.rows || []) { const c = at >= 0 ? rw.cells[at] : ''; per.set(c, (per.get(c) || 0) + 1); }
    cont = (t.metadata && t.metadata.continue) || '';
    if (!cont) break;
  }
  $('counts').tBodies[0].replaceChildren(...[...per].map(([c, n]) => {
    const tr = row([cell(c), cell(String(n), 'num')]); tr.dataset.cluster = c; return tr;
  }));
}
async function tick() {
  try {
    const list = await clusters();
    await counts(list);
    $('problem').textContent = '';
  } catch (e) { $('problem').textContent = '· ' + e.message; }
  $('updated').textContent = new Date().toLocaleTimeString();
  $('updated').dateTime = new Date().toISOString();
  document.body.dataset.ticks = String(Number(document.body.dataset.ticks || 0) + 1);
}
$('kind').addEventListener('change', tick);
tick();
setInterval(tick, Number(new URLSearchParams(location.search).get('refresh') || 2000));
</script>
</body>
</html>
`;
