/**
 * The fleet name codec: `<name>.clusterspace.<cluster>` is how the fleet shows an object named `<name>`
 * that lives in member cluster `<cluster>`.
 *
 * Where to split. Karmada validates Cluster names as DNS-1123 labels of at most 48 characters
 * (karmada-io/karmada `pkg/apis/cluster/validation`: `ValidateClusterName`, `clusterNameMaxLength = 48`,
 * `IsDNS1123Label`): `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, no dots. So the cluster is everything after the LAST
 * `.clusterspace.`: splitting at an earlier occurrence would leave dots in the cluster part, which no
 * cluster name can have. Kubernetes names never contain `.clusterspace.` on their own, so in practice there
 * is exactly one occurrence; a name whose suffix is not a possible cluster name (`x.clusterspace.Bad_`,
 * `x.clusterspace.all`) or whose name part is empty is treated as a plain name.
 *
 * Names that stay valid. A fleet name is never longer than 253 characters, the limit of every name kube
 * validates as a DNS-1123 subdomain (most kinds) and the longest any client expects. When
 * `<name>.clusterspace.<cluster>` would be longer (a name of more than 191 characters beside a cluster of
 * 48), the fleet shows the SHORTENED form `<head>-<digest>.clusterspace-h.<cluster>`: `<digest>` is 13
 * base-36 characters of the SHA-256 of the name (names-hash.ts), `<head>` the longest start of the name
 * that keeps the whole a valid DNS-1123 subdomain of at most 253 characters. Every other name keeps its
 * form. A shortened name does not hold the name: {@link decodeName} knows it once the fleet has shown it
 * or looked it up (names-memo.ts; src/routes/locate.ts lists the cluster's objects and matches digests
 * when it does not), and says `unresolved` until then. Names of kinds kube validates as DNS labels
 * (namespaces, services) are at most 63 characters, so theirs are never shortened; they contain dots like
 * every fleet name, which kubectl and client-go accept wherever a name travels (they check path segments
 * only, `IsValidPathSegmentName`); docs/architecture.md says which clients check more.
 *
 * Reserved: `all` and `karmada` are clusterspaces, never member names. `<name>.clusterspace.karmada`
 * decodes to cluster `karmada` (the control plane, explicitly); `.clusterspace.all` does not decode.
 */

import type { Status } from '../../kube/status.ts';
import { NAME_DIGEST_LENGTH, nameDigest } from './hash.ts';
import { recallShortened, rememberShortened } from './memo.ts';

export const CLUSTERSPACE_SEPARATOR = '.clusterspace.';
/** Karmada's limit on Cluster names. */
export const CLUSTER_NAME_MAX_LENGTH = 48;
export const RESERVED_CLUSTERSPACES: ReadonlySet<string> = new Set(['all', 'karmada']);

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A name a member cluster may have: a DNS-1123 label of at most 48 characters, not `all` or `karmada`. */
export function isValidClusterName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= CLUSTER_NAME_MAX_LENGTH &&
    DNS1123_LABEL.test(name) &&
    !RESERVED_CLUSTERSPACES.has(name)
  );
}

/** `all`, `karmada`, or a valid member cluster name. */
export function isValidClusterspace(cs: string): boolean {
  return RESERVED_CLUSTERSPACES.has(cs) || isValidClusterName(cs);
}

/** The longest fleet name the fleet shows: a DNS-1123 subdomain's limit. */
export const FLEET_NAME_MAX_LENGTH = 253;
/** Marks a shortened fleet name (a distinct separator: it never parses as `<name>.clusterspace.<c>`). */
export const SHORTENED_SEPARATOR = '.clusterspace-h.';

// the longest start of a text that is a DNS-1123 subdomain (labels of [a-z0-9-] that start and end alphanumeric)
const SUBDOMAIN_START = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/;
const DIGEST = new RegExp(`^[0-9a-z]{${NAME_DIGEST_LENGTH}}$`);
const HEAD = /^[a-z0-9.-]*[a-z0-9]$/;

/** `<digest>` or `<head>-<digest>` (linear checks: a fleet name from a URL may be long) */
function isShortenedStem(stem: string): boolean {
  const d = stem.length - NAME_DIGEST_LENGTH;
  if (d < 0 || !DIGEST.test(stem.slice(d))) return false;
  return d === 0 || (d >= 2 && stem.charCodeAt(d - 1) === 0x2d && HEAD.test(stem.slice(0, d - 1)));
}

/**
 * `<name>.clusterspace.<cluster>`, or its shortened form when that would be longer than
 * {@link FLEET_NAME_MAX_LENGTH} (see the top of this file). Remembers the shortened names it makes.
 */
