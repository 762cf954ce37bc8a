/**
 * The resource table of a simulated kube-apiserver.
 *
 * Derived from kubernetes/kubernetes api/discovery/aggregated_v2.json (commit 9d2a8fb7c431) and
 * api/discovery/api__v1.json (commit 4d817e791304), one row per served group/version/resource.
 * Row format: 'group/version|resource|singular|Kind|scope(N|C)|verbs|shortNames|categories|subresources'
 *   verbs: A = create,delete,deletecollection,get,list,patch,update,watch; S = get,patch,update; else a list
 *   subresources: space-separated `name[=Kind[@group/version]][:verbs]` (defaults: parent's kind, S)
 * Rows are in discovery order: groups in the server's priority order, versions preferred first,
 * resources sorted by name.
 */
import type { ResourceDef, SubresourceDef } from './types.ts';

const BUILTIN_ROWS = [
  'v1|bindings|binding|Binding|N|create|||',
  'v1|componentstatuses|componentstatus|ComponentStatus|C|get,list|cs||',
  'v1|configmaps|configmap|ConfigMap|N|A|cm||',
  'v1|endpoints|endpoints|Endpoints|N|A|ep||',
  'v1|events|event|Event|N|A|ev||',
  'v1|limitranges|limitrange|LimitRange|N|A|limits||',
  'v1|namespaces|namespace|Namespace|C|create,delete,get,list,patch,update,watch|ns||finalize:update status',
  'v1|nodes|node|Node|C|A|no||proxy=NodeProxyOptions:create,delete,get,patch,update status',
  'v1|persistentvolumeclaims|persistentvolumeclaim|PersistentVolumeClaim|N|A|pvc||status',
  'v1|persistentvolumes|persistentvolume|PersistentVolume|C|A|pv||status',
  'v1|pods|pod|Pod|N|A|po|all|attach=PodAttachOptions:create,get binding=Binding:create checkpoint=PodCheckpointOptions:create ephemeralcontainers eviction=Eviction@policy/v1:create exec=PodExecOptions:create,get log:get portforward=PodPortForwardOptions:create,get proxy=PodProxyOptions:create,delete,get,patch,update status',
  'v1|podtemplates|podtemplate|PodTemplate|N|A|||',
  'v1|replicationcontrollers|replicationcontroller|ReplicationController|N|A|rc|all|scale=Scale@autoscaling/v1 status',
  'v1|resourcequotas|resourcequota|ResourceQuota|N|A|quota||status',
  'v1|secrets|secret|Secret|N|A|||',
  'v1|serviceaccounts|serviceaccount|ServiceAccount|N|A|sa||token=TokenRequest@authentication.k8s.io/v1:create',
  'v1|services|service|Service|N|A|svc|all|proxy=ServiceProxyOptions:create,delete,get,patch,update status',
  'apiregistration.k8s.io/v1|apiservices|apiservice|APIService|C|A||api-extensions|status',
  'apps/v1|controllerrevisions|controllerrevision|ControllerRevision|N|A|||',
  'apps/v1|daemonsets|daemonset|DaemonSet|N|A|ds|all|status',
  'apps/v1|deployments|deployment|Deployment|N|A|deploy|all|scale=Scale@autoscaling/v1 status',
  'apps/v1|replicasets|replicaset|ReplicaSet|N|A|rs|all|scale=Scale@autoscaling/v1 status',
  'apps/v1|statefulsets|statefulset|StatefulSet|N|A|sts|all|scale=Scale@autoscaling/v1 status',
  'events.k8s.io/v1|events|event|Event|N|A|ev||',
  'authentication.k8s.io/v1|selfsubjectreviews|selfsubjectreview|SelfSubjectReview|C|create|||',
  'authentication.k8s.io/v1|tokenreviews|tokenreview|TokenReview|C|create|||',
  'authorization.k8s.io/v1|localsubjectaccessreviews|localsubjectaccessreview|LocalSubjectAccessReview|N|create|||',
  'authorization.k8s.io/v1|selfsubjectaccessreviews|selfsubjectaccessreview|SelfSubjectAccessReview|C|create|||',
  'authorization.k8s.io/v1|selfsubjectrulesreviews|selfsubjectrulesreview|SelfSubjectRulesReview|C|create|||',
  'authorization.k8s.io/v1|subjectaccessreviews|subjectaccessreview|SubjectAccessReview|C|create|||',
  'autoscaling/v2|horizontalpodautoscalers|horizontalpodautoscaler|HorizontalPodAutoscaler|N|A|hpa|all|status',
  'autoscaling/v1|horizontalpodautoscalers|horizontalpodautoscaler|HorizontalPodAutoscaler|N|A|hpa|all|status',
  'batch/v1|cronjobs|cronjob|CronJob|N|A|cj|all|status',
  'batch/v1|jobs|job|Job|N|A||all|status',
  'certificates.k8s.io/v1|certificatesigningrequests|certificatesigningrequest|CertificateSigningRequest|C|A|csr||approval status',
  'certificates.k8s.io/v1beta1|clustertrustbundles|clustertrustbundle|ClusterTrustBundle|C|A|||',
  'certificates.k8s.io/v1beta1|podcertificaterequests|podcertificaterequest|PodCertificateRequest|N|A|||status',
  'networking.k8s.io/v1|ingressclasses|ingressclass|IngressClass|C|A|||',
  'networking.k8s.io/v1|ingresses|ingress|Ingress|N|A|ing||status',
  'networking.k8s.io/v1|ipaddresses|ipaddress|IPAddress|C|A|ip||',
  'networking.k8s.io/v1|networkpolicies|networkpolicy|NetworkPolicy|N|A|netpol||',
  'networking.k8s.io/v1|servicecidrs|servicecidr|ServiceCIDR|C|A|||status',
  'policy/v1|poddisruptionbudgets|poddisruptionbudget|PodDisruptionBudget|N|A|pdb||status',
  'rbac.authorization.k8s.io/v1|clusterrolebindings|clusterrolebinding|ClusterRoleBinding|C|A|||',
  'rbac.authorization.k8s.io/v1|clusterroles|clusterrole|ClusterRole|C|A|||',
  'rbac.authorization.k8s.io/v1|rolebindings|rolebinding|RoleBinding|N|A|||',
  'rbac.authorization.k8s.io/v1|roles|role|Role|N|A|||',
  'storage.k8s.io/v1|csidrivers|csidriver|CSIDriver|C|A|||',
  'storage.k8s.io/v1|csinodes|csinode|CSINode|C|A|||',
  'storage.k8s.io/v1|csistoragecapacities|csistoragecapacity|CSIStorageCapacity|N|A|||',
  'storage.k8s.io/v1|storageclasses|storageclass|StorageClass|C|A|sc||',
  'storage.k8s.io/v1|volumeattachments|volumeattachment|VolumeAttachment|C|A|||status',
  'storage.k8s.io/v1|volumeattributesclasses|volumeattributesclass|VolumeAttributesClass|C|A|vac||',
  'admissionregistration.k8s.io/v1|mutatingadmissionpolicies|mutatingadmissionpolicy|MutatingAdmissionPolicy|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1|mutatingadmissionpolicybindings|mutatingadmissionpolicybinding|MutatingAdmissionPolicyBinding|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1|mutatingwebhookconfigurations|mutatingwebhookconfiguration|MutatingWebhookConfiguration|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1|validatingadmissionpolicies|validatingadmissionpolicy|ValidatingAdmissionPolicy|C|A||api-extensions|status',
  'admissionregistration.k8s.io/v1|validatingadmissionpolicybindings|validatingadmissionpolicybinding|ValidatingAdmissionPolicyBinding|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1|validatingwebhookconfigurations|validatingwebhookconfiguration|ValidatingWebhookConfiguration|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1beta1|mutatingadmissionpolicies|mutatingadmissionpolicy|MutatingAdmissionPolicy|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1beta1|mutatingadmissionpolicybindings|mutatingadmissionpolicybinding|MutatingAdmissionPolicyBinding|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1alpha1|mutatingadmissionpolicies|mutatingadmissionpolicy|MutatingAdmissionPolicy|C|A||api-extensions|',
  'admissionregistration.k8s.io/v1alpha1|mutatingadmissionpolicybindings|mutatingadmissionpolicybinding|MutatingAdmissionPolicyBinding|C|A||api-extensions|',
  'apiextensions.k8s.io/v1|customresourcedefinitions|customresourcedefinition|CustomResourceDefinition|C|A|crd crds|api-extensions|status',
  'scheduling.k8s.io/v1|priorityclasses|priorityclass|PriorityClass|C|A|pc||',
  'scheduling.k8s.io/v1alpha3|podgroups|podgroup|PodGroup|N|A|||status',
  'scheduling.k8s.io/v1alpha3|workloads|workload|Workload|N|A|||',
  'coordination.k8s.io/v1|leases|lease|Lease|N|A|||',
  'coordination.k8s.io/v1beta1|leasecandidates|leasecandidate|LeaseCandidate|N|A|||',
  'coordination.k8s.io/v1alpha2|leasecandidates|leasecandidate|LeaseCandidate|N|A|||',
  'node.k8s.io/v1|runtimeclasses|runtimeclass|RuntimeClass|C|A|||',
  'discovery.k8s.io/v1|endpointslices|endpointslice|EndpointSlice|N|A|||',
  'resource.k8s.io/v1|deviceclasses|deviceclass|DeviceClass|C|A|||',
  'resource.k8s.io/v1|devicetaintrules|devicetaintrule|DeviceTaintRule|C|A|||status',
  'resource.k8s.io/v1|resourceclaims|resourceclaim|ResourceClaim|N|A|||status',
  'resource.k8s.io/v1|resourceclaimtemplates|resourceclaimtemplate|ResourceClaimTemplate|N|A|||',
  'resource.k8s.io/v1|resourceslices|resourceslice|ResourceSlice|C|A|||',
  'resource.k8s.io/v1beta2|deviceclasses|deviceclass|DeviceClass|C|A|||',
  'resource.k8s.io/v1beta2|devicetaintrules|devicetaintrule|DeviceTaintRule|C|A|||status',
  'resource.k8s.io/v1beta2|resourceclaims|resourceclaim|ResourceClaim|N|A|||status',
  'resource.k8s.io/v1beta2|resourceclaimtemplates|resourceclaimtemplate|ResourceClaimTemplate|N|A|||',
  'resource.k8s.io/v1beta2|resourceslices|resourceslice|ResourceSlice|C|A|||',
  'resource.k8s.io/v1beta1|deviceclasses|deviceclass|DeviceClass|C|A|||',
  'resource.k8s.io/v1beta1|resourceclaims|resourceclaim|ResourceClaim|N|A|||status',
  'resource.k8s.io/v1beta1|resourceclaimtemplates|resourceclaimtemplate|ResourceClaimTemplate|N|A|||',
  'resource.k8s.io/v1beta1|resourceslices|resourceslice|ResourceSlice|C|A|||',
  'resource.k8s.io/v1alpha3|devicetaintrules|devicetaintrule|DeviceTaintRule|C|A|||status',
  'resource.k8s.io/v1alpha3|resourcepoolstatusrequests|resourcepoolstatusrequest|ResourcePoolStatusRequest|C|A|||status',
  'flowcontrol.apiserver.k8s.io/v1|flowschemas|flowschema|FlowSchema|C|A|||status',
  'flowcontrol.apiserver.k8s.io/v1|prioritylevelconfigurations|prioritylevelconfiguration|PriorityLevelConfiguration|C|A|||status',
  'internal.apiserver.k8s.io/v1alpha1|storageversions|storageversion|StorageVersion|C|A|||status',
  'storagemigration.k8s.io/v1|storageversionmigrations|storageversionmigration|StorageVersionMigration|C|A|||status',
  'storagemigration.k8s.io/v1beta1|storageversionmigrations|storageversionmigration|StorageVersionMigration|C|A|||status',
];

