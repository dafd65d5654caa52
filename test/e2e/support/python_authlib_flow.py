"""Debian's python3-authlib, unmodified, as a relying party of Knock.

authlib's OAuth 2.0 client does the code flow with PKCE and a nonce against the endpoints Knock's
discovery document names, then validates the id_token itself (authlib.jose with the JWKS, and
authlib.oidc.core's CodeIDToken: iss, aud, exp, iat, nonce, at_hash), reads userinfo and refreshes.
The user's part is Knock's own sign-in and consent pages, submitted with requests as a browser
would. Run by test/e2e/python-authlib.test.ts with KNOCK_URL, CLIENT_ID, CLIENT_SECRET,
REDIRECT_URI, KNOCK_USERNAME and KNOCK_PASSWORD set; prints one JSON object of what it saw.
"""

import base64
import html
import json
import os
import re
from urllib.parse import parse_qs, urljoin, urlparse

import authlib
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.jose.errors import JoseError
from authlib.oidc.core import CodeIDToken

URL = os.environ["KNOCK_URL"]
CLIENT_ID = os.environ["CLIENT_ID"]
CLIENT_SECRET = os.environ["CLIENT_SECRET"]
REDIRECT_URI = os.environ["REDIRECT_URI"]
seen = {"authlib": authlib.__version__}

metadata = requests.get(f"{URL}/.well-known/openid-configuration", timeout=30).json()
seen["issuer"] = metadata["issuer"]


def validated(id_token, access_token, nonce=None):
    """The id_token's claims as authlib validates them, against the keys Knock publishes now."""
    keys = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"], timeout=30).json())
    claims = jwt.decode(
        id_token,
        keys,
        claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": metadata["issuer"]}},
        claims_params={"nonce": nonce, "client_id": CLIENT_ID, "access_token": access_token},
    )
    claims.validate(leeway=30)
    return dict(claims)


def form_token(page):
    return html.unescape(re.search(r'name="authenticity_token" value="([^"]+)"', page).group(1))


def user_authorizes(authorization_url):
    """The browser: Knock's sign-in page, then its consent page; the URL it is sent back to."""
    browser = requests.Session()
    origin = {"Origin": URL}
    answer = browser.get(authorization_url, allow_redirects=False, timeout=30)
    sign_in = urljoin(URL, answer.headers["Location"])
    page = browser.get(sign_in, timeout=30).text
    return_to = parse_qs(urlparse(sign_in).query)["return_to"][0]
    answer = browser.post(
        f"{URL}/users/sign_in",
        data={"username": os.environ["KNOCK_USERNAME"], "password": os.environ["KNOCK_PASSWORD"], "authenticity_token": form_token(page), "return_to": return_to},
        headers=origin,
        allow_redirects=False,
        timeout=30,
    )
    consent = browser.get(urljoin(URL, answer.headers["Location"]), allow_redirects=False, timeout=30).text
    form = re.search(r'<form method="post" action="([^"]+)">([\s\S]*?)</form>', consent)
    fields = {name: html.unescape(value) for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(2))}
    fields["decision"] = "authorize"
    answer = browser.post(urljoin(URL, form.group(1)), data=fields, headers=origin, allow_redirects=False, timeout=30)
    return answer.headers["Location"]


session = OAuth2Session(
    CLIENT_ID,
    CLIENT_SECRET,
    scope="openid profile email",
    redirect_uri=REDIRECT_URI,
    code_challenge_method="S256",
    token_endpoint_auth_method="client_secret_basic",
)
verifier = generate_token(48)
nonce = generate_token(20)
authorization_url, state = session.create_authorization_url(metadata["authorization_endpoint"], nonce=nonce, code_verifier=verifier)
callback = user_authorizes(authorization_url)
seen["callback"] = {k: v[0] for k, v in parse_qs(urlparse(callback).query).items() if k in ("state", "iss")}
seen["state_matches"] = seen["callback"].get("state") == state

# authlib checks the state of the callback and sends the code with the PKCE verifier.
token = session.fetch_token(metadata["token_endpoint"], authorization_response=callback, code_verifier=verifier)
claims = validated(token["id_token"], token["access_token"], nonce)
seen["id_token"] = {k: claims.get(k) for k in ("sub", "nonce", "preferred_username", "email", "email_verified", "groups_direct")}
seen["userinfo"] = session.get(metadata["userinfo_endpoint"], timeout=30).json()

# Another user's id in the payload, the signature kept: authlib's own signature check refuses it.
header, payload, signature = token["id_token"].split(".")
forged = dict(claims, sub="1")
payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).decode().rstrip("=")
tampered = ".".join([header, payload, signature])
try:
    validated(tampered, token["access_token"], nonce)
    seen["tampered"] = "accepted"
except (JoseError, ValueError) as e:
    seen["tampered"] = type(e).__name__

refreshed = session.refresh_token(metadata["token_endpoint"])
again = validated(refreshed["id_token"], refreshed["access_token"])
seen["refreshed"] = {"same_sub": again["sub"] == claims["sub"], "nonce": again.get("nonce"), "groups_direct": again.get("groups_direct")}

print(json.dumps(seen))
