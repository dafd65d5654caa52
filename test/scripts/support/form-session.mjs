// A browser reduced to what Knock's sign-in form needs, for tests and scripts that talk to a real
// server over HTTP: it keeps cookies, sends Origin and the form's authenticity token.

/** @param {string} baseUrl */
export const formSession = (baseUrl) => {
  /** @type {Map<string, string>} */
  const cookies = new Map();
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  /** @param {Response} res */
  const keep = (res) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    return res;
  };
  /** @param {string} path */
  const get = async (path) => keep(await fetch(`${baseUrl}${path}`, { headers: { Cookie: cookieHeader() }, redirect: 'manual' }));
  /**
   * Signs in with the form; the response is the form's answer (303 on success).
   * @param {string} username @param {string} password
   */
  const signIn = async (username, password) => {
    const page = await (await get('/users/sign_in')).text();
    const token = /name="authenticity_token" value="([^"]+)"/.exec(page)?.[1];
    if (!token) throw new Error('no authenticity_token on the sign-in page');
    return keep(
      await fetch(`${baseUrl}/users/sign_in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: baseUrl, Cookie: cookieHeader() },
        body: new URLSearchParams({ username, password, authenticity_token: token }).toString(),
      }),
    );
  };
  return { cookies, get, signIn };
};
