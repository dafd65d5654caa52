import { afterEach } from 'vitest';
import { resetClock } from './clock';

// Run before every test file (vitest.config.ts `setupFiles`), also when the files share one
// runtime and its modules (`isolate: false`): a test that moved the Worker's clock gives it back.
afterEach(resetClock);
