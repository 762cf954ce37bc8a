// Writes the integrated form of bench/lib/wfacts-proto.ts's prototype (not the fleet's; docs/benchmarks.md,
// "Facts noted in wasm"): src/merge/jsonsplit/wasm/skip.wat with its `tape` also noting an item's facts into
// wfacts-proto.wat's block as it scans (the contexts per depth, the slot when a key's id is known, the range
// at its value's end), the prototype's $note and globals taken from wfacts-proto.wat. Usage:
//   node bench/lib/wfacts-scan.mjs <out.wat> [--no-tape]   (--no-tape: the tape's entries not written)
//   WFACTS_SCAN=<out.wat> node --import tsx bench/lib/wfacts-proto.ts table 21
import { readFileSync, writeFileSync } from 'node:fs';

const [out, flag] = process.argv.slice(2);
let s = readFileSync(new URL('../../src/merge/jsonsplit/wasm/skip.wat', import.meta.url), 'utf8');
const proto = readFileSync(new URL('./wfacts-proto.wat', import.meta.url), 'utf8');
const rep = (old, now) => {
  if (s.split(old).length !== 2) throw new Error(`skip.wat changed: ${old.slice(0, 60)}`);
  s = s.replace(old, () => now);
};
const g = proto.slice(proto.indexOf('  (global $eb'), proto.indexOf('  (func $inside'));
const note = proto.slice(proto.indexOf('  (func $note'), proto.indexOf('  ;; facts(tapeAt'));
rep(
  `    ;; entry 0: the value itself, looked into
`,
  `    (global.set $start (local.get $i))
    (global.set $seen (i32.const 0))
    (global.set $refs (i32.const 0))
    (i64.store offset=0 (global.get $out) (i64.load offset=13312 (global.get $T)))
    (i64.store offset=8 (global.get $out) (i64.load offset=13320 (global.get $T)))
    (i64.store offset=16 (global.get $out) (i64.load offset=13328 (global.get $T)))
    (i64.store offset=24 (global.get $out) (i64.load offset=13336 (global.get $T)))
    (i64.store offset=32 (global.get $out) (i64.load offset=13344 (global.get $T)))
    (i64.store offset=40 (global.get $out) (i64.load offset=13352 (global.get $T)))
    (i64.store offset=48 (global.get $out) (i64.load offset=13360 (global.get $T)))
    (i64.store offset=56 (global.get $out) (i64.load offset=13368 (global.get $T)))
    (i64.store offset=64 (global.get $out) (i64.load offset=13376 (global.get $T)))
    (i64.store offset=72 (global.get $out) (i64.load offset=13384 (global.get $T)))
    (i64.store offset=80 (global.get $out) (i64.load offset=13392 (global.get $T)))
    (i64.store offset=88 (global.get $out) (i64.load offset=13400 (global.get $T)))
    (i64.store offset=96 (global.get $out) (i64.load offset=13408 (global.get $T)))
    (i64.store offset=104 (global.get $out) (i64.load offset=13416 (global.get $T)))
    (i64.store offset=112 (global.get $out) (i64.load offset=13424 (global.get $T)))
    (i64.store offset=120 (global.get $out) (i64.load offset=13432 (global.get $T)))
    (i64.store offset=128 (global.get $out) (i64.load offset=13440 (global.get $T)))
    (i64.store offset=136 (global.get $out) (i64.load offset=13448 (global.get $T)))
    (i64.store offset=144 (global.get $out) (i64.load offset=13456 (global.get $T)))
    (i64.store offset=152 (global.get $out) (i64.load offset=13464 (global.get $T)))
    (i64.store offset=160 (global.get $out) (i64.load offset=13472 (global.get $T)))
    (i64.store offset=168 (global.get $out) (i64.load offset=13480 (global.get $T)))
    (i64.store offset=176 (global.get $out) (i64.load offset=13488 (global.get $T)))
    ;; entry 0: the value itself, looked into
`,
);
rep(
  `            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))`,
  `            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))
            (local.set $fs (i32.add (global.get $S) (i32.shl (local.get $d) (i32.const 2))))
            (if (i32.eq (local.get $d) (i32.const 1))
              (then (i32.store (local.get $fs) (global.get $ctx0)))
              (else (if (i32.and (i32.load8_u (i32.sub (local.get $d) (i32.const 1))) (i32.const 1))
                (then
                  (local.set $fx (i32.load offset=524 (local.get $fs)))
                  (i32.store (local.get $fs) (select (local.get $fx) (i32.const 0) (i32.gt_s (local.get $fx) (i32.const 0)))))
                (else (i32.store (local.get $fs)
                  (select (i32.const 8) (i32.const 0) (i32.eq (i32.load (i32.sub (local.get $fs) (i32.const 4))) (i32.const 7))))))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))`,
);
rep(
  `    (local $e i32) (local $id i32) (local $base i32) (local $sm i64) (local $x i64)
    (local.set $p (i32.add (local.get $i) (i32.const 4096)))`,
  `    (local $e i32) (local $id i32) (local $base i32) (local $sm i64) (local $x i64)
    (local $fs i32) (local $fx i32) (local $fc i32) (local $fa i32) (local $fb i32)
    (local.set $p (i32.add (local.get $i) (i32.const 4096)))`,
);
rep(
  `              (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (local.set $want (i32.const 1))))
            (br $value)))`,
  `              (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (local.set $fs (i32.add (global.get $S) (i32.shl (local.get $d) (i32.const 2))))
              (i32.store offset=1056 (local.get $fs) (i32.sub (local.get $p) (i32.const 4096)))
              (i32.store offset=1584 (local.get $fs) (i32.load offset=172 (global.get $out)))
              (local.set $want (i32.const 1))))
            (br $value)))`,
);
rep(
  `            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $want (i32.const 1))))`,
  `            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $fs (i32.add (global.get $S) (i32.shl (local.get $d) (i32.const 2))))
            (i32.store offset=1056 (local.get $fs) (i32.sub (local.get $p) (i32.const 4096)))
            (i32.store offset=1584 (local.get $fs) (i32.load offset=172 (global.get $out)))
            (local.set $want (i32.const 1))))`,
);
rep(
  `          (local.set $want (i32.const 0))
          (if (i32.gt_s (local.get $id) (i32.const 0))
            (then (local.set $want (i32.load8_u offset=3584 (local.get $id)))))))`,
  `          (local.set $want (i32.const 0))
          (if (i32.gt_s (local.get $id) (i32.const 0))
            (then (local.set $want (i32.load8_u offset=3584 (local.get $id)))))
          (local.set $fs (i32.add (global.get $S) (i32.shl (local.get $d) (i32.const 2))))
          (i32.store offset=528 (local.get $fs) (i32.const 0))
          (local.set $fc (i32.load (local.get $fs)))
          (if (local.get $fc) (then
            (if (i32.lt_s (local.get $id) (i32.const 0))
              (then (call $odd))
              (else
                ;; the key counted in its context's count
                (local.set $fa (i32.load offset=12800 (i32.add (global.get $T) (i32.shl (local.get $fc) (i32.const 2)))))
                (if (local.get $fa) (then
                  (local.set $fa (i32.add (global.get $out) (i32.shl (local.get $fa) (i32.const 2))))
                  (i32.store (local.get $fa) (i32.add (i32.load (local.get $fa)) (i32.const 1)))))
                (if (local.get $id) (then
                  (local.set $fa (i32.add (global.get $T)
                    (i32.shl (i32.add (i32.shl (local.get $fc) (i32.const 6)) (local.get $id)) (i32.const 2))))
                  (local.set $fx (i32.load (local.get $fa)))
                  (if (local.get $fx)
                    (then
                      (local.set $fb (i32.load offset=4096 (local.get $fa)))
                      (if (local.get $fb) (then
                        (if (i32.and (global.get $seen) (local.get $fb)) (then (call $odd)))
                        (global.set $seen (i32.or (global.get $seen) (local.get $fb)))))
                      (i32.store offset=528 (local.get $fs) (local.get $fx))
                      (i32.store offset=1056 (local.get $fs) (i32.sub (local.get $p) (i32.const 4096))))
                    (else (global.set $refs (i32.or (global.get $refs) (i32.load offset=8192 (local.get $fa))))))))))))))`,
);
rep(
  `          (i32.store offset=16 (local.get $e) (local.get $k))
          (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))))`,
  `          (i32.store offset=16 (local.get $e) (local.get $k))
          (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))
          (local.set $fs (i32.add (global.get $S) (i32.shl (local.get $d) (i32.const 2))))
          (local.set $fc (i32.load (local.get $fs)))
          (if (local.get $fc) (then
            (if (i32.and (i32.load8_u (local.get $d)) (i32.const 1))
              (then (if (local.tee $fx (i32.load offset=528 (local.get $fs))) (then
                (call $note (local.get $fc) (local.get $fx)
                  (i32.sub (i32.load offset=1056 (local.get $fs)) (local.get $i))
                  (i32.sub (i32.sub (local.get $p) (i32.const 4096)) (local.get $i))))))
              (else
                (if (i32.eq (local.get $fc) (i32.const 10)) (then
                  (local.set $fx (i32.load offset=176 (global.get $out)))
                  (local.set $fa (i32.add (global.get $out) (i32.shl (i32.add (local.get $fx) (i32.const 2112)) (i32.const 2))))
                  (i32.store (local.get $fa) (i32.sub (i32.load offset=1056 (local.get $fs)) (local.get $i)))
                  (i32.store offset=4 (local.get $fa) (i32.sub (i32.sub (local.get $p) (i32.const 4096)) (local.get $i)))
                  (i32.store offset=176 (global.get $out) (i32.add (local.get $fx) (i32.const 2)))))
                (if (i32.eq (local.get $fc) (i32.const 7)) (then
                  (if (i32.gt_s (i32.sub (i32.load offset=172 (global.get $out)) (i32.load offset=1584 (local.get $fs))) (i32.const 2))
                    (then (call $odd)))))))))))`,
);
rep(
  `          (i32.store (local.get $at) (local.get $k))
          (return (i32.sub (local.get $p) (i32.const 4096)))))`,
  `          (i32.store (local.get $at) (local.get $k))
          (i32.store offset=164 (global.get $out) (global.get $refs))
          (i32.store offset=168 (global.get $out) (global.get $seen))
          (return (i32.sub (local.get $p) (i32.const 4096)))))`,
);
rep(
  `  (memory (export "memory") 2)
`,
  `  (memory (export "memory") 2)
` +
    g +
    `  (global $seen (mut i32) (i32.const 0))
  (global $refs (mut i32) (i32.const 0))
  (global $ctx0 (mut i32) (i32.const 0))
  ;; per depth at S: the context (+0), the pending slot (+528), its value's start (+1056), owner names before (+1584)
  (global $S (mut i32) (i32.const 0))
  (func (export "setup") (param $T i32) (param $out i32) (param $ctx i32)
    (global.set $T (local.get $T)) (global.set $out (local.get $out)) (global.set $ctx0 (local.get $ctx))
    (global.set $S (i32.add (local.get $T) (i32.const 13568))))
` +
    note,
);
if (flag === '--no-tape') {
  const at = s.indexOf('(func (export "tape")');
  // the entries' own stores dropped (not the per-depth ones, not the count)
  s =
    s.slice(0, at) +
    s.slice(at).replace(/\n\s*\(i32\.store (offset=(4|8|12|16) )?\(local\.get \$e\) [^\n]*/g, '');
}
writeFileSync(out, s);
