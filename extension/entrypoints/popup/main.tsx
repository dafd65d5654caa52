import { render } from 'preact';
import { browser } from 'wxt/browser';
import type { PopupActions } from '../../components/popup-actions';
import { PopupApp } from '../../components/PopupApp';
import { commands } from '../../lib/messaging';
import '../../components/knock.css';
import { applyTokens } from '../../components/tokens';

const actions: PopupActions = { ...commands, openOptions: () => browser.runtime.openOptionsPage() };

applyTokens(document);
render(<PopupApp actions={actions} />, document.getElementById('app')!);