/** The groups a karmada-apiserver adds (an aggregated API for clusters, CRDs for the rest). */
const KARMADA_ROWS = [
  'cluster.karmada.io/v1alpha1|clusters|cluster|Cluster|C|A|||proxy=ClusterProxyOptions:create,delete,get,patch,update status',
  'policy.karmada.io/v1alpha1|clusteroverridepolicies|clusteroverridepolicy|ClusterOverridePolicy|C|A|cop|karmada-io|',
  'policy.karmada.io/v1alpha1|clusterpropagationpolicies|clusterpropagationpolicy|ClusterPropagationPolicy|C|A|cpp|karmada-io|',
  'policy.karmada.io/v1alpha1|overridepolicies|overridepolicy|OverridePolicy|N|A|op|karmada-io|',
  'policy.karmada.io/v1alpha1|propagationpolicies|propagationpolicy|PropagationPolicy|N|A|pp|karmada-io|',
  'work.karmada.io/v1alpha2|clusterresourcebindings|clusterresourcebinding|ClusterResourceBinding|C|A|crb|karmada-io|status',
  'work.karmada.io/v1alpha2|resourcebindings|resourcebinding|ResourceBinding|N|A|rb|karmada-io|status',
  'work.karmada.io/v1alpha1|works|work|Work|N|A|wk|karmada-io|status',
];

