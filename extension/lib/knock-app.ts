// How this extension identifies itself to Knock (contract §5, the built-in public application).

export const CLIENT_ID = 'knock-extension';
export const SCOPE = 'api';
