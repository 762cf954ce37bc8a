/**
 * Issue 11's list rows through the fault proxy, on both runtimes: every row holds (row10, a bodyless 4xx
 * from every cluster, since the upstream readers map it to kube's generic Status for its code). The tests
 * themselves are in test/faults/rows/list.ts; a row that stops holding moves to
 * test/faults/pending/list-rows.test.ts.txt with what is observed.
 */
import { describeListRows } from '../faults/rows/list.ts';

const HOLD = ['row2', 'row3-identity', 'row3-gzip', 'row3-eof-after-headers', 'row10'];
describeListRows('node', HOLD);
describeListRows('workerd', HOLD);