/** The custom resource only some members serve (CatalogOptions.crds). */
const CRD_ROWS = ['example.fleet.io/v1|widgets|widget|Widget|N|A|wd||status'];

/** The cluster inventory of a hub (sigs.k8s.io/cluster-inventory-api's CRD: namespaced, short name cp). */
const INVENTORY_ROWS = [
  'multicluster.x-k8s.io/v1alpha1|clusterprofiles|clusterprofile|ClusterProfile|N|A|cp||status',
];

/** A CRD a test installs in one member while clients run (CatalogOptions.gadgets): a group no other cluster serves. */
const GADGET_ROWS = ['gadgets.fleet.io/v1|gadgets|gadget|Gadget|N|A|gd||'];

/** Groups whose resources are served from CRDs (custom: true). */
const CRD_GROUPS = new Set([
  'policy.karmada.io',
  'work.karmada.io',
  'example.fleet.io',
  'multicluster.x-k8s.io',
  'gadgets.fleet.io',
]);

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUB_VERBS = ['get', 'patch', 'update'];

function verbs(code: string): string[] {
  if (code === 'A') return [...ALL_VERBS];
  if (code === 'S') return [...SUB_VERBS];
  return code.split(',');
}

function words(s: string | undefined): string[] | undefined {
  return s ? s.split(' ') : undefined;
}

