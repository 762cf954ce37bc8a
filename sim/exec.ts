/**
 * pods/exec, pods/attach and pods/portforward for the simulated clusters: what the kubelet does behind
 * kube-apiserver's upgrade, with the real wire protocols.
 *
 * - WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`, `channel.k8s.io`) for exec and attach: every
 *   binary message starts with its stream id (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize); v5 adds
 *   the close signal `[255, id]` (the client half-closes stdin). The command's end is a Status on the
 *   error stream (Success, or NonZeroExitCode with the ExitCode cause), then a normal close (1000).
 * - SPDY/3.1 (`spdy.ts`) for port-forward (`portforward.k8s.io`: an error and a data stream per
 *   connection, paired by `requestID`), raw (kubectl's fallback) or tunnelled in WebSocket messages
 *   (`SPDY/3.1+portforward.k8s.io`, what kubectl 1.35 tries first); and for exec/attach on the raw SPDY
 *   fallback (`v4.channel.k8s.io`: one SPDY stream per `streamType`).
 * - WebSocket port-forward as the kubelet serves it (`v4.channel.k8s.io`, or no subprotocol): a data and an
 *   error channel per `ports` entry, each channel's first server frame the port (2 bytes, little endian).
 * A forwarded port answers as httpd.ts says (HTTP on HTTP ports, declared or not, else an echo). Exec runs the
 * container's shell (shell.ts, with tar.ts over a per-container memfs.ts); attach streams the
 * container's log lines and echoes stdin.
 *
 * Web-standard only: the runtime entry (deploy/node/sim-upgrade.ts) owns sockets and the WebSocket
 * handshake and calls `simUpgrade` for the protocol.
 */

import type { KubeObject } from './catalog/types.ts';
import type { SimHost } from './host.ts';
import { openPort, type PortConn, type PortTarget } from './httpd.ts';
import { MemFs } from './memfs.ts';
import { parseResourcePath, queryBool } from './paths.ts';
import { hasProgram, runProgram, type ShellHost } from './shell.ts';
import { SpdyServer } from './spdy.ts';
import { badRequest, failure, internalError, notFound, type Status, statusResponse } from './status.ts';
import { grKey, objectKey } from './store.ts';

export const STREAM_STDIN = 0;
export const STREAM_STDOUT = 1;
export const STREAM_STDERR = 2;
export const STREAM_ERROR = 3;
export const STREAM_RESIZE = 4;
export const STREAM_CLOSE = 255;

export const EXEC_WS_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'];
export const EXEC_SPDY_PROTOCOLS = ['v4.channel.k8s.io'];
export const PORTFORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
export const PORTFORWARD_SPDY_PROTOCOL = 'portforward.k8s.io';
/** The kubelet's WebSocket port-forward protocols (binary channels; `` when the client offers none). */
export const PORTFORWARD_WS_PROTOCOLS = ['v4.channel.k8s.io'];

/** One side of a WebSocket as the runtime entry provides it. */
export interface WsPeer {
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}
export interface WsSession {
  onMessage(data: Uint8Array): void;
  onClose(): void;
}
/** One side of a raw upgraded byte stream. */
export interface BytePeer {
  write(data: Uint8Array): void;
  end(): void;
}
export interface ByteSession {
  onData(data: Uint8Array): void;
  onClose(): void;
}

export type SimUpgrade =
  | { kind: 'response'; response: Response }
  | { kind: 'websocket'; protocol: string; start(peer: WsPeer): WsSession }
  | { kind: 'spdy'; protocol: string; start(peer: BytePeer): ByteSession };

const PROXY_PATH = /^\/apis\/cluster\.karmada\.io\/v1alpha1\/clusters\/([^/]+)\/proxy(\/.*)?$/;

const te = new TextEncoder();

function refuse(status: Status): SimUpgrade {
  return { kind: 'response', response: statusResponse(status) };
}

