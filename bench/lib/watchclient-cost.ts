/**
 * What a watch client's CPU per event follows (not a test): the line's bytes, or the pace events come at.
 * 1,000 chunked watch answers from a child process, each write one line to one watch, round robin; the
 * client is merged-watch's own (./watchers.ts: reads, splits lines, its regexes). Lines as the fleet
 * writes them (426 bytes: names, cluster label and annotation, composite RV) or as the floor and direct
 * do (280), at three paces: 100 a macrotask, 10 a millisecond, 1 a macrotask; the order swapped every
 * other round; medians of 5 rounds of 4,000 events.
 *   node --import tsx bench/lib/watchclient-cost.ts
 */
import { fork } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { nowMs, watchersState } from './watchers.ts';

const W = 1000;
if (process.argv[2] === 'server') {
  const res: ServerResponse[] = [];
  const srv = createServer((req, r) => {
    r.writeHead(200, { 'content-type': 'application/json' });
    r.flushHeaders();
    res[Number(/bx-(\d+)/.exec(req.url!)![1])] = r;
  });
  srv.listen(0, '127.0.0.1', () => process.send!({ port: (srv.address() as any).port }));
  const line = (kind: string, seq: number) => {
    const t = nowMs().toFixed(3);
    return kind === 'fleet'
      ? `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"tick.clusterspace.member1","namespace":"bf-0","uid":"e67b2245-e6e3-4756-9f8c-78a65e27632d","resourceVersion":"1709577948048032043625043626043626","creationTimestamp":"2026-12-06T16:04:38Z","annotations":{"fleet.karmada.io/cluster":"member1"},"labels":{"fleet.karmada.io/cluster":"member1"}},"data":{"t":"${t}","seq":"${seq}","c":"0"}}}\n`
      : `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"tick","namespace":"bf-0","uid":"e67b2245-e6e3-4756-9f8c-78a65e27632d","resourceVersion":"3625","creationTimestamp":"2026-12-06T16:04:38Z"},"data":{"t":"${t}","seq":"${seq}","c":"0"}}}\n`;
  };
  let seq = 1;
  process.on('message', (m: any) => {
    const written = { watch: [] as number[], cluster: [] as number[], seq: [] as number[] };
    let k = 0;
    const startMs = nowMs();
    const per = m.per; // events per macrotask
    const step = () => {
      for (let b = 0; b < per && k < m.total; b++) {
        const w = k % W;
        written.watch.push(w);
        written.cluster.push(0);
        written.seq.push(seq);
        res[w]!.write(line(m.kind, seq++));
        k++;
      }
      if (k < m.total) m.gapMs ? setTimeout(step, m.gapMs) : setImmediate(step);
      else process.send!({ written, endMs: nowMs(), startMs });
    };
    step();
  });
} else {
  const child = fork(new URL(import.meta.url).pathname, ['server'], { execArgv: ['--import', 'tsx'] });
  const { port } = await new Promise<any>((r) => child.once('message', r));
  const st = watchersState();
  const o = await st.open({
    key: 'x',
    urls: Array.from({ length: W }, (_, i) => `http://127.0.0.1:${port}/bx-${i}`),
    timeoutMs: 30000,
    concurrency: 200,
  });
  console.log('opened', o.opened);
  const one = async (kind: string, per: number, gapMs: number) => {
    st.record();
    child.send({ kind, total: 4000, per, gapMs });
    const d = await new Promise<any>((r) => child.once('message', r));
    const s = await st.stop({ key: 'x', written: d.written, endMs: d.endMs, deadlineMs: 10000 });
    return { us: (s.loadCpuMs * 1000) / s.received, rate: s.received / ((s.lastMs - d.startMs) / 1000) };
  };
  const variants: Array<[string, number, number]> = [
    ['floor', 100, 0],
    ['fleet', 100, 0],
    ['floor', 10, 1],
    ['fleet', 10, 1],
    ['floor', 1, 0],
    ['fleet', 1, 0],
  ];
  const res: Record<string, number[]> = {};
  await one('floor', 100, 0);
  for (let r = 0; r < 5; r++)
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      const x = await one(...v);
      const key = `${v[0]} lines, ${v[1]} per ${v[2] ? `${v[2]} ms` : 'macrotask'}`;
      const add = (k: string, v: number) => {
        res[k] ??= [];
        res[k]!.push(v);
      };
      add(`${key}: client µs/event`, x.us);
      add(`${key}: delivered/s`, x.rate);
    }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  for (const [k, a] of Object.entries(res))
    console.log(k, med(a).toFixed(1), a.map((x) => x.toFixed(0)).join(' '));
  child.kill();
  process.exit(0);
}