export function parseRow(row: string): ResourceDef {
  const [gv, resource, singular, kind, scope, verbCode, short, cats, subs] = row.split('|') as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const slash = gv.lastIndexOf('/');
  const group = slash < 0 ? '' : gv.slice(0, slash);
  const version = gv.slice(slash + 1);
  const def: ResourceDef = {
    group,
    version,
    resource,
    singular,
    kind,
    namespaced: scope === 'N',
    verbs: verbs(verbCode),
  };
  const shortNames = words(short);
  if (shortNames) def.shortNames = shortNames;
  const categories = words(cats);
  if (categories) def.categories = categories;
  if (subs) {
    def.subresources = subs.split(' ').map((spec): SubresourceDef => {
      const m = /^([a-z]+)(?:=([A-Za-z]+)(?:@([^/]+)\/([^:]+))?)?(?::(.+))?$/.exec(spec);
      if (!m) throw new Error(`bad subresource spec ${spec}`);
      const sub: SubresourceDef = { name: m[1]!, kind: m[2] ?? kind, verbs: verbs(m[5] ?? 'S') };
      if (m[3]) {
        sub.group = m[3];
        sub.version = m[4]!;
      }
      return sub;
    });
  }
  if (CRD_GROUPS.has(group)) def.custom = true;
  return def;
}

export interface ResourceTableOptions {
  role: 'member' | 'karmada';
  crds: boolean;
  clusterInventory?: boolean;
  gadgets?: boolean;
}

/** Every resource a cluster with these options serves, in discovery order. */
export function resourceTable(opts: ResourceTableOptions): ResourceDef[] {
  const rows = [...BUILTIN_ROWS];
  if (opts.role === 'karmada') rows.push(...KARMADA_ROWS);
  if (opts.crds) rows.push(...CRD_ROWS);
  if (opts.clusterInventory) rows.push(...INVENTORY_ROWS);
  if (opts.gadgets) rows.push(...GADGET_ROWS);
  return rows.map(parseRow);
}

/**
 * Resources that have no storage (virtual, create-only reviews, bindings, componentstatuses):
 * kube-apiserver lists no storageVersionHash for them.
 */
export function hasStorage(def: ResourceDef): boolean {
  if (def.resource === 'bindings' || def.resource === 'componentstatuses') return false;
  if (def.verbs.length === 1 && def.verbs[0] === 'create') return false;
  return true;
}

/** The group/version a resource is stored as (its hash is the same across served versions). */
export function storageGroupVersion(def: ResourceDef, all: readonly ResourceDef[]): [string, string] {
  if (def.group === 'events.k8s.io' && def.resource === 'events') return ['', 'v1'];
  const first = all.find((r) => r.group === def.group && r.resource === def.resource);
  return [def.group, first?.version ?? def.version];
}