function offered(header: string | null): string[] {
  return (header ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Plans the upgrade of one request (the runtime calls it for requests carrying `Upgrade`). A Karmada
 * control plane hands its cluster-proxy paths to the member, as the real proxy's UpgradeAwareHandler does.
 */
/** A member behind the simulated Karmada's cluster proxy, as an upgrade reaches it. */
interface ProxiedMember {
  readonly faults: { readonly down: boolean };
  upgrade(req: Request): Promise<SimUpgrade>;
}

export async function simUpgrade(sim: SimHost, req: Request): Promise<SimUpgrade> {
  const url = new URL(req.url);
  const members = (sim as SimHost & { members?: Map<string, ProxiedMember> }).members;
  const proxied = PROXY_PATH.exec(url.pathname);
  if (proxied && members instanceof Map) {
    const name = decodeURIComponent(proxied[1]!);
    const member = members.get(name);
    // as the real proxy's REST responder writes a dial error: a 500 without a reason (sim/karmada.ts)
    if (!member || member.faults.down)
      return refuse({
        ...failure(500, 'InternalError', `dial tcp ${name}:6443: connect: connection refused`),
        reason: undefined,
      });
    const inner = new Request(new URL(`${proxied[2] ?? '/'}${url.search}`, url), {
      method: req.method,
      headers: req.headers,
    });
    return member.upgrade(inner);
  }
  const info = parseResourcePath(url.pathname, req.method, url.searchParams);
  if (info?.group !== '' || info.resource !== 'pods' || !info.name || !info.namespace)
    return refuse(badRequest(`upgrade is not supported on ${url.pathname}`));
  const sub = info.subresource;
  if (sub !== 'exec' && sub !== 'attach' && sub !== 'portforward')
    return refuse(badRequest(`upgrade is not supported on ${url.pathname}`));
  const pod = sim.store.get(grKey('', 'pods'), objectKey(info.namespace, info.name)) as
    | (KubeObject & Record<string, any>)
    | undefined;
  if (!pod) return refuse(notFound('pods', '', info.name));
  if (pod.status?.phase !== 'Running')
    return refuse(badRequest(`pod ${info.name} is not running (phase ${pod.status?.phase ?? 'unknown'})`));

  const upgrade = (req.headers.get('upgrade') ?? '').toLowerCase();
  const q = url.searchParams;
  if (sub === 'portforward') {
    const target: PortTarget = { podName: info.name, containers: pod.spec?.containers ?? [] };
    if (upgrade === 'websocket') {
      const want = offered(req.headers.get('sec-websocket-protocol'));
      if (want.includes(PORTFORWARD_TUNNEL_PROTOCOL))
        return {
          kind: 'websocket',
          protocol: PORTFORWARD_TUNNEL_PROTOCOL,
          start: (peer) => tunnelSession(peer, (bp) => portForward(bp, target)),
        };
      // the kubelet's own WebSocket port-forward: channel pairs per port (what the Python client speaks)
      const protocol =
        want.find((p) => PORTFORWARD_WS_PROTOCOLS.includes(p)) ?? (want.length === 0 ? '' : undefined);
      if (protocol === undefined)
        return refuse(
          badRequest(
            `requested protocol(s) are not supported: [${want.join(' ')}]; supports [${[PORTFORWARD_TUNNEL_PROTOCOL, ...PORTFORWARD_WS_PROTOCOLS].join(' ')}]`,
          ),
        );
      const ports = forwardPorts(q);
      if (typeof ports === 'string') return refuse(badRequest(ports));
      return { kind: 'websocket', protocol, start: (peer) => wsPortForward(peer, ports, target) };
    }
    if (!offered(req.headers.get('x-stream-protocol-version')).includes(PORTFORWARD_SPDY_PROTOCOL))
      return refuse(badRequest(`port-forward needs the ${PORTFORWARD_SPDY_PROTOCOL} stream protocol`));
    return { kind: 'spdy', protocol: PORTFORWARD_SPDY_PROTOCOL, start: (bp) => portForward(bp, target) };
  }

  const containers: any[] = pod.spec?.containers ?? [];
  const container = q.get('container') || containers[0]?.name;
  // exec and attach reach init and ephemeral containers by name too (kubectl debug attaches to its own)
  const c = [
    ...containers,
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ].find((x) => x.name === container);
  if (!c) return refuse(badRequest(`container ${container} is not valid for pod ${info.name}`));
  const streams: StreamOpts = {
    stdin: queryBool(q, 'stdin'),
    stdout: queryBool(q, 'stdout'),
    stderr: queryBool(q, 'stderr'),
    tty: queryBool(q, 'tty'),
  };
  if (!streams.stdin && !streams.stdout && !streams.stderr)
    return refuse(badRequest('you must specify at least 1 of stdin, stdout, stderr'));
  const command = q.getAll('command');
  if (sub === 'exec' && command.length === 0)
    return refuse(badRequest('you must specify at least 1 command'));
  const argv = sub === 'exec' ? command : [];
  const proc: ProcFactory =
    sub === 'exec'
      ? (io) => runCommand(command, io, { sim, pod, container: c, tty: streams.tty })
      : (io) => attach(io, { sim, pod, container: c }, streams.stdin);

  if (upgrade === 'websocket') {
    const want = offered(req.headers.get('sec-websocket-protocol'));
    const protocol = want.find((p) => EXEC_WS_PROTOCOLS.includes(p)) ?? (want.length === 0 ? '' : undefined);
    if (protocol === undefined)
      return refuse(
        badRequest(
          `requested protocol(s) are not supported: [${want.join(' ')}]; supports [${EXEC_WS_PROTOCOLS.join(' ')}]`,
        ),
      );
    return {
      kind: 'websocket',
      protocol,
      start: (peer) => channelSession(peer, protocol, streams, proc, argv),
    };
  }
  const want = offered(req.headers.get('x-stream-protocol-version'));
  const protocol = want.find((p) => EXEC_SPDY_PROTOCOLS.includes(p));
  if (!protocol)
    return refuse(
      failure(
        403,
        'Forbidden',
        `unable to upgrade: none of the requested stream protocols is supported: ${want.join(', ')}`,
      ),
    );
  return { kind: 'spdy', protocol, start: (bp) => spdyExecSession(bp, streams, proc, argv) };
}

// ---------------------------------------------------------------------------------------------- processes

interface StreamOpts {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** What a running process sees. */
interface ProcIO {
  stdout(data: string | Uint8Array): void;
  stderr(data: string | Uint8Array): void;
  /** stdin chunks; null at EOF (also right away when the client sends no stdin) */
  onStdin(f: (chunk: Uint8Array | null) => void): void;
  exit(code: number): void;
  /** called when the session goes away: stop timers and subscriptions */
  onKill(f: () => void): void;
  /** the process could not start: a Failure Status (not an exit code) */
  fail(status: Status): void;
}
type ProcFactory = (io: ProcIO) => void;

interface PodCtx {
  sim: SimHost;
  pod: KubeObject & Record<string, any>;
  container: Record<string, any>;
  /** a terminal was asked for (`-t`): the line discipline echoes input and turns \n into \r\n */
  tty?: boolean;
}

/** The image's files: a small Linux root, the pod's hostname, hosts and resolver files. */
function seedFiles(fs: MemFs, ctx: PodCtx): void {
  const name = ctx.pod.metadata.name ?? '';
  for (const d of ['bin', 'dev', 'etc', 'home', 'proc', 'root', 'run', 'sys', 'tmp', 'usr', 'var'])
    fs.mkdir(`/${d}`);
  fs.writeFile('/etc/hostname', `${name}\n`);
  fs.writeFile('/etc/hosts', `127.0.0.1\tlocalhost\n${ctx.pod.status?.podIP ?? '10.244.0.2'}\t${name}\n`);
  fs.writeFile('/etc/os-release', 'NAME="Simulated Linux"\nID=sim\nVERSION_ID="1.0"\n');
  fs.writeFile(
    '/etc/resolv.conf',
    `search ${ctx.pod.metadata.namespace}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n`,
  );
}

/** One filesystem per container (pod uid + container name), alive as long as the simulated cluster. */
const filesystems = new WeakMap<SimHost, Map<string, MemFs>>();

function containerFs(ctx: PodCtx): MemFs {
  let byContainer = filesystems.get(ctx.sim);
  if (!byContainer) {
    byContainer = new Map();
    filesystems.set(ctx.sim, byContainer);
  }
  const key = `${ctx.pod.metadata.namespace}/${ctx.pod.metadata.name}/${ctx.pod.metadata.uid}/${ctx.container.name}`;
  let fs = byContainer.get(key);
  if (!fs) {
    fs = new MemFs(() => ctx.sim.clock());
    seedFiles(fs, ctx);
    byContainer.set(key, fs);
  }
  return fs;
}

function environment(ctx: PodCtx): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: ctx.pod.metadata.name ?? '',
  };
  for (const e of ctx.container.env ?? []) if (typeof e.value === 'string') env[e.name] = e.value;
  Object.assign(env, { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', HOME: '/root' });
  return env;
}

/** stdin as the shell reads it: chunks in order, null once the client half-closed (or sent none). */
function stdinReader(io: ProcIO): () => Promise<Uint8Array | null> {
  const queue: Array<Uint8Array | null> = [];
  let waiting: ((c: Uint8Array | null) => void) | undefined;
  let ended = false;
  io.onStdin((chunk) => {
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w(chunk);
    } else queue.push(chunk);
  });
  return () => {
    if (ended) return Promise.resolve(null);
    const next = queue.shift();
    if (next !== undefined) {
      if (next === null) ended = true;
      return Promise.resolve(next);
    }
    return new Promise((resolve) => {
      waiting = (c) => {
        if (c === null) ended = true;
        resolve(c);
      };
    });
  };
}

class Killed extends Error {}

/**
 * Runs a container's own command and args (what the kubelet starts: an ephemeral container from `kubectl
 * debug … -- sh -c '…'`) with no stdin, its output lines going to the container's log. Resolves with the
 * exit code; a program the image lacks is 127 with the runtime's message in the log, as a failed start.
 */
export function runInContainer(
  sim: SimHost,
  pod: KubeObject & Record<string, any>,
  container: Record<string, any>,
): Promise<number> {
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map(String);
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const log = (line: string) => sim.appendLog(ns, name, container.name, line);
  if (argv.length === 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    const partial = { out: '', err: '' };
    const write = (which: 'out' | 'err', d: string | Uint8Array) => {
      partial[which] += typeof d === 'string' ? d : new TextDecoder().decode(d);
      const lines = partial[which].split('\n');
      partial[which] = lines.pop()!;
      for (const l of lines) log(l);
    };
    runCommand(
      argv,
      {
        stdout: (d) => write('out', d),
        stderr: (d) => write('err', d),
        onStdin: (f) => f(null),
        exit: (code) => {
          for (const rest of [partial.out, partial.err]) if (rest) log(rest);
          resolve(code);
        },
        onKill: () => {},
        fail: (st) => {
          log(st.message ?? 'failed to start');
          resolve(127);
        },
      },
      { sim, pod, container },
    );
  });
}

/**
 * Starts the exec'd program in the container's shell (shell.ts). A program the image does not have is the
 * runtime's failure to start it (a Status, not an exit code), as containerd reports it through the kubelet.
 */
function runCommand(argv: string[], io: ProcIO, ctx: PodCtx): void {
  const cmd = argv[0] ?? '';
  if (!hasProgram(cmd)) {
    // the kubelet writes apierrors.NewInternalError(err): the error again as the one cause
    io.fail(
      internalError(
        `error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: "${cmd}": executable file not found in $PATH: unknown`,
      ),
    );
    return;
  }
  const stops = new Set<() => void>();
  let killed = false;
  io.onKill(() => {
    killed = true;
    for (const s of stops) s();
  });
  const host: ShellHost = {
    hostname: ctx.pod.metadata.name ?? '',
    tty: ctx.tty === true,
    env: environment(ctx),
    fs: containerFs(ctx),
    now: () => ctx.sim.clock(),
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (killed) return reject(new Killed());
        let stop: () => void = () => {};
        const cancel = () => reject(new Killed());
        stop = ctx.sim.timer(() => {
          stops.delete(cancel);
          resolve();
        }, ms);
        stops.add(() => {
          stop();
          cancel();
        });
      }),
  };
  const read = stdinReader(io);
  // a terminal's output post-processing (onlcr): every \n reaches the client as \r\n
  const onlcr = (d: Uint8Array) =>
    ctx.tty ? te.encode(new TextDecoder().decode(d).replace(/\r?\n/g, '\r\n')) : d;
  runProgram(host, argv, {
    stdout: (d) => io.stdout(onlcr(d)),
    stderr: (d) => io.stderr(onlcr(d)),
    read,
  }).then(
    (code) => io.exit(code),
    (e) => {
      if (!(e instanceof Killed))
        io.fail(failure(500, 'InternalError', `Internal error occurred: ${String(e)}`));
    },
  );
}

