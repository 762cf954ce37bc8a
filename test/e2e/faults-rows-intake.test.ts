/**
 * Issue 11's intake rows (bodies, paths, JWT, depth) through the fault proxy, which records that a refused
 * request reached no cluster: the (runtime, row) pairs that hold. The tests themselves are in
 * test/faults/rows/intake.ts; the pairs that do not hold yet are in
 * test/faults/pending/intake-rows.test.ts.txt, with what is observed.
 */
import { describeIntakeRows } from '../faults/rows/intake.ts';

describeIntakeRows('node', ['row5-never-ends', 'row5-large', 'row6-dots', 'row6-slash', 'row7', 'row8']);
describeIntakeRows('workerd', ['row5-never-ends', 'row5-large', 'row6-slash', 'row7', 'row8']);
