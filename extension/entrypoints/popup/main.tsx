import { render } from 'preact';
import { browser } from 'wxt/browser';
import type { PopupActions } from '../../components/popup-actions';
import { PopupApp } from '../../components/PopupApp';
import { sendMessage } from '../../lib/messaging';
import '../../components/knock.css';

const actions: PopupActions = {
  refreshInbox: () => sendMessage('refreshInbox'),
  approve: (request) => sendMessage('approve', request),
  deny: (request) => sendMessage('deny', request),
  requestAccess: (target) => sendMessage('requestAccess', target),
  signIn: () => sendMessage('signIn'),
  openOptions: () => browser.runtime.openOptionsPage(),
};

render(<PopupApp actions={actions} />, document.getElementById('app')!);
