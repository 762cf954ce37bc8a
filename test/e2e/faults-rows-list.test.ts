/**
 * Issue 11's list rows through the fault proxy: the (runtime, row) pairs that hold. The tests themselves
 * are in test/faults/rows/list.ts; the pairs that do not hold yet are in
 * test/faults/pending/list-rows.test.ts.txt, with what is observed.
 */
import { describeListRows } from '../faults/rows/list.ts';

const HOLD = ['row2', 'row3-identity', 'row3-gzip', 'row3-eof-after-headers'];
describeListRows('node', HOLD);
describeListRows('workerd', HOLD);
