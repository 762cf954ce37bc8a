/**
 * The folder rules of docs/architecture.md, as data the import checker (imports.test.ts) applies to the
 * resolved import graph (graph.ts). Paths are repo-relative: a prefix ending in `/` is a folder, anything
 * else one file. The rules cover production files (src/, sim/, deploy/ without tests); tests may import
 * what they test and the simulator they test it against.
 *
 * Every rule carries a `probe`: an import that breaks it. The checker's own test adds each probe to the
 * real tree (in memory) and asserts that the rule reports it, so a rule whose paths went stale
 * (a folder renamed, a typo) fails loudly instead of passing forever.
 */
import { builtinModules } from 'node:module';
import { under } from './graph.ts';

export interface Allowed {
  path: string;
  /** only `import type`: erased at run time, so it neither pulls code in nor runs anything */
  typeOnly?: boolean;
}

export interface Rule {
  name: string;
  /** why the rule exists, shown with each violation */
  why: string;
  /** the importing files the rule covers */
  files: string[];
  except?: string[];
  /** when given: the only project files (anything resolved inside the repo) these files may import */
  allow?: (string | Allowed)[];
  /** project files or packages they may not import (`#node` stands for every Node built-in module) */
  deny?: string[];
  /** exceptions to `deny` */
  denyExcept?: string[];
  /** under this folder, each sub-folder is one unit: its files may import each other despite `deny` */
  unitsUnder?: string;
  /** an import that breaks this rule: `import '<import>'` (or `import type`) added to `file` */
  probe: { file: string; import: string; typeOnly?: boolean };
  /** set while the tree still breaks the rule (planned work in flight): the test then expects it to fail */
  todo?: string;
}

/** Modules that exist only on Node (or only in Node-side tooling). */
export const NODE_ONLY_PACKAGES = ['#node', 'undici', 'ws', '@hono/node-server'];

/** The one dispatcher allowed to import the routes it dispatches to. */
export const ROUTE_DISPATCHER = 'src/routes/index.ts';
/**
 * Modules in src/routes/ that are not routes: what several routes share (each says so in its header).
 * They may import no route either.
 */
export const ROUTE_HELPERS = [
  'src/routes/respond.ts', // writing answers and Statuses
  'src/routes/gather.ts', // asking every cluster for one discovery document (discovery, OpenAPI)
  'src/routes/locate.ts', // finding the owning cluster of a named object (write, connect)
  'src/routes/lastknown.ts', // each cluster's discovery as last seen (discovery)
  'src/routes/upgrade.ts', // relaying an HTTP/1.1 upgrade to one cluster (connect, passthrough)
  'src/routes/propagation.ts', // a Karmada template or copy enriched from its bindings for a GET (get)
  'src/routes/testing.ts', // the route tests' in-process harness
];

/**
 * A room holds one streaming verb whole: its route, plan, reading and merging. Only the route table
 * enters a room, through its entry; the few other ways in are listed with each room. Its plan and its
 * merge stay pure, as plan/ and merge/ are.
 */
export interface Room {
  entry: string;
  /** files of the room any file may import (what the room shares, each says with whom) */
  sharedWith: string[];
  /** files outside the room that may import any of it (entries of another kind) */
  enteredBy: string[];
  /** the room's pure plan: no I/O, tested alone */
  plans: string[];
  /** the room's pure merging: codecs and merges, no I/O, tested alone */
  merges: string[];
}

export const ROOMS: Record<string, Room> = {
  'src/list/': {
    entry: 'src/list/route.ts',
    // an upstream body read under the body-idle timeout (routes/gather.ts reads discovery documents so)
    sharedWith: ['src/list/read.ts'],
    enteredBy: [],
    plans: ['src/list/plan.ts'],
    merges: ['src/list/merge.ts'],
  },
  'src/watch/': {
    entry: 'src/watch/route.ts',
    // the process-wide hooks installNodeHooks makes: native line equality, one shared heartbeat timer
    sharedWith: ['src/watch/read.ts', 'src/watch/heartbeat.ts'],
    // the Workers entry's FleetRelay serves a group of a wide watch (watchStream)
    enteredBy: ['src/worker.ts'],
    plans: ['src/watch/plan.ts'],
    merges: [
      'src/watch/merge.ts',
      'src/watch/bytes.ts',
      'src/watch/columns.ts',
      'src/watch/event.ts',
      'src/watch/initial.ts',
      'src/watch/rv.ts',
      'src/watch/table.ts',
    ],
  },
};

