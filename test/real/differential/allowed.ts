/**
 * The differences between the simulator and a real kube-apiserver 1.35 that may stay, each with why. A line
 * of the check ("<case name>: <path>: sim said …, real said …") matching `at` is allowed; any other fails
 * differential.test.ts. Keep this short: what can be fixed in sim/ is fixed there.
 */
export const ALLOWED: Array<{ at: RegExp; why: string }> = [
  {
    at: /^discovery: \S+: sim serves it, real does not$/,
    why: "the sim's catalogue is kube's all-APIs-enabled discovery (alpha/beta versions, pods/checkpoint); the bed's members run default runtime-config and feature gates",
  },
  {
    at: /^GET \/openapi\/v3 \[JSON\]: \.contentType: sim said "application\/json", real said "text\/plain; charset=utf-8"$/,
    why: "kube-openapi's v3 root writes text/plain to Accept: application/json; only measured for that Accept, so the sim's JSON stays",
  },
  {
    at: /^GET \/api\/v1\/componentstatuses\S* \[[^\]]+\]: \.body\.(metadata\.resourceVersion|details\.kind|message):/,
    why: 'ComponentStatus is computed, not stored: kube lists it without an RV and names the singular in its NotFound',
  },
  {
    at: /^GET \/(api\/v1|apis\/discovery\.k8s\.io\/v1)\/namespaces\/[^/]+\/(endpoints|endpointslices) \[[^\]]+\]: \.body\.(items|rows)[:\s]/,
    why: "the real member's endpoints and endpointslice controllers publish svc-a's; the sim runs no such controller",
  },
  {
    at: /^GET \/(api\/v1|apis\/events\.k8s\.io\/v1)\/namespaces\/[^/]+\/events \[[^\]]+\]: \.body\.(items|rows): sim said (0 entries \[\]|null|absent), real said /,
    why: "the real member's own controllers may record events on the seeded objects (the ClusterIP repair loop's ClusterIPNotAllocated on svc-a when its pass runs between the Service's create and its allocation); the sim runs no such controller",
  },
  {
    at: /\/(apiservices|certificatesigningrequests|clusterrolebindings|componentstatuses|controllerrevisions|csidrivers|csinodes|deviceclasses|endpointslices|flowschemas|horizontalpodautoscalers|ingressclasses|ingresses|ipaddresses|leases|mutatingwebhookconfigurations|networkpolicies|persistentvolumeclaims|persistentvolumes|poddisruptionbudgets|podtemplates|priorityclasses|prioritylevelconfigurations|replicationcontrollers|resourceclaims|resourceclaimtemplates|resourcequotas|resourceslices|rolebindings|runtimeclasses|servicecidrs|storageclasses|validatingadmissionpolicies|validatingadmissionpolicybindings|validatingwebhookconfigurations|volumeattachments|volumeattributesclasses)(\?\S*)? \[Table\]: \.body\.columnDefinitions/,
    why: "the sim's catalogue prints these kinds with the default table (Name, Created At); kube has a printer for each",
  },
  {
    at: /\[Table\]: \.body\.columnDefinitions\[\d+\]\.(description|type): /,
    why: "the sim's column descriptions and types come from an older kube's OpenAPI (wording and int/string drift only)",
  },
  {
    at: /\/(limitranges|clusterroles|csistoragecapacities|customresourcedefinitions)(\?\S*)? \[Table\]: \.body\.rows: sim said \[\], real said null$/,
    why: "these kinds' kube printers build rows from a nil slice, so an empty table is rows: null; the sim's engine writes []",
  },
  {
    at: /^GET \/apis\/(apiregistration\.k8s\.io|apiextensions\.k8s\.io)\/v1\/\S+ \[protobuf\]: /,
    why: "kube serves APIService and CRD lists in protobuf; the sim's schema (k8s.io/api's generated.proto) lacks those types, so it answers JSON",
  },
  {
    at: /managedFields\[0\]\.fieldsV1\.f:(spec|status)\b/,
    why: "the sim's field sets are schema-less: it records a creator's fields after its strategy filled server-set ones (IP allocation, namespace finalizers and phase, load balancer status) and cannot tell atomic maps (a Service's selector)",
  },
  {
    at: /\((kind mismatch|malformed JSON|empty body|malformed merge patch)\): \.body\.message: /,
    why: "kube's words come from Go's JSON decoder (and it meets a Secret's data as bad base64 before the kind); the sim's from JavaScript's",
  },
  {
    at: /\((port out of range)\): status: sim said 201 /,
    why: "the sim validates names, container names and ConfigMap/Secret data, not every kind's fields",
  },
  {
    at: /\(merge patch with an unknown field, fieldValidation=Strict\): \.body\.(message|details\.causes\[0\]\.message): from character \d+/,
    why: 'kube quotes the patched object with untouched metadata in Go field order; the sim keeps the order the object was written in',
  },
  {
    at: /\/configmaps\/w-ssa(\?\S*)? [[(]/,
    why: "the sim's server-side apply keeps simplified ownership (sim/apply.ts): no shared ownership of equal values, one conflict per field, no typed check of applied fields, Go's YAML wording; later apply cases inherit the state that diverged",
  },
];
