// The extension's journey (extension-journey.ts) in Debian's Firefox ESR, driven over WebDriver BiDi.

import { describe } from 'vitest';
import { extensionJourney } from './extension-journey';
import { launchFirefox } from './support/extension-browser';

describe('the extension in Firefox, against two Knock servers', () => extensionJourney('firefox', launchFirefox));
