/**
 * A structure-only skip (bench/lib/structskip.wat) against today's validating one, prototyped to decide
 * (not the fleet's, not a test, not a bench case; docs/benchmarks.md, "A structure-only skip"):
 *   node --import tsx bench/lib/structskip-ab.ts check [runs=300]
 *   node --import tsx bench/lib/structskip-ab.ts skip|tape|split [rounds=15] [pods=2000]
 *   node --import tsx bench/lib/structskip-ab.ts mutate [edits=2000]
 *   node --import tsx bench/lib/structskip-ab.ts emit <file.wasm>
 * Two instances of this tree's lane (src/merge/jsonsplit/wasm/lane.ts), one of the committed skip.wasm,
 * one of skip.wat with its $skipFrom renamed $skipValid and structskip.wat's $skipFrom spliced in (the
 * tape's containers not looked into and the skip export go there; the tape itself is unchanged).
 * check: the same answers (end, -1, -2) and tapes on the canned pods and rows, random JSON written loosely
 * (whole, every prefix, rooms around its depth), strings of backslash runs, quotes, brackets and
 * non-ASCII placed across block edges, deep nesting; and the invalid bodies each lets through.
 * skip: the skip export over each canned item whole; tape: the tape call per item as the item scanner
 * makes it; split: a ListSplitter per lane over one list body in 64 KiB chunks (items' bytes and facts
 * compared first). The lanes in turn, the order swapped every other round, CPU ns per byte (split: ms per
 * MiB), medians and the per-round ratio today/struct. emit: writes the spliced binary (a copy of a built
 * dist/node with it as its skip.wasm gives floor-ab.ts the whole process with nothing else changed).
 * mutate: list bodies of 20 canned pods or rows with one byte edited inside an item, through a splitter on
 * each lane: how many today's refuses and the structure-only one passes on to a client, by edit.
 * STRUCT_WAT=bench/lib/structskip-kinds.wat: the variant that also matches each closer with its opener;
 * STRUCT_WAT=bench/lib/structskip-strings.wat: that, and strings validated as today (control characters,
 * escapes), only the tokens between strings left unchecked.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { assemble } from '../../scripts/build-wasm.mjs';
import { DESCENDS, KEYS } from '../../src/merge/jsonsplit/facts.ts';
import { ListSplitter } from '../../src/merge/jsonsplit/index.ts';
import { ItemScanner } from '../../src/merge/jsonsplit/item.ts';
import { useNativeEquality } from '../../src/merge/jsonsplit/memo.ts';
import { WasmSkip } from '../../src/merge/jsonsplit/wasm/lane.ts';
import { looseJson, seeded } from '../../test/helpers/loosejson.ts';
import { itemChunks, makeBase, nth } from './canned-bodies.ts';
import { pairedRounds } from './stats.ts';

const HERE = resolve(import.meta.dirname, '../..');
const WASM = `${HERE}/src/merge/jsonsplit/wasm`;

/** skip.wat with structskip.wat's $skipFrom in place of its own (renamed $skipValid) */
async function structBinary(): Promise<Uint8Array<ArrayBuffer>> {
  const skip = readFileSync(`${WASM}/skip.wat`, 'utf8');
  const struct = readFileSync(process.env.STRUCT_WAT ?? `${HERE}/bench/lib/structskip.wat`, 'utf8');
  if (!skip.includes('(func $skipFrom ')) throw new Error('skip.wat has no $skipFrom');
  const text = `${skip.replace('(func $skipFrom ', '(func $skipValid ').replace(/\)\s*$/, '')}\n${struct}\n)\n`;
  return (await assemble('structskip.wat', text)) as Uint8Array<ArrayBuffer>;
}

const [mode = 'check', a1, a2] = process.argv.slice(2);
const today = new WebAssembly.Module(readFileSync(`${WASM}/skip.wasm`));
const structBytes = await structBinary();
if (mode === 'emit') {
  if (!a1) throw new Error('usage: structskip-ab.ts emit <file.wasm>');
  writeFileSync(a1, structBytes);
  console.log(`${a1}: ${structBytes.length} bytes`);
  process.exit(0);
}
const structMod = new WebAssembly.Module(structBytes);
const lanes = [new WasmSkip(today), new WasmSkip(structMod)] as const;
const [T, S] = lanes;
const enc = new TextEncoder();
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;

/** a fresh array each call: the lane copies an array into its memory once, by identity */
const bytes = (s: string) => enc.encode(s);

