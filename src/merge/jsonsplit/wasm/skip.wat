;; The item scanner's fast lane (../skip.ts: skipValue and its plain, strRest, scalar, key) in WebAssembly
;; with 128-bit SIMD: the same grammar (RFC 8259, UTF-8 not checked), the same answers (end index,
;; -1 SCAN_MORE, -2 SCAN_REFUSED), the same depth limits. The JavaScript one stays the oracle (skip-wasm.test.ts).
;; Assembled by scripts/build-wasm.mjs into skip.wasm (committed; a test checks they agree).
;;
;; Memory: bytes [0, 256) are the container-kind stack (1: object, 0: array, one byte per depth); [256,
;; 4096) the table of keys the item scanner knows ($keyId, written once by lane.ts); the chunk is copied
;; once at DATA (4096) by its JavaScript side (lane.ts), so indices here are chunk indices + 4096. Vector
;; loads pass `end` by 63 bytes at most ($stops64; lane.ts keeps the tape's room after the copy), and
;; what they read there is never taken for the value's.
(module
  (memory (export "memory") 2)

  ;; whitespace from p (RFC 8259: space, \n, \r, \t): the first byte that is not, or end
  (func $ws (param $p i32) (param $end i32) (result i32)
    (local $v v128) (local $m i32) (local $c i32)
    (block $tail
      (loop $vec
        (br_if $tail (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        ;; a bit per byte that is whitespace; inverted, its lowest set bit is the first that is not
        (local.set $m (i32.xor (i32.const 0xffff) (i8x16.bitmask
          (v128.or
            (v128.or (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x20)))
                     (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x0a))))
            (v128.or (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x0d)))
                     (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x09))))))))
        (if (local.get $m) (then (return (i32.add (local.get $p) (i32.ctz (local.get $m))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $vec)))
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $done (i32.and
          (i32.and (i32.ne (local.get $c) (i32.const 0x20)) (i32.ne (local.get $c) (i32.const 0x0a)))
          (i32.and (i32.ne (local.get $c) (i32.const 0x0d)) (i32.ne (local.get $c) (i32.const 0x09)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $byte)))
    (local.get $p))

  ;; the plain bytes of a string from p: the first quote, backslash or control character, or end.
  ;; Most of an item's bytes are strings' (2,700 of a canned pod's 3,100): 16 a turn
  (func $plain (param $p i32) (param $end i32) (result i32)
    (local $v v128) (local $m i32) (local $c i32)
    (block $tail
      (loop $vec
        (br_if $tail (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $m (i8x16.bitmask
          (v128.or
            (v128.or (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                     (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
            ;; < 0x20: no top three bits (two instructions; an unsigned compare is four on x64)
            (i8x16.eq (v128.and (local.get $v) (i8x16.splat (i32.const 0xe0))) (v128.const i64x2 0 0)))))
        (if (local.get $m) (then (return (i32.add (local.get $p) (i32.ctz (local.get $m))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $vec)))
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $done (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
                             (i32.lt_u (local.get $c) (i32.const 0x20))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $byte)))
    (local.get $p))

  (func $isHex (param $c i32) (result i32)
    (i32.or
      (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
      ;; A-F and a-f at once: 0x20 folds lower case onto upper
      (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  ;; the rest of a string from p, where its plain part stopped: the index after its closing quote
  (func $strRest (param $p i32) (param $end i32) (result i32)
    (local $c i32) (local $e i32)
    (loop $go
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $p) (i32.const 1)))))
      (if (i32.ne (local.get $c) (i32.const 0x5c)) (then
        (if (i32.lt_u (local.get $c) (i32.const 0x20)) (then (return (i32.const -2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $go)))
      ;; an escape
      (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (then (return (i32.const -1))))
      (local.set $e (i32.load8_u offset=1 (local.get $p)))
      (if (i32.eq (local.get $e) (i32.const 0x75))
        (then
          ;; \uXXXX: all four digits must be in before any is judged (as the JavaScript lane)
          (if (i32.ge_u (i32.add (local.get $p) (i32.const 5)) (local.get $end)) (then (return (i32.const -1))))
          (if (i32.eqz (i32.and
                (i32.and (call $isHex (i32.load8_u offset=2 (local.get $p))) (call $isHex (i32.load8_u offset=3 (local.get $p))))
                (i32.and (call $isHex (i32.load8_u offset=4 (local.get $p))) (call $isHex (i32.load8_u offset=5 (local.get $p))))))
            (then (return (i32.const -2))))
          (local.set $p (i32.add (local.get $p) (i32.const 6))))
        (else
          ;; " \ / b f n r t
          (if (i32.eqz (i32.or
                (i32.or (i32.or (i32.eq (local.get $e) (i32.const 0x22)) (i32.eq (local.get $e) (i32.const 0x5c)))
                        (i32.or (i32.eq (local.get $e) (i32.const 0x2f)) (i32.eq (local.get $e) (i32.const 0x62))))
                (i32.or (i32.or (i32.eq (local.get $e) (i32.const 0x66)) (i32.eq (local.get $e) (i32.const 0x6e)))
                        (i32.or (i32.eq (local.get $e) (i32.const 0x72)) (i32.eq (local.get $e) (i32.const 0x74))))))
            (then (return (i32.const -2))))
          (local.set $p (i32.add (local.get $p) (i32.const 2)))))
      ;; after an escape the plain bytes go 16 a turn again
      (local.set $p (call $plain (local.get $p) (local.get $end)))
      (br $go))
    (unreachable))

  ;; decimal digits from p: where they end; -1 at end (more may follow), -2 when there are none
  (func $digits (param $p i32) (param $end i32) (result i32)
    (local $from i32)
    (local.set $from (local.get $p))
    (block $done
      (loop $d
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (br_if $done (i32.ge_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)) (i32.const 10)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $d)))
    (if (i32.eq (local.get $p) (local.get $end)) (then (return (i32.const -1))))
    (if (i32.eq (local.get $p) (local.get $from)) (then (return (i32.const -2))))
    (local.get $p))

  ;; a number or a literal at p (p < end): where it ends (what follows is the caller's to check)
  (func $scalar (param $p i32) (param $end i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0x74)) (i32.eq (local.get $c) (i32.const 0x6e))) (then
      (if (i32.ge_u (i32.add (local.get $p) (i32.const 3)) (local.get $end)) (then (return (i32.const -1))))
      ;; the four bytes at once, little-endian: "true" 0x65757274, "null" 0x6c6c756e
      (if (i32.ne (i32.load align=1 (local.get $p))
                  (select (i32.const 0x65757274) (i32.const 0x6c6c756e) (i32.eq (local.get $c) (i32.const 0x74))))
        (then (return (i32.const -2))))
      (return (i32.add (local.get $p) (i32.const 4)))))
    (if (i32.eq (local.get $c) (i32.const 0x66)) (then
      (if (i32.ge_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)) (then (return (i32.const -1))))
      ;; "alse" after the f
      (if (i32.ne (i32.load offset=1 align=1 (local.get $p)) (i32.const 0x65736c61)) (then (return (i32.const -2))))
      (return (i32.add (local.get $p) (i32.const 5)))))
    (if (i32.eq (local.get $c) (i32.const 0x2d)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $p (i32.add (local.get $p) (i32.const 1))))
      (else
        (if (i32.ge_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9)) (then (return (i32.const -2))))
        (local.set $p (call $digits (local.get $p) (local.get $end)))
        (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))))
    (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2e)) (then
      (local.set $p (call $digits (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
      (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))))
    (if (i32.eq (i32.or (i32.load8_u (local.get $p)) (i32.const 0x20)) (i32.const 0x65)) (then
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
      (local.set $p (call $digits (local.get $p) (local.get $end)))))
    (local.get $p))

;; skipValue(i, n, room) of ../skip.ts over the chunk copied at DATA: the value whose first byte is at
  ;; i (not whitespace, i < n), nested at most room deep (and 130): its end, -1 or -2.
  (func (export "skip") (param $i i32) (param $n i32) (param $room i32) (result i32)
    (local $p i32)
    (local.set $p (call $skipFrom (i32.add (local.get $i) (i32.const 4096)) (i32.add (local.get $n) (i32.const 4096))
      (local.get $room) (i32.const 0)))
    (select (local.get $p) (i32.sub (local.get $p) (i32.const 4096)) (i32.lt_s (local.get $p) (i32.const 0))))

  ;; skip's scan from memory index p (not the chunk's) of a value nested in d0 containers (the tape's, whose
  ;; kinds it leaves as they are): the memory index of its end, -1 or -2. One function, the strings' scan
  ;; written into it: engines do not inline calls between wasm functions (V8 does with a flag only, and
  ;; the canned pods then skip 1.6x faster), and keys and strings are most tokens.
  (func $skipFrom (param $p i32) (param $end i32) (param $room i32) (param $d0 i32) (result i32)
    (local $d i32) (local $c i32) (local $key i32) (local $base i32) (local $sm i64) (local $x i64)
    (local.set $d (local.get $d0))
    ;; p: a value begins, or a key when $key is set (p < end either way)
    (loop $value
      (block $after
        (block $string
          (local.set $c (i32.load8_u (local.get $p)))
          (br_if $string (i32.eq (local.get $c) (i32.const 0x22)))
          (if (local.get $key) (then (return (i32.const -2))))
          (if (i32.eq (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x7b)) (then
            ;; { or [ (0x5b | 0x20 is 0x7b)
            (local.set $d (i32.add (local.get $d) (i32.const 1)))
            (if (i32.or (i32.gt_s (local.get $d) (local.get $room)) (i32.gt_s (local.get $d) (i32.const 130)))
              (then (return (i32.const -2))))
            (i32.store8 (local.get $d) (i32.eq (local.get $c) (i32.const 0x7b)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
              (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
            (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
            (if (i32.eq (i32.load8_u (local.get $p)) (i32.add (local.get $c) (i32.const 2))) (then
              ;; {} or [] (the closers are the openers + 2)
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (local.set $d (i32.sub (local.get $d) (i32.const 1)))
              (br $after)))
            (local.set $key (i32.eq (local.get $c) (i32.const 0x7b)))
            (br $value)))
          (local.set $p (call $scalar (local.get $p) (local.get $end)))
          (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))
          (br $after))
        ;; a string (a key or a value) whose quote is at p; its stops from the mask of the 64 bytes from
        ;; $base, as the tape's strings ($stops64)
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (block $stop
          (loop $blk
            (if (i32.lt_u (i32.sub (local.get $p) (local.get $base)) (i32.const 64)) (then
              (local.set $x (i64.shr_u (local.get $sm) (i64.extend_i32_u (i32.sub (local.get $p) (local.get $base)))))
              (if (i64.ne (local.get $x) (i64.const 0)) (then
                (local.set $p (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $x)))))
                (br $stop)))
              (local.set $p (i32.add (local.get $base) (i32.const 64)))))
            (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $base (local.get $p))
            (local.set $sm (call $stops64 (local.get $p)))
            (br $blk)))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x22))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1))))
          (else
            (local.set $p (call $strRest (local.get $p) (local.get $end)))
            (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))))
        (br_if $after (i32.eqz (local.get $key)))
        ;; a key: the colon, and its value
        (local.set $key (i32.const 0))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x3a)) (then (return (i32.const -2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (br $value))
      ;; after a value: its container goes on or closes
      (loop $close
        (if (i32.eq (local.get $d) (local.get $d0)) (then (return (local.get $p))))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eq (local.get $c) (i32.const 0x2c)) (then
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
            (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
          (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
          ;; in an object a key comes next
          (local.set $key (i32.load8_u (local.get $d)))
          (br $value)))
        ;; } closes an object, ] an array
        (if (i32.ne (local.get $c) (select (i32.const 0x7d) (i32.const 0x5d) (i32.load8_u (local.get $d))))
          (then (return (i32.const -2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $d (i32.sub (local.get $d) (i32.const 1)))
        (br $close)))
    (unreachable))

;; the id of the key of len bytes at q in the table lane.ts wrote (../facts.ts's keys): 0 when it is none
  ;; of them. Most keys of the objects the tape looks into are none, so one candidate, by a hash of its
  ;; length and first four bytes: at 3840 + h the record that hashes there + 1 (0: none; lane.ts picks the
  ;; multiplier at 3632 so that no two keys share h); record r (its id r + 1) at 512 + 64 r, the key
  ;; zero-padded, its length in its last byte. Compared 8 bytes a turn: a key ends before the chunk's end
  ;; and the tape lies after it, so reading up to 7 bytes past it stays in memory.
  (func $keyId (param $q i32) (param $len i32) (result i32)
    (local $r i32) (local $j i32) (local $rem i32) (local $x i64) (local $w i32)
    (if (i32.gt_u (local.get $len) (i32.const 63)) (then (return (i32.const 0))))
    (local.set $w (i32.load align=1 (local.get $q)))
    (if (i32.lt_u (local.get $len) (i32.const 4)) (then
      (local.set $w (i32.and (local.get $w)
        (i32.sub (i32.shl (i32.const 1) (i32.shl (local.get $len) (i32.const 3))) (i32.const 1))))))
    (local.set $r (i32.load8_u offset=3840 (i32.shr_u
      (i32.mul (i32.xor (local.get $w) (i32.mul (local.get $len) (i32.const 0x9e3779b1))) (i32.load (i32.const 3632)))
      (i32.const 24))))
    (if (i32.eqz (local.get $r)) (then (return (i32.const 0))))
    (local.set $r (i32.shl (i32.sub (local.get $r) (i32.const 1)) (i32.const 6)))
    (if (i32.ne (i32.load8_u offset=575 (local.get $r)) (local.get $len)) (then (return (i32.const 0))))
    (loop $word
      (local.set $x (i64.xor
        (i64.load align=1 (i32.add (local.get $q) (local.get $j)))
        (i64.load offset=512 (i32.add (local.get $r) (local.get $j)))))
      (local.set $rem (i32.sub (local.get $len) (local.get $j)))
      (if (i32.lt_u (local.get $rem) (i32.const 8)) (then
        ;; the last turn: the key's bytes only
        (local.set $x (i64.and (local.get $x)
          (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.shl (local.get $rem) (i32.const 3)))) (i64.const 1))))))
      (if (i64.ne (local.get $x) (i64.const 0)) (then (return (i32.const 0))))
      (local.set $j (i32.add (local.get $j) (i32.const 8)))
      (br_if $word (i32.lt_u (local.get $j) (local.get $len))))
    (i32.add (i32.shr_u (local.get $r) (i32.const 6)) (i32.const 1)))

