/**
 * `fleet-apiserver kubeconfig --server <url> [options]`: writes kubeconfig contexts for a running fleet —
 * `fleet` (the root: every cluster as one), `karmada` (the control plane) and one per member cluster
 * (`/clusterspaces/<member>`) — from its live membership (the clusters the fleet itself lists), merged
 * into an existing kubeconfig like `kubectl config set-*` does. Node only.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { type AuthChoice, buildFleetKubeconfig, type Kubeconfig, mergeKubeconfig } from './kubeconfig-doc.ts';

export const KUBECONFIG_USAGE = `Usage: fleet-apiserver kubeconfig --server <url> [options]

Writes contexts for the fleet root ("fleet"), the control plane ("karmada") and every member cluster,
found from the fleet's live membership, into a kubeconfig (merged like kubectl config set-* does).

  --server URL                 the fleet's URL (required)
  --kubeconfig FILE            file to merge into (default: first of $KUBECONFIG, else ~/.kube/config);
                               "-" prints the new contexts to stdout instead
  --set-current                make "fleet" the current context (default: only when none is set)
  --members a,b                member names (default: asked of the fleet)
  --no-control-plane           no "karmada" context (federation off)
  --namespace NS               default namespace of every context
  --prefix P                   name prefix of the cluster and user entries (default "fleet-")
 Authentication (one):
  --token T | --token-file F   a bearer token
  --exec-command CMD [--exec-arg A]... [--exec-api-version V]
                               an exec credential plugin (e.g. kubelogin get-token)
  --client-certificate F --client-key F
  --user NAME                  use a user entry already in the kubeconfig
  (none)                       no credentials (anonymous, or a front proxy that adds them)
 TLS:
  --certificate-authority F    CA of the fleet's serving certificate (embedded)
  --insecure-skip-tls-verify   do not verify the fleet's certificate (testing only)
  --tls-server-name NAME`;

export async function kubeconfigCommand(argv: string[]): Promise<number> {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      kubeconfig: { type: 'string' },
      'set-current': { type: 'boolean', default: false },
      members: { type: 'string' },
      'no-control-plane': { type: 'boolean', default: false },
      namespace: { type: 'string' },
      prefix: { type: 'string', default: 'fleet-' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      'exec-command': { type: 'string' },
      'exec-arg': { type: 'string', multiple: true, default: [] },
      'exec-api-version': { type: 'string', default: 'client.authentication.k8s.io/v1' },
      'client-certificate': { type: 'string' },
      'client-key': { type: 'string' },
      user: { type: 'string' },
      'certificate-authority': { type: 'string' },
      'insecure-skip-tls-verify': { type: 'boolean', default: false },
      'tls-server-name': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (v.help) {
    console.log(KUBECONFIG_USAGE);
    return 0;
  }
  if (!v.server) throw new UsageError('--server is required');
  const server = v.server.replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(server)) throw new UsageError(`--server ${v.server}: not an http(s) URL`);

  const auth: AuthChoice = {};
  const ways = [v.token, v['token-file'], v['exec-command'], v['client-certificate'], v.user].filter(Boolean);
  if (ways.length > 1)
    throw new UsageError('choose one of --token, --token-file, --exec-command, --client-certificate, --user');
  if (v.token) auth.token = v.token;
  if (v['token-file']) auth.token = readFileSync(v['token-file'], 'utf8').trim();
  if (v['exec-command'])
    auth.exec = { command: v['exec-command'], args: v['exec-arg'] ?? [], apiVersion: v['exec-api-version']! };
  if (v['client-certificate']) {
    if (!v['client-key']) throw new UsageError('--client-certificate needs --client-key');
    auth.clientCertificateData = b64File(v['client-certificate']);
    auth.clientKeyData = b64File(v['client-key']);
  }
  if (v.user) auth.existingUser = v.user;
  const ca = v['certificate-authority'] ? readFileSync(v['certificate-authority'], 'utf8') : undefined;

  const members = v.members
    ? v.members.split(',').filter(Boolean)
    : await discoverMembers(server, {
        bearer: auth.token ?? (auth.exec ? execToken(auth.exec) : undefined),
        ca,
        cert: v['client-certificate'] ? readFileSync(v['client-certificate'], 'utf8') : undefined,
        key: v['client-key'] ? readFileSync(v['client-key'], 'utf8') : undefined,
        insecure: v['insecure-skip-tls-verify'],
        servername: v['tls-server-name'],
      });
  const doc = buildFleetKubeconfig({
    server,
    members,
    controlPlane: !v['no-control-plane'],
    auth,
    tls: {
      ...(ca ? { certificateAuthorityData: Buffer.from(ca).toString('base64') } : {}),
      insecureSkipTlsVerify: v['insecure-skip-tls-verify'],
      ...(v['tls-server-name'] ? { tlsServerName: v['tls-server-name'] } : {}),
    },
    prefix: v.prefix!,
    ...(v.namespace ? { namespace: v.namespace } : {}),
  });

  const target =
    v.kubeconfig ?? process.env.KUBECONFIG?.split(':').find(Boolean) ?? `${homedir()}/.kube/config`;
  const contexts = doc.contexts.map((c) => c.name).join(', ');
  if (target === '-') {
    process.stdout.write(toYaml(mergeKubeconfig(undefined, doc, v['set-current']!)));
    return 0;
  }
  let existing: Partial<Kubeconfig> | undefined;
  if (existsSync(target)) {
    const text = readFileSync(target, 'utf8');
    existing = text.trim() ? (parseYaml(text) as Partial<Kubeconfig>) : undefined;
  }
  const merged = mergeKubeconfig(existing, doc, v['set-current']!);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, toYaml(merged), { mode: 0o600 });
  chmodSync(target, 0o600);
  const home = homedir();
  const shown = target.startsWith(`${home}/`) ? `~${target.slice(home.length)}` : target;
  console.error(
    `fleet-apiserver: wrote contexts ${contexts} to ${shown} (current: ${merged['current-context']})`,
  );
  return 0;
}

export class UsageError extends Error {}

function b64File(path: string): string {
  return readFileSync(path).toString('base64');
}

/** Runs the exec plugin once, as kubectl would, for the token to ask the fleet about its members with. */
function execToken(exec: NonNullable<AuthChoice['exec']>): string | undefined {
  const out = execFileSync(exec.command, exec.args, {
    encoding: 'utf8',
    stdio: ['inherit', 'pipe', 'inherit'],
    env: {
      ...process.env,
      KUBERNETES_EXEC_INFO: JSON.stringify({
        apiVersion: exec.apiVersion,
        kind: 'ExecCredential',
        spec: { interactive: false },
      }),
    },
  });
  return (JSON.parse(out) as { status?: { token?: string } }).status?.token;
}