function tapeOf(l: WasmSkip, b: Uint8Array, i: number, n: number, room: number): string {
  const end = l.tape(b, i, n, room);
  if (end < 0) return String(end);
  const count = l.words[l.tapeBase - 256]!;
  return `${end} ${Array.from(l.words.subarray(l.tapeBase, l.tapeBase + 5 * count)).join(',')}`;
}

let compared = 0;
function agree(b: Uint8Array, i: number, n: number, room: number, what: string): number {
  const t = T.skip(b, i, n, room);
  const s = S.skip(b, i, n, room);
  compared++;
  if (t !== s) {
    const text = JSON.stringify(new TextDecoder().decode(b.subarray(i, n)));
    throw new Error(`${what}: at ${i}..${n} room ${room}: today ${t}, struct ${s}: ${text.slice(0, 400)}`);
  }
  if (b[i] === 0x7b || b[i] === 0x5b) {
    const tt = tapeOf(T, b, i, n, room);
    const ts = tapeOf(S, b, i, n, room);
    compared++;
    if (tt !== ts)
      throw new Error(`${what} tape: at ${i}..${n} room ${room}: ${tt.slice(0, 200)} / ${ts.slice(0, 200)}`);
  }
  return t;
}

function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v !== null && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

/** text placed after `pad` bytes of whitespace in a list-like array, so its blocks cross 64-byte edges */
function placed(text: string, pad: number): { b: Uint8Array; i: number } {
  const head = `[${' '.repeat(pad)}`;
  return { b: bytes(`${head}${text}, 1]`), i: enc.encode(head).length };
}

