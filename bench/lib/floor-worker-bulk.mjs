export { FleetRelay } from './floor-worker.mjs';

import { make } from './floor-worker.mjs';
export default make('bulk');