/**
 * attach: the container's output as it is logged, and stdin echoed back (a `cat`-like main process). A
 * container that takes stdin (`stdin: true`: `kubectl run -i`, `kubectl debug -i`) has its main process
 * reading it: at the end of the client's input that process ends, and the attach with it (exit 0), as a
 * real shell or cat does. Without `stdin: true` (or an attach without `-i`) the input goes nowhere and the attach lasts until the client leaves.
 */
function attach(io: ProcIO, ctx: PodCtx, withStdin: boolean): void {
  const ns = ctx.pod.metadata.namespace ?? '';
  const name = ctx.pod.metadata.name ?? '';
  const stop = ctx.sim.logs.follow(ns, name, ctx.container.name, (line) => io.stdout(`${line.text}\n`));
  io.onKill(stop);
  // the client's input reaches the process only when it asked to send some (`-i`)
  const readsStdin = withStdin && ctx.container.stdin === true;
  io.onStdin((chunk) => {
    if (chunk) io.stdout(chunk);
    else if (readsStdin) {
      stop();
      io.exit(0);
    }
  });
}

/** What the kubelet reports when the command ends (exec.CodeExitError → NonZeroExitCode). */
function exitStatus(argv: string[], code: number): Status {
  if (code === 0) return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 0 };
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
    code: 0,
  };
}

