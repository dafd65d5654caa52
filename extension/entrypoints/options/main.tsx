import { render } from 'preact';
import { browser } from 'wxt/browser';
import { OptionsApp } from '../../components/OptionsApp';
import type { OptionsActions } from '../../components/popup-actions';
import { commands } from '../../lib/messaging';
import '../../components/knock.css';
import { applyTokens } from '../../components/tokens';

const actions: OptionsActions = {
  ...commands,
  requestHostPermission: (pattern) => browser.permissions.request({ origins: [pattern] }),
};

applyTokens(document);
render(<OptionsApp actions={actions} redirectUri={browser.identity.getRedirectURL()} />, document.getElementById('app')!);
