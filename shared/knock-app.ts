/** The browser extension's OAuth client id: a public client (PKCE) built into every server. */
export const EXTENSION_CLIENT_ID = 'knock-extension';