async function check(runs: number): Promise<void> {
  const base = await makeBase();
  // 1. the canned pods and rows, whole: the same ends and tapes
  for (const rows of [false, true]) {
    const { chunks } = itemChunks(base, rows, 1000);
    for (const { b, items } of chunks)
      for (const s of items) agree(b, s, b.length, 100, rows ? 'row' : 'pod');
  }
  // every prefix of a few canned items (-1 from both until the item is in)
  for (const rows of [false, true])
    for (let k = 0; k < 5; k++) {
      const t = nth(rows ? base.rows : base.items, k * 97, rows);
      const { b, i } = placed(t, k * 13);
      for (let n = i + 1; n <= i + enc.encode(t).length; n++) agree(b, i, n, 100, 'canned prefix');
    }
  console.log(`canned pods and rows, whole and cut: ${compared} answers agree`);
  // the bytes the structure-only skip would stop validating: those of containers the tape does not look into
  const descends = new Set(KEYS.filter((_, r) => DESCENDS[r + 1]).map((k) => String.fromCharCode(...k)));
  const unseen = (v: unknown, into: boolean): number => {
    if (v === null || typeof v !== 'object') return 0;
    if (!into) return Buffer.byteLength(JSON.stringify(v));
    if (Array.isArray(v)) return v.reduce((sum: number, x) => sum + unseen(x, true), 0);
    return Object.entries(v).reduce((sum, [k, x]) => sum + unseen(x, descends.has(k)), 0);
  };
  for (const rows of [false, true]) {
    const texts = rows ? base.rows : base.items;
    const all = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
    const skipped = texts.reduce((sum, t) => sum + unseen(JSON.parse(t), true), 0);
    console.log(
      `  canned ${rows ? 'rows' : 'pods'}: ${((100 * skipped) / all).toFixed(1)} % of their bytes lie in containers the tape hands to $skipFrom`,
    );
  }
  // 2. random JSON written loosely (whitespace, \u escapes), at every cut and at rooms around its depth
  const before = compared;
  const value = fc.jsonValue({ maxDepth: 8 });
  fc.assert(
    fc.property(value, fc.integer(), fc.nat(80), (v, seed, pad) => {
      const text = looseJson(v, seeded(seed));
      const { b, i } = placed(text, pad);
      const n = i + enc.encode(text).length;
      const d = depthOf(v);
      for (const room of [d - 1, d, d + 1, 100]) if (room >= 0) agree(b, i, b.length, room, 'random');
      for (let m = i + 1; m < n; m++) agree(b, i, m, 100, 'random prefix');
    }),
    { numRuns: runs },
  );
  console.log(`random JSON (${runs} values, every prefix, rooms): ${compared - before} answers agree`);
  // 3. strings made to break the block logic: backslash runs, escaped quotes, brackets, multi-byte UTF-8
  const before3 = compared;
  const nasty = fc.string({
    unit: fc.constantFrom('\\', '"', '{', '}', '[', ']', 'a', 'é', '€', '😀', '\n', '\u0001', ' ', ':', ','),
    maxLength: 200,
  });
  const shape = fc.array(fc.tuple(nasty, fc.oneof(nasty, fc.jsonValue({ maxDepth: 2 }))), { maxLength: 6 });
  fc.assert(
    fc.property(shape, fc.nat(130), fc.boolean(), (members, pad, asArray) => {
      const v = asArray ? members.flat() : Object.fromEntries(members);
      const text = JSON.stringify(v);
      const { b, i } = placed(text, pad);
      const n = i + enc.encode(text).length;
      agree(b, i, b.length, 100, 'strings');
      for (let m = i + 1; m < n; m++) agree(b, i, m, 100, 'strings prefix');
    }),
    { numRuns: runs },
  );
  // backslash runs of every length 0..130 before a quote, at every offset in a block
  for (let run = 0; run <= 130; run++)
    for (let off = 0; off < 64; off += 7) {
      const s = `${'\\'.repeat(run)}${run % 2 ? '"' : ''}`;
      const text = JSON.stringify({ a: [s, `]}${s}`, { b: s }], c: '"{' });
      const { b, i } = placed(text, off);
      agree(b, i, b.length, 100, 'backslash runs');
    }
  console.log(
    `strings of escapes, quotes, brackets, UTF-8 across block edges: ${compared - before3} answers agree`,
  );
  // 4. deep nesting: arrays, objects and both, at every room around the depth, whole and cut
  const before4 = compared;
  for (let depth = 1; depth <= 140; depth++) {
    const texts = [
      `${'['.repeat(depth)}${']'.repeat(depth)}`,
      `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
      `${'[{"k":'.repeat(depth)}"x"${'}]'.repeat(depth)}`,
    ];
    for (const text of texts) {
      const { b, i } = placed(text, depth % 64);
      for (const room of [depth - 2, depth - 1, depth, depth + 1, 100, 130, 200])
        agree(b, i, b.length, room, 'deep');
      for (let m = i + 1; m < i + text.length; m += 3) agree(b, i, m, 100, 'deep prefix');
    }
  }
  console.log(`deep nesting 1..140, rooms and cuts: ${compared - before4} answers agree`);
  // 5. strings whose only faults are their own (control characters, escapes): structskip-strings.wat must
  // answer as today at every cut; the others are expected to differ (counted)
  const strict = (process.env.STRUCT_WAT ?? '').includes('strings');
  const inner = fc.constantFrom(
    ...['x', 'é', '😀', '{', ']', ' ', '\\n', '\\"', '\\\\', '\\/', '\\u00e9', '\\uD83D\\uDE00'],
    ...['\\x', '\\q', '\\u12G4', '\\uZZZZ', '\\u', '\\u1', '\u0001', '\u001f', '\t', '\n'],
  );
  const bad = fc.array(inner, { maxLength: 40 }).map((xs) => xs.join(''));
  let differ = 0;
  let cases = 0;
  fc.assert(
    fc.property(bad, bad, bad, fc.nat(70), (s1, s2, s3, pad) => {
      const text = `{"a":["${s1}",{"b":"${s2}"}],"c":"${s3}"}`;
      const { b, i } = placed(text, pad);
      const n = i + enc.encode(text).length;
      for (let m = i + 1; m <= n; m++) {
        cases++;
        if (T.skip(b, i, m, 100) !== S.skip(b, i, m, 100)) {
          differ++;
          if (strict) agree(b, i, m, 100, 'bad strings');
        }
        if (strict) agree(b, i, m, 100, 'bad strings');
      }
    }),
    { numRuns: runs },
  );
  console.log(
    `strings with control characters and escapes good or bad, every cut: ${differ} of ${cases} answers differ`,
  );
  // 6. invalid items: what each answers (today -2 sends the item to the splitter's automaton, which fails)
  const invalid: Array<[string, string]> = [
    ['a literal cut', '{"a":[tru]}'],
    ['a literal misspelt', '{"a":[nul,fals]}'],
    ['a leading zero', '{"a":[01]}'],
    ['a bare minus, a dot without digits', '{"a":[-,1.]}'],
    ['a number in hex', '{"a":[0x1f]}'],
    ['a bare word', '{"a":[abc]}'],
    ['a raw control character in a string', '{"a":["x\u0001y"]}'],
    ['a raw newline in a string', '{"a":["x\ny"]}'],
    ['an unknown escape', '{"a":["\\x41"]}'],
    ['a short \\u escape', '{"a":["\\u12G4"]}'],
    ['invalid UTF-8 (0xff) in a string', '{"a":["x\udcff"]}'],
    ['a missing colon', '{"a":{"b" 1}}'],
    ['a missing comma', '{"a":[1 2]}'],
    ['a trailing comma', '{"a":[1,]}'],
    ['a key not a string', '{"a":{b:1}}'],
    ['a closer of the other kind', '{"a":[1}}'],
    ['an object closed by ]', '{"a":{"b":1]]'],
    ['NaN', '{"a":[NaN]}'],
    ['a comment', '{"a":[1 /* c */]}'],
    ['a single-quoted string', '{"a":[\'x\']}'],
    ['truncated (the chunk ends in the value)', '{"a":[1,2'],
    ['an opener too many, then the body ends', '{"a":[[1]}'],
  ];
  for (const [what, text] of invalid) {
    const b = what.startsWith('invalid UTF-8')
      ? Uint8Array.from([...bytes('{"a":["x'), 0xff, ...bytes('"]}')])
      : bytes(text);
    const t = T.skip(b, 5, b.length, 100);
    const s = S.skip(b, 5, b.length, 100);
    const tt = T.tape(b, 0, b.length, 100);
    const ts = S.tape(b, 0, b.length, 100);
    console.log(
      `  ${what.padEnd(42)} ${JSON.stringify(text).padEnd(26)} skip today ${t} struct ${s}; item's tape today ${tt} struct ${ts}`,
    );
  }
}

