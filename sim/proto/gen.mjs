#!/usr/bin/env node
/**
 * Regenerates sim/proto/schema.json, the wire schema the simulated clusters use to read and write
 * `application/vnd.kubernetes.protobuf`: for every message of Kubernetes 1.35's generated.proto files
 * (k8s.io/api/** and k8s.io/apimachinery/**, see ../shared/fixtures/kube-proto/SOURCES.txt), its fields as
 * [number, name, type, flags].
 *
 * Run by hand from the repository root (output committed; tests only read schema.json):
 *   node sim/proto/gen.mjs [fixtures-dir]      default ../shared/fixtures/kube-proto
 *
 * The .proto files are go-to-protobuf's output, a small proto2 subset: `syntax`, `package`, `import`,
 * `option` lines, top-level `message` blocks of `optional|repeated <type> <name> = <n>;` and
 * `map<K, V> <name> = <n>;` lines, no nesting, enums, oneofs or field options. The parser accepts exactly
 * that and fails loudly on anything else, so a new construct upstream cannot be silently misread.
 *
 * JSON names: go-to-protobuf names a field after its Go json tag, so the proto name is the JSON name,
 * except for Go structs embedded with `json:",inline"` (Volume.volumeSource, Probe.handler, ...), whose
 * fields JSON flattens into the parent. The proto files cannot say which fields are inline; this script
 * finds them by comparing each message with the JSON model of the same type in @kubernetes/client-node
 * (generated from the OpenAPI spec): a proto field the JSON model lacks, of a message type whose fields
 * the JSON model has, is inline. The rule found on a stable version is applied to every version of that
 * message (v1beta1 IngressRule flattens like v1's). Other mismatches are printed for review.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const SCALARS = new Set(['string', 'int32', 'int64', 'bool', 'bytes', 'double', 'float', 'uint32', 'uint64']);

function walk(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name === 'generated.proto') out.push(p);
  }
  return out;
}

/** One .proto file → { pkg, messages: { Name: [[num, name, type, flags]] } } with types still relative. */
export function parseProto(text, file = '<proto>') {
  let pkg = '';
  let current;
  const messages = {};
  const lines = text.replace(/\/\*[\s\S]*?\*\//g, '').split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\/\/.*$/, '').trim();
    const fail = () => {
      throw new Error(`${file}:${i + 1}: unsupported .proto line: ${raw}`);
    };
    if (!line) return;
    if (current === undefined) {
      if (/^(syntax|import|option)\b.*;$/.test(line)) return;
      const pkgLine = /^package ([\w.]+);$/.exec(line);
      const msgLine = /^message (\w+) \{$/.exec(line);
      if (pkgLine) pkg = pkgLine[1];
      else if (msgLine) {
        current = msgLine[1];
        messages[current] = [];
      } else fail();
      return;
    }
    const field = /^(optional|repeated|required) ([\w.]+) (\w+) = (\d+);$/.exec(line);
    const map = /^map<(\w+), ([\w.]+)> (\w+) = (\d+);$/.exec(line);
    if (line === '}') current = undefined;
    else if (field) {
      messages[current].push([Number(field[4]), field[3], field[2], field[1] === 'repeated' ? 'r' : '']);
    } else if (map) {
      if (map[1] !== 'string') fail();
      messages[current].push([Number(map[4]), map[3], map[2], 'm']);
    } else fail();
  });
  if (current !== undefined) throw new Error(`${file}: unterminated message ${current}`);
  return { pkg, messages };
}

/** Resolves a type reference as protoc does for this subset: fully qualified, or in the same package. */
function resolve(type, pkg, known) {
  if (SCALARS.has(type)) return type;
  if (type.startsWith('.')) {
    if (!known.has(type.slice(1))) throw new Error(`unknown type ${type}`);
    return type.slice(1);
  }
  const local = `${pkg}.${type}`;
  if (known.has(local)) return local;
  throw new Error(`unknown type ${type} in package ${pkg}`);
}

/** The client-node model class of a message, if any (V1Volume, RbacV1Subject, CoreV1Event, ...). */
function modelOf(models, pkg, name) {
  const m = /^k8s\.io\.(?:api|apimachinery\.pkg\.apis)\.(\w+)\.(\w+)$/.exec(pkg);
  if (!m) return undefined;
  const [, group, version] = m;
  const V = version[0].toUpperCase() + version.slice(1);
  const G = group[0].toUpperCase() + group.slice(1);
  return models.get(`${G}${V}${name}`) ?? models.get(`${V}${name}`);
}