/** The error stream carries the Status as the kubelet marshals it (empty TypeMeta and code left out). */
function statusBytes(s: Status): Uint8Array {
  if (s.status === 'Success') return te.encode('{"metadata":{},"status":"Success"}');
  const { kind: _k, apiVersion: _a, code, ...rest } = s;
  return te.encode(JSON.stringify(code ? { ...rest, code } : rest));
}

/** A process wired to stream writers; `finish` sends the status and ends the session. */
function startProcess(
  factory: ProcFactory,
  streams: StreamOpts,
  out: {
    stdout(d: Uint8Array): void;
    stderr(d: Uint8Array): void;
    finish(status: Status): void;
  },
  argv: string[],
): { stdin(chunk: Uint8Array | null): void; kill(): void } {
  let stdinHandler: ((c: Uint8Array | null) => void) | undefined;
  const early: Array<Uint8Array | null> = [];
  const kills: Array<() => void> = [];
  let done = false;
  const bytes = (d: string | Uint8Array) => (typeof d === 'string' ? te.encode(d) : d);
  const io: ProcIO = {
    stdout: (d) => {
      if (!done && streams.stdout) out.stdout(bytes(d));
    },
    stderr: (d) => {
      if (done) return;
      if (streams.stderr && !streams.tty) out.stderr(bytes(d));
      else if (streams.stdout && streams.tty) out.stdout(bytes(d));
    },
    onStdin: (f) => {
      stdinHandler = f;
      if (!streams.stdin) queueMicrotask(() => f(null));
      for (const c of early.splice(0)) f(c);
    },
    exit: (code) => {
      if (done) return;
      done = true;
      for (const k of kills) k();
      out.finish(exitStatus(argv, code));
    },
    fail: (status) => {
      if (done) return;
      done = true;
      for (const k of kills) k();
      out.finish(status);
    },
    onKill: (f) => kills.push(f),
  };
  factory(io);
  return {
    stdin(chunk) {
      if (stdinHandler) stdinHandler(chunk);
      else early.push(chunk);
    },
    kill() {
      if (done) return;
      done = true;
      for (const k of kills) k();
    },
  };
}

