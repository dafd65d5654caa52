import { render } from 'preact';
import { browser } from 'wxt/browser';
import { OptionsApp } from '../../components/OptionsApp';
import type { OptionsActions } from '../../components/popup-actions';
import { sendMessage } from '../../lib/messaging';
import '../../components/knock.css';

const actions: OptionsActions = {
  signIn: () => sendMessage('signIn'),
  signOut: () => sendMessage('signOut'),
  requestHostPermission: (pattern) => browser.permissions.request({ origins: [pattern] }),
};

render(<OptionsApp actions={actions} redirectUri={browser.identity.getRedirectURL()} />, document.getElementById('app')!);
