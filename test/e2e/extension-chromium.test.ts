// The extension's journey (extension-journey.ts) in Debian's Chromium, driven over the DevTools protocol.

import { describe } from 'vitest';
import { extensionJourney } from './extension-journey';
import { launchChromium } from './support/extension-browser';

describe('the extension in Chromium, against two Knock servers', () => extensionJourney('chromium', launchChromium));
