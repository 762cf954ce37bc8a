/**
 * The fleet status page (`/fleet/`): one self-contained document, no framework and no build step, so
 * the same bytes are served by Node and a Worker. It polls `/fleet/api/clusters` (state, version,
 * latency, last error per cluster) and counts objects of a chosen kind per cluster from the fleet's own
 * merged Table list (the CLUSTER column), with the caller's identity like any other request.
 * Written tight on purpose: no minifier touches a string, and every byte is in the worker's budget (issue 16).
 */
export const STATUS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>fleet-apiserver · fleet status</title>
<style>
:root{color-scheme:light dark;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--muted:#6e7781}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:68rem;padding:0 1rem}
h1{font-size:1.4rem;margin:0 0 .25rem}
.sub{color:var(--muted);margin:0 0 1.5rem}
table{border-collapse:collapse;width:100%;margin-bottom:2rem}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid #d0d7de55;vertical-align:top}
th{font-weight:600;font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.num{text-align:right;font-variant-numeric:tabular-nums}
.state{font-weight:600;white-space:nowrap}
.state::before{content:"●";margin-right:.4rem}
.ready{color:var(--ok)}.unreachable,.err,#problem{color:var(--bad)}.notready{color:var(--warn)}
.err{font-family:ui-monospace,monospace;font-size:.85rem;word-break:break-word}
.summary{display:flex;gap:2rem;margin-bottom:1.5rem}
.summary div{font-size:1.6rem;font-weight:600}
.summary span{display:block;font-size:.8rem;color:var(--muted);font-weight:400}
label{font-weight:600;margin-right:.5rem}
select{font:inherit;padding:.2rem .4rem}
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
<thead><tr><th>Cluster<th>State<th>Kubernetes<th class="num">Latency<th>Karmada<th>Last error</thead>
<tbody></tbody>
</table>
<p><label for="kind">Objects per cluster:</label> <select id="kind"></select></p>
<table id="counts" aria-label="objects per cluster">
<thead><tr><th>Cluster<th class="num">Objects</thead>
<tbody></tbody>
</table>
<script>
const base=location.pathname.replace(/\\/fleet\\/?$/,'');
const $=(id)=>document.getElementById(id);
const get=async(path,accept,what)=>{
const r=await fetch(base+path,{headers:{Accept:accept},cache:'no-store'});
if(!r.ok)throw new Error(what+': '+r.status);
return r.json();
};
const cell=(text,cls)=>{const td=document.createElement('td');td.textContent=text;if(cls)td.className=cls;return td};
const row=(key,cells)=>{const tr=document.createElement('tr');tr.append(...cells);tr.dataset.cluster=key;return tr};
const fill=(id,rows)=>$(id).tBodies[0].replaceChildren(...rows);
for(const p of['/api/v1/pods','/apis/apps/v1/deployments','/api/v1/services','/api/v1/namespaces','/api/v1/nodes','/api/v1/configmaps','/apis/batch/v1/jobs'])$('kind').add(new Option(p.split('/').pop(),p));
async function clusters(){
const list=(await get('/fleet/api/clusters','application/json','clusters')).clusters;
fill('clusters',list.map((c)=>{
const tr=row(c.name,[cell(c.name),cell(c.state,'state '+c.state.replace(/\\s/g,'')),cell(c.version||'–'),
cell(c.latencyMs==null?'–':c.latencyMs+' ms','num'),cell(c.karmada||'–'),cell(c.lastError?c.lastError.message:'','err')]);
tr.dataset.state=c.state;
return tr;
}));
const ready=list.filter((c)=>c.state==='ready').length;
$('total').firstChild.nodeValue=list.length;
$('ready').firstChild.nodeValue=ready;
$('down').firstChild.nodeValue=list.length-ready;
return list;
}
async function counts(list){
const per=new Map(list.map((c)=>[c.name,0]));
const kind=$('kind');
let cont='';
for(let page=0;page<20;page++){
const q=new URLSearchParams({limit:'500',includeObject:'None'});
if(cont)q.set('continue',cont);
const t=await get(kind.value+'?'+q,'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',kind.selectedOptions[0].text);
const at=(t.columnDefinitions||[]).findIndex((d)=>d.name==='Cluster');
for(const rw of t.rows||[]){const c=at>=0?rw.cells[at]:'';per.set(c,(per.get(c)||0)+1)}
cont=(t.metadata&&t.metadata.continue)||'';
if(!cont)break;
}
fill('counts',[...per].map(([c,n])=>row(c,[cell(c),cell(String(n),'num')])));
}
async function tick(){
try{await counts(await clusters());$('problem').textContent=''}catch(e){$('problem').textContent='· '+e.message}
const now=new Date(),u=$('updated'),b=document.body.dataset;
u.textContent=now.toLocaleTimeString();
u.dateTime=now.toISOString();
b.ticks=String(Number(b.ticks||0)+1);
}
$('kind').addEventListener('change',tick);
tick();
setInterval(tick,Number(new URLSearchParams(location.search).get('refresh')||2000));
</script>
</body>
</html>
`;