;; the string stops (quote, backslash, control character) among the 64 bytes from p, a bit each (bit 0: p).
  ;; Reads up to 63 bytes past the chunk's end: the tape's room lies after it (lane.ts), and bits past the
  ;; end are the caller's to ignore.
  (func $stops64 (param $p i32) (result i64)
    (local $v v128) (local $q v128) (local $bs v128) (local $hi v128) (local $m i32) (local $r i64)
    (local.set $q (i8x16.splat (i32.const 0x22)))
    (local.set $bs (i8x16.splat (i32.const 0x5c)))
    (local.set $hi (i8x16.splat (i32.const 0xe0)))
    (local.set $v (v128.load (local.get $p)))
    (local.set $m (i8x16.bitmask (v128.or
      (v128.or (i8x16.eq (local.get $v) (local.get $q)) (i8x16.eq (local.get $v) (local.get $bs)))
      (i8x16.eq (v128.and (local.get $v) (local.get $hi)) (v128.const i64x2 0 0)))))
    (local.set $r (i64.extend_i32_u (local.get $m)))
    (local.set $v (v128.load offset=16 (local.get $p)))
    (local.set $m (i8x16.bitmask (v128.or
      (v128.or (i8x16.eq (local.get $v) (local.get $q)) (i8x16.eq (local.get $v) (local.get $bs)))
      (i8x16.eq (v128.and (local.get $v) (local.get $hi)) (v128.const i64x2 0 0)))))
    (local.set $r (i64.or (local.get $r) (i64.shl (i64.extend_i32_u (local.get $m)) (i64.const 16))))
    (local.set $v (v128.load offset=32 (local.get $p)))
    (local.set $m (i8x16.bitmask (v128.or
      (v128.or (i8x16.eq (local.get $v) (local.get $q)) (i8x16.eq (local.get $v) (local.get $bs)))
      (i8x16.eq (v128.and (local.get $v) (local.get $hi)) (v128.const i64x2 0 0)))))
    (local.set $r (i64.or (local.get $r) (i64.shl (i64.extend_i32_u (local.get $m)) (i64.const 32))))
    (local.set $v (v128.load offset=48 (local.get $p)))
    (local.set $m (i8x16.bitmask (v128.or
      (v128.or (i8x16.eq (local.get $v) (local.get $q)) (i8x16.eq (local.get $v) (local.get $bs)))
      (i8x16.eq (v128.and (local.get $v) (local.get $hi)) (v128.const i64x2 0 0)))))
    (i64.or (local.get $r) (i64.shl (i64.extend_i32_u (local.get $m)) (i64.const 48))))

  ;; tape(i, n, room, at, cap): skip's scan of the value at i (the same answer: its end, -1 or -2), that
  ;; also writes a tape at `at` of where the members of the containers the item scanner looks into lie, so
  ;; ../tape.ts notes an item's facts without reading its bytes again; -3: more than `cap` entries (the
  ;; JavaScript scanner takes the item). A container is looked into when it is the value itself, an element
  ;; of an array looked into, or the value of a key whose byte at 3584 + its id is set (a key some context
  ;; looks into) in an object looked into: a superset of what the facts need. At `at`: the entry count;
  ;; at + 4 + 4d: the entry of the member being read at depth d (-1: none); from at + 1024, entries of
  ;; five i32 in document order: key start (-1: an array element, the value itself), key id ($keyId; -1:
  ;; the key has escapes), value start, value end, and the entry after the value's own entries (its
  ;; members', when looked into). Indices are the chunk's.
  ;; Container kinds per depth as in skip, bit 2 set when looked into (depth 0: the value itself). A
  ;; container not looked into (a pod's containers, conditions: most of its bytes) is $skipFrom's: no
  ;; entries, no per-member checks of what is looked into (tape-ab.ts: pods 1.17x).
  (func (export "tape") (param $i i32) (param $n i32) (param $room i32) (param $at i32) (param $cap i32) (result i32)
    (local $p i32) (local $end i32) (local $d i32) (local $c i32) (local $key i32)
    (local $k i32) (local $eb i32) (local $cb i32) (local $want i32) (local $kf i32) (local $ke i32) (local $esc i32)
    (local $e i32) (local $id i32) (local $base i32) (local $sm i64) (local $x i64)
    (local.set $p (i32.add (local.get $i) (i32.const 4096)))
    (local.set $end (i32.add (local.get $n) (i32.const 4096)))
    (local.set $cb (i32.add (local.get $at) (i32.const 4)))
    (local.set $eb (i32.add (local.get $at) (i32.const 1024)))
    ;; entry 0: the value itself, looked into
    (i32.store8 (i32.const 0) (i32.const 2))
    (i32.store (local.get $eb) (i32.const -1))
    (i32.store offset=4 (local.get $eb) (i32.const 0))
    (i32.store offset=8 (local.get $eb) (local.get $i))
    (i32.store (local.get $cb) (i32.const 0))
    (local.set $k (i32.const 1))
    (local.set $want (i32.const 1))
    (loop $value
      (block $after
        (block $string
          (local.set $c (i32.load8_u (local.get $p)))
          (br_if $string (i32.eq (local.get $c) (i32.const 0x22)))
          (if (local.get $key) (then (return (i32.const -2))))
          (if (i32.eq (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x7b)) (then
            ;; one not looked into (most of an item's bytes): skip's loop, which writes no entries
            (if (i32.eqz (i32.and (local.get $want) (i32.shr_u (i32.load8_u (local.get $d)) (i32.const 1)))) (then
              (local.set $p (call $skipFrom (local.get $p) (local.get $end) (local.get $room) (local.get $d)))
              (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))
              (br $after)))
            (local.set $d (i32.add (local.get $d) (i32.const 1)))
            (if (i32.or (i32.gt_s (local.get $d) (local.get $room)) (i32.gt_s (local.get $d) (i32.const 130)))
              (then (return (i32.const -2))))
            ;; looked into: its parent is and wants it
            (i32.store8 (local.get $d) (i32.or (i32.eq (local.get $c) (i32.const 0x7b))
              (select (i32.const 2) (i32.const 0)
                (i32.and (local.get $want) (i32.shr_u (i32.load8_u (i32.sub (local.get $d) (i32.const 1))) (i32.const 1))))))
            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
              (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
            (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
            (if (i32.eq (i32.load8_u (local.get $p)) (i32.add (local.get $c) (i32.const 2))) (then
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (local.set $d (i32.sub (local.get $d) (i32.const 1)))
              (br $after)))
            (local.set $key (i32.eq (local.get $c) (i32.const 0x7b)))
            (if (i32.eq (i32.load8_u (local.get $d)) (i32.const 2)) (then
              ;; the first element of an array looked into
              (if (i32.ge_u (local.get $k) (local.get $cap)) (then (return (i32.const -3))))
              (local.set $e (i32.add (local.get $eb) (i32.mul (local.get $k) (i32.const 20))))
              (i32.store (local.get $e) (i32.const -1))
              (i32.store offset=4 (local.get $e) (i32.const 0))
              (i32.store offset=8 (local.get $e) (i32.sub (local.get $p) (i32.const 4096)))
              (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (local.set $want (i32.const 1))))
            (br $value)))
          (local.set $p (call $scalar (local.get $p) (local.get $end)))
          (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p))))
          (br $after))
        ;; a string (a key or a value) whose quote is at p
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $kf (local.get $p))
        ;; its stops from the 64-byte block's mask ($sm: the bytes from $base), one found in the block
        ;; without a branch on the string's length; a new block from p when p has left it
        (block $stop
          (loop $blk
            (if (i32.lt_u (i32.sub (local.get $p) (local.get $base)) (i32.const 64)) (then
              (local.set $x (i64.shr_u (local.get $sm) (i64.extend_i32_u (i32.sub (local.get $p) (local.get $base)))))
              (if (i64.ne (local.get $x) (i64.const 0)) (then
                (local.set $p (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $x)))))
                (br $stop)))
              (local.set $p (i32.add (local.get $base) (i32.const 64)))))
            (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $base (local.get $p))
            (local.set $sm (call $stops64 (local.get $p)))
            (br $blk)))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (local.set $esc (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x22)))
        (if (local.get $esc)
          (then
            (local.set $p (call $strRest (local.get $p) (local.get $end)))
            (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (local.get $p)))))
          (else (local.set $p (i32.add (local.get $p) (i32.const 1)))))
        (br_if $after (i32.eqz (local.get $key)))
        ;; a key: the colon, and its value
        (local.set $key (i32.const 0))
        (local.set $ke (i32.sub (local.get $p) (i32.const 1)))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x3a)) (then (return (i32.const -2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (if (i32.and (i32.load8_u (local.get $d)) (i32.const 2)) (then
          ;; a member of an object looked into
          (if (i32.ge_u (local.get $k) (local.get $cap)) (then (return (i32.const -3))))
          (local.set $e (i32.add (local.get $eb) (i32.mul (local.get $k) (i32.const 20))))
          (local.set $id (select (i32.const -1) (call $keyId (local.get $kf) (i32.sub (local.get $ke) (local.get $kf)))
            (local.get $esc)))
          (i32.store (local.get $e) (i32.sub (local.get $kf) (i32.const 4096)))
          (i32.store offset=4 (local.get $e) (local.get $id))
          (i32.store offset=8 (local.get $e) (i32.sub (local.get $p) (i32.const 4096)))
          (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (local.set $want (i32.const 0))
          (if (i32.gt_s (local.get $id) (i32.const 0))
            (then (local.set $want (i32.load8_u offset=3584 (local.get $id)))))))
        (br $value))
      ;; after a value: its entry ends here; its container goes on or closes
      (loop $close
        (local.set $e (i32.load (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2)))))
        (if (i32.ge_s (local.get $e) (i32.const 0)) (then
          (local.set $e (i32.add (local.get $eb) (i32.mul (local.get $e) (i32.const 20))))
          (i32.store offset=12 (local.get $e) (i32.sub (local.get $p) (i32.const 4096)))
          (i32.store offset=16 (local.get $e) (local.get $k))
          (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (i32.const -1))))
        (if (i32.eqz (local.get $d)) (then
          (i32.store (local.get $at) (local.get $k))
          (return (i32.sub (local.get $p) (i32.const 4096)))))
        (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
          (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
        (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eq (local.get $c) (i32.const 0x2c)) (then
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (if (i32.and (i32.lt_u (local.get $p) (local.get $end)) (i32.le_u (i32.load8_u (local.get $p)) (i32.const 0x20)))
            (then (local.set $p (call $ws (local.get $p) (local.get $end)))))
          (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
          (local.set $key (i32.and (i32.load8_u (local.get $d)) (i32.const 1)))
          (if (i32.eq (i32.load8_u (local.get $d)) (i32.const 2)) (then
            ;; the next element of an array looked into
            (if (i32.ge_u (local.get $k) (local.get $cap)) (then (return (i32.const -3))))
            (local.set $e (i32.add (local.get $eb) (i32.mul (local.get $k) (i32.const 20))))
            (i32.store (local.get $e) (i32.const -1))
            (i32.store offset=4 (local.get $e) (i32.const 0))
            (i32.store offset=8 (local.get $e) (i32.sub (local.get $p) (i32.const 4096)))
            (i32.store (i32.add (local.get $cb) (i32.shl (local.get $d) (i32.const 2))) (local.get $k))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $want (i32.const 1))))
          (br $value)))
        (if (i32.ne (local.get $c) (select (i32.const 0x7d) (i32.const 0x5d) (i32.and (i32.load8_u (local.get $d)) (i32.const 1))))
          (then (return (i32.const -2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $d (i32.sub (local.get $d) (i32.const 1)))
        (br $close)))
    (unreachable))
)
