/** The version of Knock: the server's `GET /api/v4/version` and the extension's manifest. */
export const KNOCK_VERSION = '0.1.0';