/** a list body through a ListSplitter on `mod`'s lane, in 64 KiB chunks: its items' texts, or the error's name */
function splitAll(mod: WebAssembly.Module, body: Uint8Array, key: string): string {
  const sc = new ItemScanner(undefined, undefined, mod);
  const items: string[] = [];
  try {
    const s = new ListSplitter({ arrayKey: key, scanner: sc });
    for (let o = 0; o < body.length; o += 65536)
      s.push(body.slice(o, o + 65536), (e) => {
        if (e.type === 'item') items.push(Buffer.from(e.bytes).toString('latin1'));
      });
    s.end();
  } catch (e) {
    return `error ${(e as Error).name}`;
  }
  return items.join('\n');
}

/**
 * The splitter's answers with each lane on list bodies of canned pods (or rows) with one byte deleted,
 * inserted or replaced inside an item (the index test's mutations): how many a client would now get
 * that today's splitter refuses, by what the byte broke.
 */
async function mutations(runs: number): Promise<void> {
  const base = await makeBase();
  const chars = [...'{}[]",:\\ 0-.eE1tfnu\u0001\t', 'é'];
  for (const rows of [false, true]) {
    const key = rows ? 'rows' : 'items';
    const texts = Array.from({ length: 20 }, (_, i) => nth(rows ? base.rows : base.items, i, rows));
    const head = `${rows ? base.tableHead : base.listHead},"${key}":[`;
    const body = `${head}${texts.join(',')}]}`;
    const rnd = seeded(rows ? 7 : 3);
    let bothRefuse = 0;
    let bothSplit = 0;
    let bothPass = 0;
    let passes = 0;
    let other = 0;
    const passed = new Map<string, number>();
    for (let k = 0; k < runs; k++) {
      // an edit inside the items (the head is the automaton's either way)
      const p = head.length + Math.floor(rnd() * (body.length - head.length - 2));
      const op = ['del', 'ins', 'rep'][Math.floor(rnd() * 3)]!;
      const ch = chars[Math.floor(rnd() * chars.length)]!;
      const text =
        op === 'del'
          ? body.slice(0, p) + body.slice(p + 1)
          : op === 'ins'
            ? body.slice(0, p) + ch + body.slice(p)
            : body.slice(0, p) + ch + body.slice(p + 1);
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      const b = enc.encode(text);
      const t = splitAll(today, b, key);
      const s = splitAll(structMod, b, key);
      if (t.startsWith('error') && s.startsWith('error')) bothRefuse++;
      else if (t === s && valid) bothSplit++;
      else if (t === s) bothPass++;
      else if (t.startsWith('error') && !valid) {
        passes++;
        const what = `${op} ${JSON.stringify(op === 'del' ? body[p] : ch)}${op === 'rep' ? ` for ${JSON.stringify(body[p])}` : ''}`;
        passed.set(what, (passed.get(what) ?? 0) + 1);
      } else other++;
      if (valid && t.startsWith('error')) other++;
    }
    console.log(
      `${key}: ${runs} one-byte edits in 20 canned ${rows ? 'rows' : 'pods'}: both refuse ${bothRefuse}, both split alike ${bothSplit} (valid JSON) and ${bothPass} (not), today refuses and struct passes ${passes}, anything else ${other}`,
    );
    const top = [...passed.entries()].sort((x, y) => y[1] - x[1]);
    console.log(`  passed, by edit: ${top.map(([w, c]) => `${w} ${c}`).join('; ')}`);
  }
}

