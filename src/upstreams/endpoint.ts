/**
 * A resolved upstream endpoint: everything needed to reach one API server, as plain data both runtimes
 * understand. Built from the validated config by the platform (which alone may read files).
 */

import type { Endpoint } from '../config/schema.ts';
import { base64Decode } from '../util/base64.ts';

export interface ResolvedEndpoint {
  /** clusterspace this endpoint serves: 'karmada' or a member name */
  name: string;
  /** base URL without trailing slash; may carry a path prefix (Karmada's cluster proxy) */
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  insecureSkipTLSVerify: boolean;
  /** bearer token source; re-read per request so rotated token files are picked up */
  token?: () => string | undefined;
  mtlsBinding?: string;
  /** time allowed until response headers */
  timeoutMs: number;
  /**
   * Key of the connection pool this endpoint uses. Members reached through Karmada's cluster proxy share
   * the control plane's pool: same host, same credential.
   */
  poolKey: string;
  /**
   * The membership source says this member is down (Karmada's Ready, a ClusterProfile's
   * ControlPlaneHealthy or Joined), in words for the caller: the client answers as for a member it cannot
   * reach, without dialling it (every request would wait on a dial or proxy timeout).
   */
  notReady?: string;
}

/** How the platform turns file references into data; the worker has no files and refuses them. */
export interface FileReader {
  readText(path: string, field: string): string;
}

const utf8 = new TextDecoder();

/** PEM text from a kubeconfig `…Data` field (base64 of the PEM file). */
function b64decode(data: string, field: string): string {
  try {
    return utf8.decode(base64Decode(data));
  } catch {
    throw new Error(`${field}: not valid base64`);
  }
}

export function resolveEndpoint(
  name: string,
  e: Endpoint,
  files: FileReader,
  defaultTimeoutMs: number,
  where: string,
): ResolvedEndpoint {
  const caPem = e.certificateAuthorityData
    ? b64decode(e.certificateAuthorityData, `${where}.certificateAuthorityData`)
    : e.certificateAuthority
      ? files.readText(e.certificateAuthority, `${where}.certificateAuthority`)
      : undefined;
  const certPem = e.clientCertificateData
    ? b64decode(e.clientCertificateData, `${where}.clientCertificateData`)
    : e.clientCertificate
      ? files.readText(e.clientCertificate, `${where}.clientCertificate`)
      : undefined;
  const keyPem = e.clientKeyData
    ? b64decode(e.clientKeyData, `${where}.clientKeyData`)
    : e.clientKey
      ? files.readText(e.clientKey, `${where}.clientKey`)
      : undefined;
  let token: (() => string | undefined) | undefined;
  if (e.token) {
    const t = e.token;
    token = () => t;
  } else if (e.tokenFile) {
    const path = e.tokenFile;
    // projected service-account tokens rotate: re-read at most once a minute, like client-go's cached file source
    let cached = files.readText(path, `${where}.tokenFile`).trim();
    let readAt = Date.now();
    token = () => {
      if (Date.now() - readAt > 60_000) {
        try {
          cached = files.readText(path, `${where}.tokenFile`).trim();
        } catch {
          // keep the last good token; the upstream will say 401 if it expired
        }
        readAt = Date.now();
      }
      return cached;
    };
  }
  const server = e.server.replace(/\/+$/, '');
  return {
    name,
    server,
    caPem,
    certPem,
    keyPem,
    insecureSkipTLSVerify: e.insecureSkipTLSVerify ?? false,
    token,
    mtlsBinding: e.mtlsCertificateBinding,
    timeoutMs: (e.timeoutSeconds ?? defaultTimeoutMs / 1000) * 1000,
    poolKey: `${name}:${new URL(server).origin}`,
  };
}

/** A member reached through Karmada's cluster proxy: the control plane's credential and pool, a longer path. */
export function viaClusterProxy(controlPlane: ResolvedEndpoint, member: string): ResolvedEndpoint {
  return {
    ...controlPlane,
    name: member,
    server: `${controlPlane.server}/apis/cluster.karmada.io/v1alpha1/clusters/${encodeURIComponent(member)}/proxy`,
  };
}