export function encodeName(name: string, cluster: string): string {
  const full = name + CLUSTERSPACE_SEPARATOR + cluster;
  if (full.length <= FLEET_NAME_MAX_LENGTH) return full;
  const short = shortenedName(name, cluster);
  rememberShortened(short, name);
  return short;
}

/** `<head>-<digest>.clusterspace-h.<cluster>` (`<digest>.clusterspace-h.<cluster>` when no head fits). */
export function shortenedName(name: string, cluster: string): string {
  const room = FLEET_NAME_MAX_LENGTH - SHORTENED_SEPARATOR.length - cluster.length - NAME_DIGEST_LENGTH - 1;
  const head = room > 0 ? (SUBDOMAIN_START.exec(name.slice(0, room))?.[0] ?? '') : '';
  return `${head ? `${head}-` : ''}${nameDigest(name)}${SHORTENED_SEPARATOR}${cluster}`;
}

/** Whether `name` has the shortened form (with a possible cluster); says nothing of which object it names. */
export function isShortenedName(name: string): boolean {
  if (name.length > FLEET_NAME_MAX_LENGTH) return false;
  const at = name.lastIndexOf(SHORTENED_SEPARATOR);
  if (at <= 0) return false;
  const cluster = name.slice(at + SHORTENED_SEPARATOR.length);
  return (cluster === 'karmada' || isValidClusterName(cluster)) && isShortenedStem(name.slice(0, at));
}

/**
 * A decoded fleet name. `unresolved`: a shortened name whose object's name is not known here (yet);
 * `name` is then the shortened name as given, which no object of any cluster has.
 */
export type DecodedName =
  | { name: string; cluster: string; unresolved?: true }
  | { name: string; cluster: undefined; unresolved?: undefined };

/**
 * Splits a fleet name. A plain name (or anything that is not a well-formed fleet name) comes back whole
 * with `cluster: undefined`. A shortened name comes back as the name it stands for when known
 * (names-memo.ts), else `unresolved`. Never throws.
 */
export function decodeName(fleetName: string): DecodedName {
  if (typeof fleetName !== 'string') return { name: String(fleetName), cluster: undefined };
  const at = fleetName.lastIndexOf(CLUSTERSPACE_SEPARATOR);
  if (at > 0) {
    const cluster = fleetName.slice(at + CLUSTERSPACE_SEPARATOR.length);
    if (cluster === 'karmada' || isValidClusterName(cluster)) {
      return { name: fleetName.slice(0, at), cluster };
    }
  }
  if (isShortenedName(fleetName)) {
    const cluster = fleetName.slice(fleetName.lastIndexOf(SHORTENED_SEPARATOR) + SHORTENED_SEPARATOR.length);
    const name = recallShortened(fleetName);
    return name === undefined ? { name: fleetName, cluster, unresolved: true } : { name, cluster };
  }
  return { name: fleetName, cluster: undefined };
}

/**
 * Why a shortened name `name` of `cluster` given in `field` cannot be used: unknown here, or (`create`)
 * never for a create, which must say the name the object gets.
 */
export function unresolvedMessage(field: string, name: string, cluster: string, create = false): string {
  const why = create
    ? 'which stands for an object that exists; a create must give the name the object gets'
    : `and no object of cluster "${cluster}" is known by it here; give the object's own name`;
  return (
    `${field}: "${name}" is a shortened fleet name (the fleet shortens names longer than ${FLEET_NAME_MAX_LENGTH} characters) ` +
    `${why}: <name>.clusterspace.${cluster} at the root, or the name alone under /clusterspaces/${cluster}/`
  );
}

/**
 * Rewrites the quoted occurrences of `name` in an upstream message to `fleetName`:
 * `pods "web" not found` → `pods "web.clusterspace.member1" not found`. Only whole quoted tokens change
 * (`"web-1"` or `web` unquoted stay as they are).
 */
export function rewriteStatusMessage(message: string, name: string, fleetName: string): string {
  if (!name || name === fleetName) return message;
  const quoted = `"${name}"`;
  if (!message.includes(quoted)) return message;
  return message.split(quoted).join(`"${fleetName}"`);
}

/**
 * An upstream Status with the object's name shown as its fleet name: message and `details.name`.
 * Returns a new Status; the input is not changed.
 */
export function rewriteStatusNames(status: Status, name: string, fleetName: string): Status {
  const out: Status = { ...status };
  if (typeof status.message === 'string') out.message = rewriteStatusMessage(status.message, name, fleetName);
  if (status.details && status.details.name === name) out.details = { ...status.details, name: fleetName };
  if (status.details?.causes) {
    out.details = {
      ...(out.details ?? status.details),
      causes: status.details.causes.map((c) =>
        c.message ? { ...c, message: rewriteStatusMessage(c.message, name, fleetName) } : c,
      ),
    };
  }
  return out;
}