async function time(form: string, rounds: number, pods: number): Promise<void> {
  const base = await makeBase();
  const cpu = (f: () => void) => {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  };
  for (const rows of [false, true]) {
    let runs: Array<() => void>;
    let perUnit: (ms: number) => number;
    let unit: string;
    let sink = 0;
    if (form === 'split') {
      const texts = Array.from({ length: pods }, (_, i) => nth(rows ? base.rows : base.items, i, rows));
      const key = rows ? 'rows' : 'items';
      const body = enc.encode(`${rows ? base.tableHead : base.listHead},"${key}":[${texts.join(',')}]}`);
      const chunks: Uint8Array[] = [];
      for (let o = 0; o < body.length; o += 65536) chunks.push(body.slice(o, o + 65536));
      useNativeEquality((m, b, at) => Buffer.prototype.compare.call(m, b, at, at + m.length) === 0);
      const scanners = [
        new ItemScanner(undefined, undefined, today),
        new ItemScanner(undefined, undefined, structMod),
      ];
      const split = (sc: ItemScanner, out?: string[]) => {
        const s = new ListSplitter({ arrayKey: key, scanner: sc });
        for (const c of chunks)
          s.push(c, (e) => {
            if (e.type !== 'item') return;
            sink += e.bytes.length + (e.facts ? e.facts.mdTo : 0);
            out?.push(`${e.index} ${e.bytes.byteOffset} ${e.bytes.length} ${JSON.stringify(e.facts)}`);
          });
        s.end();
      };
      const got = scanners.map((sc) => {
        const out: string[] = [];
        split(sc, out);
        return out;
      });
      if (got[0]!.length !== pods || got[0]!.join('\n') !== got[1]!.join('\n'))
        throw new Error(`split: the lanes' items differ (${got[0]!.length}, ${got[1]!.length})`);
      const noted = got[0]!.filter((x) => !x.endsWith('undefined')).length;
      console.log(
        `split ${key}: ${pods} items, ${noted} with facts, the same bytes and facts from both lanes`,
      );
      runs = scanners.map((sc) => () => {
        for (let k = 0; k < 3; k++) split(sc);
      });
      perUnit = (ms) => ms / 3 / (body.length / 2 ** 20);
      unit = 'ms/MiB';
    } else {
      const { body, chunks } = itemChunks(base, rows, pods);
      for (const { b, items } of chunks) for (const s of items) agree(b, s, b.length, 100, 'timed item');
      runs = lanes.map((l) =>
        form === 'skip'
          ? () => {
              for (const { b, items } of chunks) for (const s of items) sink += l.skip(b, s, b.length, 100);
            }
          : () => {
              for (const { b, items } of chunks) for (const s of items) sink += l.tape(b, s, b.length, 100);
            },
      );
      perUnit = (ms) => (ms * 1e6) / body.length;
      unit = 'ns/B';
    }
    for (let w = 0; w < 5; w++) for (const f of runs) f();
    const t = pairedRounds(
      rounds,
      () => cpu(runs[0]!),
      () => cpu(runs[1]!),
    );
    const ratios = t.a.map((x, k) => x / t.b[k]!);
    console.log(
      `${form}, ${rows ? 'rows' : 'pods'}: today ${perUnit(med(t.a)).toFixed(3)} ${unit}, struct ${perUnit(med(t.b)).toFixed(3)} ${unit}, today/struct ${med(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]${sink === 0.5 ? ' ' : ''}`,
    );
  }
}

if (mode === 'check') await check(Number(a1 ?? 300));
else if (mode === 'mutate') await mutations(Number(a1 ?? 2000));
else await time(mode, Number(a1 ?? 15), Number(a2 ?? 2000));
