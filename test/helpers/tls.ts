/**
 * A throwaway PKI for tests: a CA, a serving certificate for 127.0.0.1 / localhost, and client certificates
 * (CN = user, O = groups, clientAuth), made with the `openssl` CLI in a temporary directory.
 *
 * Why the CLI: Node's crypto verifies and parses certificates but cannot issue them, and the CLI is on
 * every machine and CI image this project targets; it saves a dependency (node-forge, @peculiar/x509)
 * for test code only. ECDSA P-256 keys keep generation in the milliseconds.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface TestCA extends KeyPair {
  /** the CA certificate, base64 (for …Data config fields and kubeconfig) */
  certData: string;
  /** a serving certificate for 127.0.0.1 and localhost */
  server(): KeyPair;
  /** a client certificate: CN = user, one O per group */
  client(
    user: string,
    groups?: string[],
    opts?: { days?: number; eku?: 'clientAuth' | 'serverAuth' },
  ): KeyPair;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('test PKI: the openssl CLI is not installed');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString() ?? err.message}`);
  }
}

let serial = 0;

export function createTestCA(name = 'fleet-test-ca'): TestCA {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-pki-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const caCert = readFileSync(join(dir, 'ca.crt'), 'utf8');
  const caKey = readFileSync(join(dir, 'ca.key'), 'utf8');

  const issue = (subject: string, ext: string, days = 1): KeyPair => {
    const id = `c${++serial}`;
    writeFileSync(join(dir, `${id}.ext`), ext);
    openssl(dir, ['req', ...ec, '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', subject]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${id}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      String(Date.now() * 1000 + serial),
      '-days',
      String(days),
      '-out',
      `${id}.crt`,
      '-extfile',
      `${id}.ext`,
    ]);
    return {
      cert: readFileSync(join(dir, `${id}.crt`), 'utf8'),
      key: readFileSync(join(dir, `${id}.key`), 'utf8'),
    };
  };

  return {
    cert: caCert,
    key: caKey,
    certData: b64(caCert),
    server: () =>
      issue(
        '/CN=fleet-apiserver',
        'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n',
      ),
    client: (user, groups = [], opts = {}) =>
      issue(
        `/CN=${user}${groups.map((g) => `/O=${g}`).join('')}`,
        `extendedKeyUsage=${opts.eku ?? 'clientAuth'}\nkeyUsage=critical,digitalSignature\n`,
        opts.days ?? 1,
      ),
  };
}

export { b64 };
