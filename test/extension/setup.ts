import { cleanup } from '@testing-library/preact';
import { afterEach, beforeEach } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';

beforeEach(() => {
  fakeBrowser.reset();
});

afterEach(() => {
  cleanup();
});