/**
 * Node scripts kept beside the code they generate for, run by hand and never imported: exempt from the
 * runtime rules (they read files and load modules by computed path), still parsed and still in the
 * cycle check.
 */
export const TOOLS = ['sim/proto/gen.mjs'];

/** The one shipped file outside the Node seam that imports a Node module (node:crypto, which workerd has). */
const NAME_DIGEST = 'src/merge/names/hash.ts';

/** The leaves every folder may import. */
const LEAVES = ['src/kube/', 'src/util/'];
const TYPES: Allowed = { path: 'src/types.ts', typeOnly: true };

export const RULES: Rule[] = [
  {
    name: 'kube is a leaf',
    why: 'the Kubernetes vocabulary (Status, negotiation, selectors, protobuf envelope) is shared by every folder, so it depends on nothing but the byte helpers',
    files: ['src/kube/'],
    allow: ['src/kube/', 'src/util/'],
    probe: { file: 'src/kube/status.ts', import: '../merge/names/index.ts' },
  },
  {
    name: 'util is a leaf',
    why: 'bytes, base64, NDJSON lines and the TTL cache are plain helpers any folder may use, kube/ included',
    files: ['src/util/'],
    allow: ['src/util/'],
    probe: { file: 'src/util/__probe__.ts', import: '../kube/status.ts' },
  },
  {
    name: 'types.ts imports only types',
    why: 'the shared types leaf must pull in no code, so importing it never closes a circle at run time',
    files: ['src/types.ts'],
    allow: [{ path: 'src/', typeOnly: true }],
    probe: { file: 'src/types.ts', import: './kube/status.ts' },
  },
  {
    name: 'request is a leaf',
    why: 'the one path parser reads a URL and nothing else',
    files: ['src/request/'],
    allow: ['src/request/', ...LEAVES],
    probe: { file: 'src/request/info.ts', import: '../merge/names/index.ts' },
  },
  {
    name: 'config is a leaf',
    why: 'the config schema and kubeconfig reader are read by the entries and handed down',
    files: ['src/config/'],
    allow: ['src/config/', ...LEAVES],
    probe: { file: 'src/config/schema.ts', import: '../upstreams/client.ts' },
  },
  {
    name: 'metrics is a leaf',
    why: 'counters and histograms in the text exposition format: the routes and the chain record into them',
    files: ['src/metrics/'],
    allow: ['src/metrics/', ...LEAVES, TYPES],
    probe: { file: 'src/metrics/__probe__.ts', import: '../upstreams/fanout.ts' },
  },
  {
    name: 'merge is pure',
    why: 'codecs and merges do no I/O and know no route, upstream or platform: they are tested alone',
    files: ['src/merge/'],
    allow: ['src/merge/', ...LEAVES, TYPES],
    probe: { file: 'src/merge/rv/index.ts', import: '../../upstreams/fanout.ts' },
  },
  {
    name: 'plan is pure',
    why: 'plans map (request, query, membership) to targets and upstream requests; no server is needed to test them',
    files: ['src/plan/'],
    allow: ['src/plan/', 'src/merge/', 'src/request/', ...LEAVES, TYPES],
    probe: { file: 'src/plan/__probe__.ts', import: '../upstreams/fanout.ts' },
  },
  {
    name: 'auth sits below the chain',
    why: 'who the caller is and what identity goes upstream: no merging, no routes, no middleware',
    files: ['src/auth/'],
    allow: ['src/auth/', 'src/config/', 'src/request/', ...LEAVES, TYPES],
    probe: { file: 'src/auth/__probe__.ts', import: '../merge/names/index.ts' },
  },
  {
    name: 'upstreams know no request handling',
    why: 'talking to clusters must not depend on the routes, the chain, the plans or the composition root',
    files: ['src/upstreams/'],
    allow: ['src/upstreams/', 'src/auth/', 'src/config/', 'src/merge/', 'src/request/', ...LEAVES, TYPES],
    probe: { file: 'src/upstreams/__probe__.ts', import: '../plan/__probe__.ts', typeOnly: true },
  },
  {
    name: 'platform implements the upstream seam',
    why: 'the Node/Workers seam implements what upstreams/ declares; it knows no route, chain or plan',
    files: ['src/platform/'],
    allow: [
      'src/platform/',
      'src/upstreams/',
      'src/config/',
      ...ROOMS['src/watch/']!.sharedWith,
      // the item scanner's WebAssembly lane, whose module the platform gives (as the worker entry does)
      'src/merge/jsonsplit/wasm/lane.ts',
      ...LEAVES,
      TYPES,
    ],
    probe: { file: 'src/platform/__probe__.ts', import: '../routes/respond.ts' },
  },
  ...Object.entries(ROOMS).flatMap(([room, r]): Rule[] => [
    {
      name: `only the route table enters ${room}`,
      why: 'a verb room is read from its route down; a way in from the side would tie another verb to its insides',
      files: ['src/'],
      except: [room, ROUTE_DISPATCHER, ...r.enteredBy],
      deny: [room],
      denyExcept: r.sharedWith,
      probe: { file: 'src/routes/get.ts', import: `../${r.entry.slice('src/'.length)}` },
    },
    {
      name: `${room} is a room of its verb`,
      why: 'a room reads its upstreams and merges through the shared folders, never through another room or a route',
      files: [room],
      allow: [
        room,
        'src/merge/',
        'src/plan/',
        'src/request/',
        'src/auth/',
        'src/upstreams/',
        'src/routes/respond.ts',
        'src/routes/testing.ts',
        ...LEAVES,
        TYPES,
      ],
      probe: { file: r.entry, import: '../routes/get.ts' },
    },
    {
      name: `${room}'s plan is pure`,
      why: 'as plan/: a plan maps (request, query, membership) to targets and upstream requests, tested alone',
      files: r.plans,
      allow: [...r.plans, 'src/plan/', 'src/merge/', 'src/request/', ...LEAVES, TYPES],
      probe: { file: r.plans[0]!, import: '../upstreams/fanout.ts' },
    },
    {
      name: `${room}'s merge is pure`,
      why: 'as merge/: codecs and merges do no I/O and know no route, upstream or platform',
      files: r.merges,
      allow: [...r.merges, 'src/merge/', ...LEAVES, TYPES],
      probe: { file: r.merges[0]!, import: './route.ts' },
    },
  ]),
  {
    name: 'middleware comes before routes',
    why: 'a filter of the chain knows nothing of the handlers after it',
    files: ['src/middleware/'],
    deny: [
      'src/routes/',
      ...Object.keys(ROOMS),
      'src/plan/',
      'src/platform/',
      'src/app.ts',
      'src/fleet.ts',
      'src/worker.ts',
    ],
    probe: { file: 'src/middleware/__probe__/index.ts', import: '../../routes/respond.ts' },
  },
  {
    name: 'no route imports another route',
    why: 'routes are independent handlers; only the dispatcher knows them all',
    files: ['src/routes/'],
    except: [ROUTE_DISPATCHER],
    deny: ['src/routes/'],
    denyExcept: ROUTE_HELPERS,
    // a route of several files has a folder of its own (src/routes/status/)
    unitsUnder: 'src/routes/',
    probe: { file: 'src/routes/__probe__.ts', import: './__probe2__.ts' },
  },
  {
    name: 'the composition root is imported by entries only',
    why: 'src/app.ts wires everything; anything that imports it back closes a circle through the whole tree',
    files: ['src/'],
    except: ['src/worker.ts'],
    deny: ['src/app.ts'],
    probe: { file: 'src/upstreams/__probe__.ts', import: '../app.ts' },
  },
  {
    name: 'platform/node.ts is imported by deploy/node only',
    why: 'the Node half of the seam must never reach the worker bundle',
    files: ['src/', 'sim/', 'deploy/'],
    except: ['deploy/node/'],
    deny: ['src/platform/node.ts'],
    probe: { file: 'src/fleet.ts', import: './platform/node.ts' },
  },
  {
    name: 'platform/worker.ts is imported by the worker entry only',
    why: 'the Workers half of the seam is chosen by src/worker.ts alone',
    files: ['src/', 'sim/', 'deploy/'],
    except: ['src/worker.ts'],
    deny: ['src/platform/worker.ts'],
    probe: { file: 'src/fleet.ts', import: './platform/worker.ts' },
  },
  {
    name: 'src/ ships alone',
    why: 'the shipped code does not depend on the Node entry, the simulator, the tests or the benchmarks',
    files: ['src/'],
    deny: ['deploy/', 'sim/', 'test/', 'bench/', 'scripts/'],
    probe: { file: 'src/routes/__probe__.ts', import: '../../sim/index.ts' },
  },
  {
    name: 'Node-only modules stay behind the seam',
    why: 'src/ runs on Workers too and the simulator runs in either: node:*, undici, ws and @hono/node-server only in src/platform/node.ts (deploy/ is the Node side)',
    files: ['src/', 'sim/'],
    except: ['src/platform/node.ts', NAME_DIGEST, ...TOOLS],
    deny: NODE_ONLY_PACKAGES,
    probe: { file: 'src/merge/__probe__.ts', import: 'node:buffer' },
  },
  {
    name: 'the name digest takes node:crypto only',
    why: "workerd provides node:crypto too (wrangler.toml's nodejs_compat): the synchronous SHA-256 of shortened names; no other Node module runs there",
    files: [NAME_DIGEST],
    deny: NODE_ONLY_PACKAGES,
    denyExcept: ['node:crypto'],
    probe: { file: NAME_DIGEST, import: 'node:buffer' },
  },
  {
    name: 'Workers-only modules stay behind the seam',
    why: 'cloudflare:* exists only in workerd: the worker entry and its half of the platform seam',
    files: ['src/', 'sim/', 'deploy/'],
    except: ['src/worker.ts', 'src/platform/worker.ts'],
    deny: ['cloudflare:workers', 'cloudflare:sockets', 'cloudflare:email'],
    probe: { file: 'src/upstreams/__probe__.ts', import: 'cloudflare:sockets' },
  },
  {
    name: 'the simulator shares no code with the fleet',
    why: 'an oracle that shares code with what it checks cannot catch that code’s bugs (DESIGN.md)',
    files: ['sim/'],
    deny: ['src/', 'deploy/', 'test/', 'bench/'],
    probe: { file: 'sim/__probe__.ts', import: '../src/merge/names.ts' },
  },
];

