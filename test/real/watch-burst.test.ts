/**
 * A burst of changes in two members, replayed to a merged watch from its list's RV: every change arrives
 * once, promptly, through either fleet. Large objects make the members' answers many TLS records per
 * read, which is where the fleet once lost bytes (a paused TLS connection still hands over what it had
 * decrypted; docs/watch-burst.md): rounds stalled for a minute or lost their last events for good.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsRequest } from '../../testbed/process.ts';
import { bed, type FleetInfo } from './bed.ts';
import { RealCluster } from './control.ts';

const ns = `burst-${randomBytes(3).toString('hex')}`;
const b = bed();
const members = b.members.slice(0, 2).map((m) => new RealCluster(m));
/** ConfigMaps per member, changed once per round */
const E = 300;
/** rounds per fleet: one round lost events about one time in three before the fix (docs/watch-burst.md) */
const ROUNDS = 5;
const PAD = 'x'.repeat(8 * 1024);
const CM = (i: number) => `cm-${String(i).padStart(4, '0')}`;
const path = `/api/v1/namespaces/${ns}/configmaps`;

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const indices = Array.from({ length: E }, (_, i) => i);

beforeAll(async () => {
  for (const m of members) {
    await m.ensureNamespace(ns);
    await pool(indices, 8, (i) =>
      m.ok('POST', path, { metadata: { name: CM(i) }, data: { round: '0', pad: PAD } }),
    );
  }
}, 300_000);

afterAll(async () => {
  for (const m of members) await m.call('DELETE', `/api/v1/namespaces/${ns}`).catch(() => {});
});

/** GET through a fleet as the bed's admin, parsed */
function fleetGet(f: FleetInfo, url: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${f.url}${url}`,
      { ca: b.fleetCA, cert: b.admin.cert, key: b.admin.key, headers: { accept: 'application/json' } },
      (res) => {
        let s = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (s += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(s)) : reject(new Error(s))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Heard {
  /** events of this round by fleet name */
  seen: Map<string, number>;
  ms: number;
  why: string;
}

/** Watches from `rv` until `expect` distinct objects of round `round` came, the stream ends, or `boundMs`. */
function watchRound(
  f: FleetInfo,
  rv: string,
  round: string,
  expect: number,
  boundMs: number,
): Promise<Heard> {
  return new Promise((resolve) => {
    const seen = new Map<string, number>();
    const t0 = performance.now();
    let over = false;
    const finish = (why: string) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ seen, ms: performance.now() - t0, why });
    };
    const timer = setTimeout(() => finish('the bound passed'), boundMs);
    const req = request(
      `${f.url}${path}?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`,
      { ca: b.fleetCA, cert: b.admin.cert, key: b.admin.key, headers: { accept: 'application/json' } },
      (res) => {
        if (res.statusCode !== 200) return finish(`HTTP ${res.statusCode}`);
        let carry = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          const lines = (carry + d).split('\n');
          carry = lines.pop()!;
          for (const line of lines) {
            if (!line.trim() || over) continue;
            const ev = JSON.parse(line);
            if (ev.type === 'BOOKMARK') continue;
            if (ev.type !== 'MODIFIED' || ev.object.data?.round !== round)
              return finish(`unexpected ${ev.type} ${JSON.stringify(ev.object).slice(0, 200)}`);
            const name: string = ev.object.metadata.name;
            seen.set(name, (seen.get(name) ?? 0) + 1);
            if (seen.size >= expect) return finish('all came');
          }
        });
        res.on('end', () => finish('the stream ended'));
        res.on('error', () => {});
      },
    );
    req.on('error', (e) => finish(`error ${e.message}`));
    req.end();
  });
}

let round = 0;

describe.each(['karmada', 'direct'] as const)('a burst of changes through the %s fleet', (name) => {
  const f = b.fleets[name];
  it(`${E} changes in each of two members, replayed from the list's RV, each arrive once (${ROUNDS} rounds)`, async () => {
    for (let r = 0; r < ROUNDS; r++) {
      const rv: string = (await fleetGet(f, path)).metadata.resourceVersion;
      const tag = String(++round);
      await Promise.all(
        members.map((m) =>
          pool(indices, 8, async (i) => {
            const res = await httpsRequest(
              `${m.info.url}${path}/${CM(i)}`,
              { ca: m.info.ca, cert: m.info.admin.cert, key: m.info.admin.key },
              {
                method: 'PATCH',
                body: JSON.stringify({ data: { round: tag } }),
                contentType: 'application/merge-patch+json',
                timeoutMs: 30_000,
              },
            );
            if (res.status !== 200) throw new Error(`${m.info.name}: PATCH ${CM(i)}: ${res.status}`);
          }),
        ),
      );
      // 600 events of 8 KiB arrive in well under a second on an idle bed; the bound is for a loaded one
      const heard = await watchRound(f, rv, tag, E * members.length, 60_000);
      const byCluster: Record<string, number> = {};
      for (const n of heard.seen.keys()) {
        const c = /\.clusterspace\.([^.]+)$/.exec(n)?.[1] ?? n;
        byCluster[c] = (byCluster[c] ?? 0) + 1;
      }
      const twice = [...heard.seen].filter(([, k]) => k > 1).map(([n]) => n);
      expect({ round: r + 1, why: heard.why, byCluster, twice }).toEqual({
        round: r + 1,
        why: 'all came',
        byCluster: Object.fromEntries(members.map((m) => [m.info.name, E])),
        twice: [],
      });
    }
  }, 600_000);
});
