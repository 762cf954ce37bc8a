/**
 * The simulator kept honest: the same catalogue of requests (differential/catalogue.ts) goes to a simulated
 * member and to a real one (kube-apiserver 1.35 of the bed), holding the same objects in a namespace of the
 * check's own; the answers are normalised (uids, times, RVs: differential/normalise.ts) and compared. A
 * difference is either fixed in sim/ or listed in differential/allowed.ts with why it may stay; any other fails
 * the test.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSim } from '../../deploy/node/demo.ts';
import type { ServedHandle } from '../../deploy/node/http.ts';
import { SimCluster } from '../../sim/index.ts';
import { bed, until } from './bed.ts';
import { ALLOWED } from './differential/allowed.ts';
import type { Ctx } from './differential/catalogue.ts';
import { closeAgents, send, type Target } from './differential/client.ts';
import { check, prepare, UA } from './differential/runner.ts';

describe('the simulator against a real kube-apiserver, request by request', () => {
  // a letter first: an id of digits, `e` and digits (`28e425`) is a number to a YAML 1.2 reader of the real
  // server's YAML, which writes it unquoted (YAML 1.1), and the label would read as Infinity
  const id = `r${randomBytes(3).toString('hex')}`;
  const ns = `diff-${id}`;
  let handle: ServedHandle | undefined;
  let sim: SimCluster | undefined;
  let simT: Target;
  let realT: Target | undefined;
  let prepared: { ctx: Ctx; onlyReal: string[]; onlySim: string[] };

  beforeAll(async () => {
    const m = bed().members[0]!;
    realT = { name: 'real', url: m.url, tls: { ca: m.ca, cert: m.admin.cert, key: m.admin.key } };
    sim = new SimCluster({ name: m.name, seed: false });
    handle = await serveSim(sim);
    simT = { name: 'sim', url: handle.url };
    prepared = await prepare(simT, realT, ns, id, until);
  });

  afterAll(async () => {
    if (realT)
      await send(realT, {
        method: 'DELETE',
        path: `/api/v1/namespaces/${ns}`,
        headers: { 'user-agent': UA },
      }).catch(() => undefined);
    closeAgents();
    await handle?.close(1000);
    sim?.close();
  });

  it('answers the catalogue as the real member does (differences fixed in sim/ or allowed with why)', async () => {
    const { ctx, onlyReal, onlySim } = prepared;
    if (onlyReal.length)
      console.log(
        `differential: skipped, the simulator does not serve (${onlyReal.length}): ${onlyReal.join(' ')}`,
      );
    const started = Date.now();
    const { cases, found } = await check(simT, realT!, ctx);
    found.unshift(...onlySim.map((k) => `discovery: ${k}: sim serves it, real does not`));
    const allowed = found.filter((f) => ALLOWED.some((a) => a.at.test(f)));
    const unexpected = found.filter((f) => !allowed.includes(f));
    const unused = ALLOWED.filter((a) => !found.some((f) => a.at.test(f)));
    console.log(
      `differential: ${cases} cases in ${Math.round((Date.now() - started) / 1000)} s, ` +
        `${found.length} differences, ${allowed.length} allowed, ${unexpected.length} not` +
        (unused.length ? `; allowances no longer needed: ${unused.map((a) => a.at.source).join(', ')}` : ''),
    );
    expect(cases).toBeGreaterThan(300);
    expect(unexpected, unexpected.join('\n')).toEqual([]);
  }, 600_000);
});