// ---------------------------------------------------------------------------------------------- WebSocket channels

function channelSession(
  peer: WsPeer,
  protocol: string,
  streams: StreamOpts,
  factory: ProcFactory,
  argv: string[],
): WsSession {
  const v5 = protocol === 'v5.channel.k8s.io';
  const frame = (id: number, d: Uint8Array) => {
    const m = new Uint8Array(d.length + 1);
    m[0] = id;
    m.set(d, 1);
    peer.send(m);
  };
  const proc = startProcess(
    factory,
    streams,
    {
      stdout: (d) => frame(STREAM_STDOUT, d),
      stderr: (d) => frame(STREAM_STDERR, d),
      finish: (status) => {
        frame(STREAM_ERROR, statusBytes(status));
        peer.close(1000);
      },
    },
    argv,
  );
  return {
    onMessage(data) {
      if (data.length === 0) return;
      const id = data[0]!;
      if (v5 && id === STREAM_CLOSE) {
        if (data[1] === STREAM_STDIN) proc.stdin(null);
        return;
      }
      if (id === STREAM_STDIN && data.length > 1) proc.stdin(data.slice(1));
      // resize (4) and anything else: nothing to do for a simulated terminal
    },
    onClose() {
      proc.kill();
    },
  };
}

// ---------------------------------------------------------------------------------------------- SPDY

