import { cleanup } from '@testing-library/preact';
import { afterEach, beforeEach, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';

beforeEach(() => {
  fakeBrowser.reset();
  // WXT's fake browser has no permissions API: the extension may reach every server unless a test says otherwise.
  vi.spyOn(fakeBrowser.permissions, 'contains').mockImplementation(async () => true);
});

afterEach(() => {
  cleanup();
});
