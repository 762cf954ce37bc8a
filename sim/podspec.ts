/**
 * Container names, validated as kube-apiserver's pod validation does (pkg/apis/core/validation:
 * validateContainerCommon checks `name` with ValidateDNS1123Label; apimachinery's IsDNS1123Label gives
 * the messages) in every kind that holds a pod spec. Each problem is a cause of the 422 Invalid, at the
 * field path kube writes (`spec.template.spec.containers[0].name`). A real member refuses a container
 * called `solo.clusterspace.member2` ("must not contain dots"); the simulator does too, so tests see it.
 */

import type { ResourceDef } from './catalog/types.ts';
import { goQuote } from './selectors.ts';
import type { StatusCause } from './status.ts';

/** where each kind keeps its pod spec, by `<group>/<resource>` */
const POD_SPEC_AT: Readonly<Record<string, readonly string[]>> = {
  '/pods': ['spec'],
  '/podtemplates': ['template', 'spec'],
  '/replicationcontrollers': ['spec', 'template', 'spec'],
  'apps/deployments': ['spec', 'template', 'spec'],
  'apps/replicasets': ['spec', 'template', 'spec'],
  'apps/statefulsets': ['spec', 'template', 'spec'],
  'apps/daemonsets': ['spec', 'template', 'spec'],
  'batch/jobs': ['spec', 'template', 'spec'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** IsDNS1123Label's messages for `value` (none when it is a label) */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL.test(value))
    errs.push(
      SUBDOMAIN.test(value)
        ? 'must not contain dots'
        : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  return errs;
}

/** the causes of a 422 for the container names of `obj` (none for a kind without a pod spec) */
export function containerNameCauses(def: ResourceDef, obj: unknown): StatusCause[] {
  const at = POD_SPEC_AT[`${def.group}/${def.resource}`];
  if (!at) return [];
  let spec: any = obj;
  for (const k of at) spec = spec?.[k];
  if (typeof spec !== 'object' || spec === null) return [];
  const causes: StatusCause[] = [];
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const cs = spec[list];
    if (!Array.isArray(cs)) continue;
    cs.forEach((c, i) => {
      const field = `${at.join('.')}.${list}[${i}].name`;
      const name = c?.name;
      if (typeof name !== 'string' || name === '') {
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field });
        return;
      }
      for (const msg of dns1123LabelErrors(name))
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${goQuote(name)}: ${msg}`,
          field,
        });
    });
  }
  return causes;
}