/** SPDY inside WebSocket binary messages: the bytes of the messages are the connection. */
function tunnelSession(peer: WsPeer, start: (bp: BytePeer) => ByteSession): WsSession {
  const session = start({ write: (d) => peer.send(d), end: () => peer.close(1000) });
  return { onMessage: (d) => session.onData(d), onClose: () => session.onClose() };
}

/**
 * The `ports` query of a WebSocket port-forward, as the kubelet reads it (repeatable, comma-separated,
 * 1-65535), or its refusal message.
 */
function forwardPorts(q: URLSearchParams): number[] | string {
  const raw = [...q.getAll('ports'), ...q.getAll('port')];
  if (raw.length === 0) return 'query parameter "port" is required';
  const ports: number[] = [];
  for (const r of raw) {
    if (r === '') return 'query parameter "port" cannot be empty';
    for (const p of r.split(',')) {
      const n = /^[0-9]+$/.test(p) ? Number(p) : Number.NaN;
      if (!(n <= 65535))
        return `unable to parse "${r}" as a port: strconv.ParseUint: parsing "${p}": invalid syntax`;
      if (n < 1) return `port "${r}" must be > 0`;
      ports.push(n);
    }
  }
  return ports;
}

/**
 * Port-forward over WebSocket as the kubelet serves it: port i has data channel 2i and error channel 2i+1;
 * the first frame the server sends on each channel is the port number (2 bytes, little endian); after that,
 * data frames are `[channel, bytes…]` both ways. Each port is one connection for the socket's lifetime;
 * when every connection has ended, the socket closes.
 */
function wsPortForward(peer: WsPeer, ports: number[], target: PortTarget): WsSession {
  const frame = (ch: number, d: Uint8Array) => {
    const m = new Uint8Array(d.length + 1);
    m[0] = ch;
    m.set(d, 1);
    peer.send(m);
  };
  let open = ports.length;
  const conns: PortConn[] = ports.map((port, i) => {
    const prefix = new Uint8Array([port & 0xff, port >> 8]);
    frame(2 * i, prefix);
    frame(2 * i + 1, prefix);
    let ended = false;
    return openPort(
      target,
      port,
      (d) => frame(2 * i, d),
      () => {
        if (ended) return;
        ended = true;
        if (--open === 0) peer.close(1000);
      },
    );
  });
  return {
    onMessage(data) {
      if (data.length === 0) return;
      const ch = data[0]!;
      // the client writes only on data channels; anything on an error channel is ignored, as there
      if (ch % 2 === 0 && ch / 2 < conns.length && data.length > 1) conns[ch / 2]!.data(data.slice(1));
    },
    onClose() {
      for (const c of conns) c.fin();
    },
  };
}

