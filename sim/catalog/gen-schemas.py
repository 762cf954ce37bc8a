#!/usr/bin/env python3
"""Regenerates schemas.ts: OpenAPI schemas for the kinds the simulated clusters describe in full.

Source: the model classes of @kubernetes/client-node (generated from the Kubernetes OpenAPI spec):
field names, types and formats from dist/gen/models/*.js, descriptions from the *.d.ts doc comments.
Only the types in EXPANDED get properties; every other referenced type becomes a permissive object
(x-kubernetes-preserve-unknown-fields), so validation never rejects a valid manifest.
Run from the repository root: python3 sim/catalog/gen-schemas.py
"""
import json, re, os

MODELS = 'node_modules/@kubernetes/client-node/dist/gen/models/'
META = 'io.k8s.apimachinery.pkg.apis.meta.v1.'
CORE = 'io.k8s.api.core.v1.'
APPS = 'io.k8s.api.apps.v1.'
BATCH = 'io.k8s.api.batch.v1.'
EXPANDED = {
    'V1ObjectMeta': META + 'ObjectMeta',
    'V1OwnerReference': META + 'OwnerReference',
    'V1ManagedFieldsEntry': META + 'ManagedFieldsEntry',
    'V1LabelSelector': META + 'LabelSelector',
    'V1LabelSelectorRequirement': META + 'LabelSelectorRequirement',
    'V1Pod': CORE + 'Pod',
    'V1PodSpec': CORE + 'PodSpec',
    'V1PodStatus': CORE + 'PodStatus',
    'V1PodTemplateSpec': CORE + 'PodTemplateSpec',
    'V1Container': CORE + 'Container',
    'V1ContainerPort': CORE + 'ContainerPort',
    'V1EnvVar': CORE + 'EnvVar',
    'V1EnvVarSource': CORE + 'EnvVarSource',
    'V1EnvFromSource': CORE + 'EnvFromSource',
    'V1ResourceRequirements': CORE + 'ResourceRequirements',
    'V1VolumeMount': CORE + 'VolumeMount',
    'V1Volume': CORE + 'Volume',
    'V1Probe': CORE + 'Probe',
    'V1Toleration': CORE + 'Toleration',
    'V1Service': CORE + 'Service',
    'V1ServiceSpec': CORE + 'ServiceSpec',
    'V1ServicePort': CORE + 'ServicePort',
    'V1ServiceStatus': CORE + 'ServiceStatus',
    'V1ConfigMap': CORE + 'ConfigMap',
    'V1Secret': CORE + 'Secret',
    'V1Namespace': CORE + 'Namespace',
    'V1NamespaceSpec': CORE + 'NamespaceSpec',
    'V1NamespaceStatus': CORE + 'NamespaceStatus',
    'V1Deployment': APPS + 'Deployment',
    'V1DeploymentSpec': APPS + 'DeploymentSpec',
    'V1DeploymentStatus': APPS + 'DeploymentStatus',
    'V1DeploymentStrategy': APPS + 'DeploymentStrategy',
    'V1RollingUpdateDeployment': APPS + 'RollingUpdateDeployment',
    'V1DeploymentCondition': APPS + 'DeploymentCondition',
    'V1Job': BATCH + 'Job',
    'V1JobSpec': BATCH + 'JobSpec',
    'V1JobStatus': BATCH + 'JobStatus',
    'V1JobCondition': BATCH + 'JobCondition',
}
# maps whose values are resource.Quantity (numbers or strings)
QUANTITY_MAPS = {'limits', 'requests', 'capacity', 'allocatable', 'hard', 'used', 'overhead'}


def clean(s):
    return s.replace('\\"', '"').replace("\\'", "'") if s else s


def docs(cls):
    t = open(MODELS + cls + '.d.ts').read()
    out = {}
    m = re.search(r'/\*\*\n\* (.*?)\n\*/\nexport declare class', t, re.S)
    out[''] = clean(m.group(1).replace('\n* ', '\n')) if m else ''
    for m in re.finditer(r"/\*\*\n    \* (.*?)\n    \*/\n    '(\w+)'", t, re.S):
        out[m.group(2)] = clean(m.group(1).replace('\n    * ', '\n'))
    return out


def attrs(cls):
    t = open(MODELS + cls + '.js').read()
    m = re.search(r'attributeTypeMap = (\[.*?\]);', t, re.S)
    return json.loads(m.group(1))


def class_desc(cls):
    return docs(cls)['']


def type_schema(t, fmt, name):
    if t == 'string':
        s = {'type': 'string'}
        if fmt == 'byte':
            s['format'] = 'byte'
        return s
    if t == 'number':
        return {'type': 'integer', 'format': fmt or 'int32'} if fmt in ('int32', 'int64', '') else {'type': 'number', 'format': fmt}
    if t == 'boolean':
        return {'type': 'boolean'}
    if t == 'Date':
        return {'type': 'string', 'format': 'date-time'}
    if t in ('any', 'object'):
        return {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
    if t == 'IntOrString':
        return {'x-kubernetes-int-or-string': True}
    m = re.match(r'^Array<(.+)>$', t)
    if m:
        return {'type': 'array', 'items': type_schema(m.group(1), '', name)}
    m = re.match(r'^\{ \[key: string\]: (.+); \}$', t)
    if m:
        inner = {'x-kubernetes-int-or-string': True} if name in QUANTITY_MAPS else type_schema(m.group(1), '', name)
        if inner.get('type') == 'string':
            inner = {'type': 'string', 'default': ''}
        return {'type': 'object', 'additionalProperties': inner}
    if t in EXPANDED:
        return {'$ref': EXPANDED[t]}
    if os.path.exists(MODELS + t + '.js'):
        return {'type': 'object', 'description': class_desc(t), 'x-kubernetes-preserve-unknown-fields': True}
    raise Exception('unknown type ' + t)


schemas = {}
for cls, key in EXPANDED.items():
    d = docs(cls)
    props = {}
    for a in attrs(cls):
        s = type_schema(a['type'], a['format'], a['baseName'])
        desc = d.get(a['name'])
        if '$ref' in s:
            s = {'allOf': [s]}
        if desc:
            s = {'description': desc, **s}
        elif 'description' in s and '$ref' not in s and 'allOf' not in s:
            pass
        props[a['baseName']] = s
    schemas[key] = {'description': d[''], 'type': 'object', 'properties': props}

body = json.dumps(schemas, indent=None, separators=(',', ':'), sort_keys=False)
out = ('// Generated by gen-schemas.py from @kubernetes/client-node model classes (Kubernetes OpenAPI spec v1.34).\n'
       '// Do not edit by hand. Refs are bare schema names; openapi.ts rewrites them per document format.\n'
       '// biome-ignore-all format: generated\n'
       'export const SCHEMAS: Record<string, Record<string, unknown>> = ' + body + ';\n')
open(os.path.join(os.path.dirname(__file__), 'schemas.ts'), 'w').write(out)
print('wrote', len(out), 'bytes,', len(schemas), 'schemas')