interface Reach {
  bearer?: string | undefined;
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  insecure?: boolean | undefined;
  servername?: string | undefined;
}

/**
 * The fleet's members as the running fleet reports them: its own list of the clusters it serves
 * (`/fleet/api/clusters`, what the status page shows; a member that is down included), whatever the
 * membership mode: with static members, Karmada's Cluster objects may name clusters the fleet does not
 * serve and miss ones it does.
 */
async function discoverMembers(server: string, reach: Reach): Promise<string[]> {
  const dispatcher = new Agent({
    connect: {
      ...(reach.ca ? { ca: reach.ca } : {}),
      ...(reach.cert ? { cert: reach.cert, key: reach.key } : {}),
      ...(reach.insecure ? { rejectUnauthorized: false } : {}),
      ...(reach.servername ? { servername: reach.servername } : {}),
    },
  });
  try {
    const r = await undiciFetch(`${server}/fleet/api/clusters`, {
      dispatcher,
      headers: {
        Accept: 'application/json',
        ...(reach.bearer ? { Authorization: `Bearer ${reach.bearer}` } : {}),
      },
    });
    const text = await r.text();
    if (!r.ok)
      throw new Error(
        `GET /fleet/api/clusters: ${r.status} ${statusMessage(text)} (or name the members: --members a,b)`,
      );
    const { clusters } = JSON.parse(text) as { clusters?: { name?: string }[] };
    const names = (clusters ?? []).map((c) => c.name ?? '').filter((n) => n !== '' && n !== 'karmada');
    return [...new Set(names)].sort();
  } finally {
    await dispatcher.close();
  }
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