export interface Violation {
  rule: string;
  from: string;
  /** what was imported: a repo-relative file or a package name */
  to: string;
  line: number;
}

interface Edge {
  from: string;
  target: { kind: 'file'; path: string } | { kind: 'package'; name: string } | { kind: 'unresolved' };
  typeOnly: boolean;
  line: number;
}

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function denies(pattern: string, to: string, isPackage: boolean): boolean {
  if (pattern === '#node') return isPackage && (to.startsWith('node:') || BUILTINS.has(to));
  return isPackage ? to === pattern : under(to, pattern);
}

/** Both files in the same sub-folder of `root` (`src/routes/status/a.ts`, `src/routes/status/b.ts`). */
function sameUnit(root: string, a: string, b: string): boolean {
  if (!a.startsWith(root) || !b.startsWith(root)) return false;
  const unit = (p: string) => p.slice(root.length).split('/');
  const [ua, ub] = [unit(a), unit(b)];
  return ua.length > 1 && ub.length > 1 && ua[0] === ub[0];
}

function covers(rule: Rule, file: string): boolean {
  return rule.files.some((f) => under(file, f)) && !(rule.except ?? []).some((f) => under(file, f));
}

export function checkRules(edges: Edge[], rules: Rule[] = RULES): Violation[] {
  const out: Violation[] = [];
  for (const rule of rules) {
    for (const e of edges) {
      if (e.target.kind === 'unresolved' || !covers(rule, e.from)) continue;
      const isPackage = e.target.kind === 'package';
      const to = e.target.kind === 'package' ? e.target.name : e.target.path;
      let bad = false;
      if (rule.allow && !isPackage) {
        bad = !rule.allow.some((a) =>
          typeof a === 'string' ? under(to, a) : under(to, a.path) && (!a.typeOnly || e.typeOnly),
        );
      }
      if (rule.deny?.some((d) => denies(d, to, isPackage))) {
        const excepted = (rule.denyExcept ?? []).some((x) => under(to, x));
        bad = bad || !(excepted || (rule.unitsUnder && sameUnit(rule.unitsUnder, e.from, to)));
      }
      if (bad) out.push({ rule: rule.name, from: e.from, to, line: e.line });
    }
  }
  return out;
}