async function loadModels(root) {
  const dir = join(root, 'node_modules/@kubernetes/client-node/dist/gen/models');
  const models = new Map();
  if (!existsSync(dir)) return models;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.js') || f === 'all.js' || f === 'ObjectSerializer.js') continue;
    const mod = await import(pathToFileURL(join(dir, f)).href);
    for (const [k, v] of Object.entries(mod)) {
      if (typeof v === 'function' && Array.isArray(v.attributeTypeMap)) {
        models.set(k, new Set(v.attributeTypeMap.map((a) => a.baseName)));
      }
    }
  }
  return models;
}

export async function generate(fixtures, root = process.cwd()) {
  const files = walk(fixtures);
  const parsed = files.map((f) => parseProto(readFileSync(f, 'utf8'), relative(fixtures, f)));
  const known = new Set(parsed.flatMap((p) => Object.keys(p.messages).map((n) => `${p.pkg}.${n}`)));
  const messages = {};
  for (const p of parsed) {
    for (const [name, fields] of Object.entries(p.messages)) {
      messages[`${p.pkg}.${name}`] = fields
        .map(([num, fname, type, flags]) => [num, fname, resolve(type, p.pkg, known), flags])
        .sort((a, b) => a[0] - b[0]);
    }
  }
  const models = await loadModels(root);
  const inline = new Set();
  const renamed = new Map();
  const review = [];
  if (!models.size) {
    throw new Error('node_modules/@kubernetes/client-node is needed to find inline fields: run npm ci first');
  }
  // The JSON names a message contributes when inlined into its parent (its own inline fields expanded).
  const flat = (type, seen = new Set()) => {
    const short = type.slice(type.lastIndexOf('.') + 1);
    return (messages[type] ?? []).flatMap(([, n, t]) =>
      inline.has(`${short}.${n}`) && !seen.has(t)
        ? flat(t, new Set([...seen, t]))
        : [renamed.get(`${short}.${n}`) ?? n],
    );
  };
  // Two passes: an inline struct may itself inline another (NamedRuleWithOperations → RuleWithOperations → Rule).
  for (let pass = 0; pass < 2; pass++) {
    review.length = 0;
    for (const p of parsed) {
      for (const name of Object.keys(p.messages)) {
        const json = modelOf(models, p.pkg, name);
        if (!json) continue;
        for (const [, fname, type] of messages[`${p.pkg}.${name}`]) {
          if (json.has(fname)) continue;
          // Go fields whose json tag is not the lower-camel Go name (Webhooks, uID, aPIGroup, Expression).
          const ci = [...json].find((j) => j.toLowerCase() === fname.toLowerCase());
          if (ci) renamed.set(`${name}.${fname}`, ci);
          else if (messages[type] && flat(type).every((n) => json.has(n))) inline.add(`${name}.${fname}`);
          else review.push(`${p.pkg}.${name}.${fname}`);
        }
      }
    }
  }
  for (const [full, fields] of Object.entries(messages)) {
    const short = full.slice(full.lastIndexOf('.') + 1);
    for (const f of fields) {
      if (inline.has(`${short}.${f[1]}`)) f[3] += 'i';
      const json = renamed.get(`${short}.${f[1]}`);
      if (json) f.push(json);
    }
  }
  const sorted = Object.fromEntries(
    Object.keys(messages)
      .sort()
      .map((k) => [k, messages[k]]),
  );
  return {
    schema: {
      source: 'Kubernetes 1.35 generated.proto (kubernetes/api v0.35.7, kubernetes/apimachinery v0.35.7)',
      messages: sorted,
    },
    review,
    inline: [...inline].sort(),
    renamed: [...renamed].map(([k, v]) => `${k}→${v}`).sort(),
  };
}

/** The committed form: one message per line, so a diff shows which messages changed. */
export function render(schema) {
  const lines = Object.entries(schema.messages).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return `{"source":${JSON.stringify(schema.source)},\n"messages":{\n${lines.join(',\n')}\n}}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fixtures = process.argv[2] ?? '../shared/fixtures/kube-proto';
  const { schema, review, inline, renamed } = await generate(fixtures);
  writeFileSync('sim/proto/schema.json', render(schema));
  console.log(
    `${Object.keys(schema.messages).length} messages\ninline: ${inline.join(', ')}\nrenamed: ${renamed.join(', ')}`,
  );
  if (review.length)
    console.log(`proto fields without a JSON property of that name (review):\n  ${review.join('\n  ')}`);
}
