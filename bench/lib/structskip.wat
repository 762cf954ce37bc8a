;; bench/lib/structskip-ab.ts's prototype (not the fleet's): a structure-only $skipFrom for skip.wat.
;; structskip-ab.ts splices it into src/merge/jsonsplit/wasm/skip.wat, whose own $skipFrom is renamed
;; $skipValid: the tape's containers not looked into and the skip export come here instead.
;;
;; A container's end found in 64-byte blocks from its first byte, simdjson's way: a bit per byte for
;; quotes, backslashes, openers ({ [) and closers (} ]); quotes escaped by an odd run of backslashes
;; dropped (the run's parity carried to the next block); the in-string mask the prefix XOR of the quotes
;; (carried as all ones when a block ends inside a string); brackets outside strings counted. Only a block
;; where the depth may return to 0 (as many closers as the depth it began at) or pass the limit is walked
;; bracket by bracket. Nothing else is checked: not the tokens between brackets (numbers, literals, commas,
;; colons, keys), not an escape's letter, not control characters in strings, not which kind of bracket
;; closes which. Answers as skip's: the memory index after the closer, -1 (the bytes end first), -2 (deeper
;; than room or 130). A value that is not a container (the skip export's strings and scalars) is
;; $skipValid's, today's loop.
  (func $skipFrom (param $p i32) (param $end i32) (param $room i32) (param $d0 i32) (result i32)
    (local $d i32) (local $limit i32) (local $rem i32) (local $t i32)
    (local $v v128) (local $lv v128) (local $k20 v128) (local $k22 v128) (local $k5c v128) (local $k7b v128) (local $k7d v128)
    (local $q i64) (local $bs i64) (local $op i64) (local $cl i64)
    (local $inStr i64) (local $esc i64) (local $x i64) (local $y i64) (local $bits i64)
    (if (i32.ne (i32.or (i32.load8_u (local.get $p)) (i32.const 0x20)) (i32.const 0x7b))
      (then (return (call $skipValid (local.get $p) (local.get $end) (local.get $room) (local.get $d0)))))
    ;; today's loop refuses a depth d (from d0) > room or > 130
    (local.set $limit (i32.sub
      (select (local.get $room) (i32.const 130) (i32.lt_s (local.get $room) (i32.const 130)))
      (local.get $d0)))
    (local.set $k20 (i8x16.splat (i32.const 0x20)))
    (local.set $k22 (i8x16.splat (i32.const 0x22)))
    (local.set $k5c (i8x16.splat (i32.const 0x5c)))
    ;; { [ (0x7b 0x5b) and } ] (0x7d 0x5d), folded by | 0x20
    (local.set $k7b (i8x16.splat (i32.const 0x7b)))
    (local.set $k7d (i8x16.splat (i32.const 0x7d)))
    (loop $blk
      (local.set $v (v128.load (local.get $p)))
      (local.set $lv (v128.or (local.get $v) (local.get $k20)))
      (local.set $q (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k22)))))
      (local.set $bs (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k5c)))))
      (local.set $op (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7b)))))
      (local.set $cl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7d)))))
      (local.set $v (v128.load offset=16 (local.get $p)))
      (local.set $lv (v128.or (local.get $v) (local.get $k20)))
      (local.set $q (i64.or (local.get $q) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k22)))) (i64.const 16))))
      (local.set $bs (i64.or (local.get $bs) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k5c)))) (i64.const 16))))
      (local.set $op (i64.or (local.get $op) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7b)))) (i64.const 16))))
      (local.set $cl (i64.or (local.get $cl) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7d)))) (i64.const 16))))
      (local.set $v (v128.load offset=32 (local.get $p)))
      (local.set $lv (v128.or (local.get $v) (local.get $k20)))
      (local.set $q (i64.or (local.get $q) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k22)))) (i64.const 32))))
      (local.set $bs (i64.or (local.get $bs) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k5c)))) (i64.const 32))))
      (local.set $op (i64.or (local.get $op) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7b)))) (i64.const 32))))
      (local.set $cl (i64.or (local.get $cl) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7d)))) (i64.const 32))))
      (local.set $v (v128.load offset=48 (local.get $p)))
      (local.set $lv (v128.or (local.get $v) (local.get $k20)))
      (local.set $q (i64.or (local.get $q) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k22)))) (i64.const 48))))
      (local.set $bs (i64.or (local.get $bs) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v) (local.get $k5c)))) (i64.const 48))))
      (local.set $op (i64.or (local.get $op) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7b)))) (i64.const 48))))
      (local.set $cl (i64.or (local.get $cl) (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $lv) (local.get $k7d)))) (i64.const 48))))
      ;; quotes escaped: simdjson's find_escaped (backslash runs; an odd run escapes the byte after it)
      (if (i64.ne (i64.or (local.get $bs) (local.get $esc)) (i64.const 0)) (then
        (local.set $bs (i64.and (local.get $bs) (i64.xor (local.get $esc) (i64.const -1))))
        ;; x: the bytes that follow a backslash (or the block's first, escaped from the block before)
        (local.set $x (i64.or (i64.shl (local.get $bs) (i64.const 1)) (local.get $esc)))
        ;; y: odd-run starts; their sums with the runs carry past each run's end
        (local.set $y (i64.and (local.get $bs) (i64.and (i64.const 0xaaaaaaaaaaaaaaaa)
          (i64.xor (local.get $x) (i64.const -1)))))
        (local.set $y (i64.add (local.get $y) (local.get $bs)))
        (local.set $esc (i64.extend_i32_u (i64.lt_u (local.get $y) (local.get $bs))))
        (local.set $x (i64.and (i64.xor (i64.const 0x5555555555555555) (i64.shl (local.get $y) (i64.const 1)))
          (local.get $x)))
        (local.set $q (i64.and (local.get $q) (i64.xor (local.get $x) (i64.const -1))))))
      ;; in a string: from an opening quote up to its closing one (prefix XOR), or since the block before
      (local.set $x (i64.xor (local.get $q) (i64.shl (local.get $q) (i64.const 1))))
      (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 2))))
      (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 4))))
      (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 8))))
      (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 16))))
      (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 32))))
      (local.set $x (i64.xor (local.get $x) (local.get $inStr)))
      (local.set $inStr (i64.shr_s (local.get $x) (i64.const 63)))
      (local.set $x (i64.xor (local.get $x) (i64.const -1)))
      (local.set $op (i64.and (local.get $op) (local.get $x)))
      (local.set $cl (i64.and (local.get $cl) (local.get $x)))
      ;; the bytes past end are not the value's
      (local.set $rem (i32.sub (local.get $end) (local.get $p)))
      (if (i32.lt_u (local.get $rem) (i32.const 64)) (then
        (local.set $x (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $rem))) (i64.const 1)))
        (local.set $op (i64.and (local.get $op) (local.get $x)))
        (local.set $cl (i64.and (local.get $cl) (local.get $x)))))
      (if (i32.or
            (i32.ge_u (i32.wrap_i64 (i64.popcnt (local.get $cl))) (local.get $d))
            (i32.gt_s (i32.add (local.get $d) (i32.wrap_i64 (i64.popcnt (local.get $op)))) (local.get $limit)))
        (then
          ;; the depth may return to 0 here, or pass the limit: bracket by bracket
          (local.set $bits (i64.or (local.get $op) (local.get $cl)))
          (block $walked
            (loop $walk
              (br_if $walked (i64.eqz (local.get $bits)))
              (local.set $t (i32.wrap_i64 (i64.ctz (local.get $bits))))
              (if (i64.ne (i64.and (local.get $op) (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $t)))) (i64.const 0))
                (then
                  (local.set $d (i32.add (local.get $d) (i32.const 1)))
                  (if (i32.gt_s (local.get $d) (local.get $limit)) (then (return (i32.const -2)))))
                (else
                  (local.set $d (i32.sub (local.get $d) (i32.const 1)))
                  (if (i32.eqz (local.get $d))
                    (then (return (i32.add (i32.add (local.get $p) (local.get $t)) (i32.const 1)))))))
              (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
              (br $walk))))
        (else
          (local.set $d (i32.sub
            (i32.add (local.get $d) (i32.wrap_i64 (i64.popcnt (local.get $op))))
            (i32.wrap_i64 (i64.popcnt (local.get $cl)))))))
      (if (i32.le_u (local.get $rem) (i32.const 64)) (then (return (i32.const -1))))
      (local.set $p (i32.add (local.get $p) (i32.const 64)))
      (br $blk))
    (unreachable))
