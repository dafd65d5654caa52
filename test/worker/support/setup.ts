import { afterEach } from 'vitest';
import { resetClock } from './clock';
import { started } from './started';

// Run before every test file (vitest.config.ts `setupFiles`), also when the files share one
// runtime and its modules (`isolate: false`): a test that moved the Worker's clock gives it back.
afterEach(resetClock);

// The Worker started once per runtime, before the first file's hooks and tests (support/started.ts).
await started;
