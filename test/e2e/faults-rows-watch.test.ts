/**
 * Issue 11's watch rows through the fault proxy: the (runtime, row) pairs that hold. The tests themselves
 * are in test/faults/rows/watch.ts; pairs that do not hold yet go to test/faults/pending/.
 */
import { describeWatchRows } from '../faults/rows/watch.ts';

const HOLD = ['row1-rv0', 'row1-watchlist', 'row4', 'row9'];
describeWatchRows('node', HOLD);
describeWatchRows('workerd', HOLD);
