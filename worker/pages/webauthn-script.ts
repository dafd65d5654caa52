/**
 * The pages' one script, served at /assets/webauthn.js (the pages' CSP allows scripts from 'self'
 * only): passkeys need `navigator.credentials` (Web Authentication §5.1.3 and §5.1.4), which no
 * form can call. A form marked `data-webauthn="create"` or `"get"` carries the server's options
 * (their JSON in `data-options`, binary fields base64url as in Web Authentication Level 3's
 * JSON forms); on submit the script asks the browser, puts the answer's JSON in the form's
 * `credential` field and sends the form. Without the script the forms do nothing else.
 */
export const WEBAUTHN_SCRIPT = `'use strict';
(() => {
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)), (c) => c.charCodeAt(0));
  const text = (buffer) => {
    let out = '';
    for (const b of new Uint8Array(buffer)) out += String.fromCharCode(b);
    return btoa(out).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  const withIds = (list) => (list || []).map((c) => ({ ...c, id: bytes(c.id) }));
  const create = async (o) => {
    const cred = await navigator.credentials.create({ publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: withIds(o.excludeCredentials) } });
    const r = cred.response;
    return { id: cred.id, rawId: text(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment || undefined, clientExtensionResults: cred.getClientExtensionResults(),
      response: { clientDataJSON: text(r.clientDataJSON), attestationObject: text(r.attestationObject), transports: r.getTransports ? r.getTransports() : [] } };
  };
  const get = async (o) => {
    const cred = await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: withIds(o.allowCredentials) } });
    const r = cred.response;
    return { id: cred.id, rawId: text(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment || undefined, clientExtensionResults: cred.getClientExtensionResults(),
      response: { clientDataJSON: text(r.clientDataJSON), authenticatorData: text(r.authenticatorData), signature: text(r.signature), userHandle: r.userHandle ? text(r.userHandle) : undefined } };
  };
  for (const form of document.querySelectorAll('form[data-webauthn]')) {
    const status = form.querySelector('[data-webauthn-status]');
    form.addEventListener('submit', async (event) => {
      if (form.credential.value) return;
      event.preventDefault();
      try {
        const options = JSON.parse(form.dataset.options);
        const answer = form.dataset.webauthn === 'create' ? await create(options) : await get(options);
        form.credential.value = JSON.stringify(answer);
        form.submit();
      } catch (e) {
        if (status) status.textContent = 'The passkey was not used: ' + (e && e.message ? e.message : e);
      }
    });
  }
})();
`;
