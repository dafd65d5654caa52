import { render } from 'preact';
import { browser } from 'wxt/browser';
import { OptionsApp } from '../../components/OptionsApp';
import type { OptionsActions } from '../../components/popup-actions';
import { commands } from '../../lib/messaging';
import '../../components/knock.css';

const actions: OptionsActions = {
  ...commands,
  requestHostPermission: (pattern) => browser.permissions.request({ origins: [pattern] }),
};

render(<OptionsApp actions={actions} redirectUri={browser.identity.getRedirectURL()} />, document.getElementById('app')!);