/** port-forward over SPDY: each (error, data) stream pair is one connection to the container's port. */
function portForward(peer: BytePeer, target: PortTarget): ByteSession {
  const pairs = new Map<string, { error?: number; data?: number; conn?: PortConn }>();
  const spdy: SpdyServer = new SpdyServer(
    (d) => peer.write(d),
    () => peer.end(),
    {
      onStream(id, headers) {
        const rid = headers.get('requestid') ?? String(id);
        const p = pairs.get(rid) ?? {};
        const type = headers.get('streamtype');
        if (type === 'error') p.error = id;
        else if (type === 'data') p.data = id;
        else spdy.reset(id);
        pairs.set(rid, p);
        const port = Number(headers.get('port'));
        if (!(port > 0 && port < 65536)) {
          if (p.error !== undefined) {
            spdy.sendData(p.error, te.encode(`invalid port ${headers.get('port')}`));
            spdy.sendFin(p.error);
          }
          return;
        }
        if (type === 'data') {
          const dataId = id;
          p.conn = openPort(
            target,
            port,
            (d) => spdy.sendData(dataId, d),
            () => {
              spdy.sendFin(dataId);
              if (p.error !== undefined) spdy.sendFin(p.error);
            },
          );
        }
      },
      onData(id, data) {
        for (const p of pairs.values()) if (p.data === id) p.conn?.data(data);
      },
      onFin(id) {
        for (const [rid, p] of pairs) {
          if (p.data !== id) continue;
          p.conn?.fin();
          pairs.delete(rid);
        }
      },
      onReset(id) {
        for (const [rid, p] of pairs) if (p.data === id || p.error === id) pairs.delete(rid);
      },
      onClose() {
        pairs.clear();
      },
    },
  );
  return { onData: (d) => spdy.receive(d), onClose: () => spdy.transportClosed() };
}

/** exec / attach over SPDY (`v4.channel.k8s.io`): the process starts once the expected streams exist. */
function spdyExecSession(
  peer: BytePeer,
  streams: StreamOpts,
  factory: ProcFactory,
  argv: string[],
): ByteSession {
  const ids = new Map<string, number>();
  const expected = ['error'];
  if (streams.stdin) expected.push('stdin');
  if (streams.stdout) expected.push('stdout');
  if (streams.stderr && !streams.tty) expected.push('stderr');
  if (streams.tty) expected.push('resize');
  let proc: ReturnType<typeof startProcess> | undefined;
  const early: Array<Uint8Array | null> = [];
  const spdy: SpdyServer = new SpdyServer(
    (d) => peer.write(d),
    () => peer.end(),
    {
      onStream(id, headers) {
        const type = headers.get('streamtype') ?? '';
        ids.set(type, id);
        if (proc || !expected.every((t) => ids.has(t))) return;
        const send = (type: string) => (d: Uint8Array) => {
          const sid = ids.get(type);
          if (sid !== undefined) spdy.sendData(sid, d);
        };
        proc = startProcess(
          factory,
          streams,
          {
            stdout: send('stdout'),
            stderr: send('stderr'),
            finish: (status) => {
              for (const t of ['stdout', 'stderr']) {
                const sid = ids.get(t);
                if (sid !== undefined) spdy.sendFin(sid);
              }
              const err = ids.get('error')!;
              spdy.sendData(err, statusBytes(status));
              spdy.sendFin(err);
            },
          },
          argv,
        );
        for (const c of early.splice(0)) proc.stdin(c);
      },
      onData(id, data) {
        if (id !== ids.get('stdin')) return;
        if (proc) proc.stdin(data);
        else early.push(data);
      },
      onFin(id) {
        if (id !== ids.get('stdin')) return;
        if (proc) proc.stdin(null);
        else early.push(null);
      },
      onReset(id) {
        if (id === ids.get('stdin')) proc?.stdin(null);
      },
      onClose() {
        proc?.kill();
      },
    },
  );
  return { onData: (d) => spdy.receive(d), onClose: () => spdy.transportClosed() };
}
