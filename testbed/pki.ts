/**
 * The project's one PKI, made with the `openssl` CLI: certificate authorities, serving certificates for
 * loopback, client certificates (CN = user, one O per group), service-account signing keys and
 * kubeconfigs. The real test bed (testbed/) uses it for every cluster, and the tests' throwaway CA
 * (test/helpers/tls.ts) is a thin wrapper over it.
 *
 * Why the CLI: Node's crypto verifies and parses certificates but cannot issue them, and the CLI is on
 * every machine and CI image this project targets; it saves a dependency (node-forge, @peculiar/x509).
 * ECDSA P-256 keys keep generation in the milliseconds; only the service-account key is RSA, the kind
 * every Kubernetes and Karmada component reads.
 *
 * Every file is written under the directory the caller names, so a process started with `--…-file`
 * flags can read it; the PEM texts are returned as well.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface IssuedPair extends KeyPair {
  certFile: string;
  keyFile: string;
}

export interface ServingOptions {
  cn?: string;
  /** subjectAltName IPs; 127.0.0.1 when none is given */
  ips?: string[];
  /** subjectAltName DNS names; localhost when none is given */
  dns?: string[];
  days?: number;
}

export interface ClientOptions {
  days?: number;
  eku?: 'clientAuth' | 'serverAuth';
}

export interface CertificateAuthority extends IssuedPair {
  dir: string;
  /** the CA certificate, base64 (for …Data config fields and kubeconfigs) */
  certData: string;
  /** a serving certificate (127.0.0.1 and localhost unless told otherwise) written as <name>.crt/.key */
  serving(name?: string, opts?: ServingOptions): IssuedPair;
  /** a client certificate (CN = user, one O per group) written as <name>.crt/.key */
  client(user: string, groups?: string[], opts?: ClientOptions & { name?: string }): IssuedPair;
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A user name as a file name (system:kube-scheduler → system_kube-scheduler). */
export const fileSafe = (name: string) => name.replace(/[^a-zA-Z0-9-]/g, '_');

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('PKI: the openssl CLI is not installed');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString() ?? err.message}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
let serial = 0;

/**
 * A CA in `dir` (created if missing), its files named `<file>.crt` / `<file>.key` (default `ca`), and
 * every certificate it issues beside it.
 */
export function createCA(
  dir: string,
  name: string,
  opts: { days?: number; file?: string } = {},
): CertificateAuthority {
  mkdirSync(dir, { recursive: true });
  const base = opts.file ?? 'ca';
  const days = opts.days ?? 2;
  openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    `${base}.key`,
    '-out',
    `${base}.crt`,
    '-days',
    String(days),
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const certFile = join(dir, `${base}.crt`);
  const keyFile = join(dir, `${base}.key`);
  const caCert = readFileSync(certFile, 'utf8');

  const issue = (file: string, subject: string, ext: string, validDays: number): IssuedPair => {
    writeFileSync(join(dir, `${file}.ext`), ext);
    openssl(dir, ['req', ...EC, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', subject]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${file}.csr`,
      '-CA',
      `${base}.crt`,
      '-CAkey',
      `${base}.key`,
      '-set_serial',
      String(Date.now() * 1000 + (++serial % 1000)),
      '-days',
      String(validDays),
      '-out',
      `${file}.crt`,
      '-extfile',
      `${file}.ext`,
    ]);
    const pair = { certFile: join(dir, `${file}.crt`), keyFile: join(dir, `${file}.key`) };
    return { ...pair, cert: readFileSync(pair.certFile, 'utf8'), key: readFileSync(pair.keyFile, 'utf8') };
  };
  const fileName = (given: string | undefined, kind: string) => given ?? `${base}-${kind}${++serial}`;

  return {
    dir,
    certFile,
    keyFile,
    cert: caCert,
    key: readFileSync(keyFile, 'utf8'),
    certData: b64(caCert),
    serving: (name, o = {}) => {
      const sans = [
        ...(o.ips ?? ['127.0.0.1']).map((ip) => `IP:${ip}`),
        ...(o.dns ?? ['localhost']).map((d) => `DNS:${d}`),
      ];
      return issue(
        fileName(name, 'serving'),
        `/CN=${o.cn ?? 'fleet-apiserver'}`,
        `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`,
        o.days ?? days,
      );
    },
    client: (user, groups = [], o = {}) =>
      issue(
        fileName(o.name, 'client'),
        `/CN=${user}${groups.map((g) => `/O=${g}`).join('')}`,
        `extendedKeyUsage=${o.eku ?? 'clientAuth'}\nkeyUsage=critical,digitalSignature\n`,
        o.days ?? days,
      ),
  };
}

/** An RSA key pair for signing (kube-apiserver, kube-controller-manager) and verifying service-account tokens. */
export function serviceAccountKeys(dir: string, name = 'sa'): { keyFile: string; publicFile: string } {
  mkdirSync(dir, { recursive: true });
  openssl(dir, ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`]);
  openssl(dir, ['pkey', '-in', `${name}.key`, '-pubout', '-out', `${name}.pub`]);
  return { keyFile: join(dir, `${name}.key`), publicFile: join(dir, `${name}.pub`) };
}

export interface KubeconfigSpec {
  server: string;
  /** the CA that signed the server's certificate, PEM */
  ca: string;
  /** a client certificate; omitted for a kubeconfig that authenticates otherwise */
  client?: KeyPair;
  token?: string;
  /** names the cluster, user and context */
  name?: string;
}

/** A self-contained kubeconfig (everything inline), as JSON, which every client-go reads like YAML. */
export function kubeconfig(spec: KubeconfigSpec): string {
  const name = spec.name ?? 'bed';
  const user: Record<string, string> = {};
  if (spec.client) {
    user['client-certificate-data'] = b64(spec.client.cert);
    user['client-key-data'] = b64(spec.client.key);
  }
  if (spec.token) user['token'] = spec.token;
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: spec.server, 'certificate-authority-data': b64(spec.ca) } }],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    },
    null,
    2,
  )}\n`;
}

/** kubeconfig(spec) written to `file`; returns the path. */
export function writeKubeconfig(file: string, spec: KubeconfigSpec): string {
  writeFileSync(file, kubeconfig(spec), { mode: 0o600 });
  return file;
}
