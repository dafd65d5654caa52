"""An unmodified python-gitlab (Debian's python3-gitlab) against Knock.

Everything below is python-gitlab's own API, nothing Knock-specific. Run by
test/e2e/python-gitlab.test.ts with KNOCK_URL and KNOCK_ADMIN_TOKEN set; prints one JSON object
of what it saw, which the test checks. A step that fails is reported as the HTTP status (or the
error) of its exception, so the test shows what went wrong rather than a Python traceback.
"""

import datetime
import json
import os

import gitlab

URL = os.environ["KNOCK_URL"]
ADMIN_TOKEN = os.environ["KNOCK_ADMIN_TOKEN"]
seen = {"python_gitlab": gitlab.__version__}


def day(days):
    return (datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=days)).isoformat()


def attempt(name, step):
    """Runs a step; records its result, or the status of the error python-gitlab raised."""
    try:
        seen[name] = step()
    except gitlab.exceptions.GitlabError as e:
        seen[name] = {"error": type(e).__name__, "status": e.response_code}
    except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
        seen[name] = {"error": type(e).__name__, "message": str(e)}


admin = gitlab.Gitlab(URL, private_token=ADMIN_TOKEN)


def user(username):
    made = admin.users.create(
        {"username": username, "name": username.title(), "password": f"{username}-password-1", "email": f"{username}@example.com"}
    )
    token = made.impersonationtokens.create({"name": "python-gitlab", "scopes": ["api"]}).token
    return made, gitlab.Gitlab(URL, private_token=token)


# Names of their own: the server is shared with the run's other files.
alice, as_alice = user("py-alice")
bob, _ = user("py-bob")
carol, as_carol = user("py-carol")

# Members: add with an expiry, change level and expiry, remove; on a group and on a project.
group = as_alice.groups.create({"name": "Py Group", "path": "py-group", "visibility": "public"})
project = as_alice.projects.create({"name": "Py Site", "path": "py-site", "namespace_id": group.id, "visibility": "public"})
for kind, source in (("group", group), ("project", project)):

    def members(source=source):
        added = source.members.create({"user_id": bob.id, "access_level": 30, "expires_at": day(30)})
        out = {"added": [added.username, added.access_level, added.expires_at]}
        member = source.members.get(bob.id)
        member.access_level = 40
        member.expires_at = day(60)
        member.save()
        again = source.members.get(bob.id)
        out["edited"] = [again.access_level, again.expires_at]
        again.delete()
        out["after_removal"] = sorted(m.username for m in source.members.list())
        return out

    attempt(f"{kind}_members", members)
seen["dates"] = [day(30), day(60)]


# A personal access token: created by an administrator for bob, used as PRIVATE-TOKEN and as
# Bearer, listed, then revoked.
def personal_access_token():
    pat = bob.personal_access_tokens.create({"name": "py-ci", "scopes": ["api", "read_user"], "expires_at": day(30)})
    out = {"created": {k: pat.attributes.get(k) for k in ("name", "scopes", "active", "revoked", "expires_at", "user_id")}}
    as_bob = gitlab.Gitlab(URL, private_token=pat.token)
    as_bob.auth()
    out["private_token_user"] = as_bob.user.username
    bearer = gitlab.Gitlab(URL, oauth_token=pat.token)
    bearer.auth()
    out["bearer_user"] = bearer.user.username
    out["listed_by_admin"] = [t.name for t in admin.personal_access_tokens.list(user_id=bob.id) if t.id == pat.id]
    out["listed_by_bob"] = [t.id == pat.id for t in as_bob.personal_access_tokens.list()]
    # Bob makes his own through python-gitlab's generic HTTP API.
    own = as_bob.http_post("/user/personal_access_tokens", post_data={"name": "own", "scopes": ["read_api"]})
    out["own"] = {"scopes": own["scopes"], "user_id": own["user_id"]}
    admin.personal_access_tokens.delete(pat.id)
    try:
        as_bob.auth()
        out["after_revocation"] = "still works"
    except gitlab.exceptions.GitlabAuthenticationError as e:
        out["after_revocation"] = e.response_code
    return out


attempt("personal_access_token", personal_access_token)
seen["bob_id"] = bob.id


# A user's lifecycle: carol, with her impersonation token and a personal access token, is edited
# (her token shows the new name), blocked (both tokens stop working; blocking again answers
# null), unblocked (the ended tokens stay ended), deactivated, activated and deleted.
def lifecycle():
    pat = carol.personal_access_tokens.create({"name": "carol-script", "scopes": ["read_api"]})
    with_pat = gitlab.Gitlab(URL, private_token=pat.token)

    def status(gl):
        try:
            gl.auth()
            return "works"
        except gitlab.exceptions.GitlabAuthenticationError as e:
            return e.response_code

    carol.name = "Carol Renamed"
    carol.save()
    as_carol.auth()
    out = {"renamed": as_carol.user.name, "pat_before": status(with_pat)}
    out["block"] = carol.block()
    out["state"] = admin.users.get(carol.id).state
    out["block_again"] = carol.block()
    out["after_block"] = [status(as_carol), status(with_pat)]
    blocked = admin.users.list(blocked=True, get_all=True)
    out["listed_blocked"] = {"carol": any(u.id == carol.id for u in blocked), "states": sorted({u.state for u in blocked})}
    listed = [t for t in admin.personal_access_tokens.list(user_id=carol.id) if t.id == pat.id]
    out["pat_after_block"] = [{"revoked": t.revoked, "active": t.active} for t in listed]
    out["unblock"] = carol.unblock()
    out["after_unblock"] = [status(as_carol), status(with_pat)]
    out["deactivate"] = carol.deactivate()
    out["deactivated_state"] = admin.users.get(carol.id).state
    out["activate"] = carol.activate()
    admin.users.delete(carol.id)
    try:
        admin.users.get(carol.id)
        out["deleted"] = "still there"
    except gitlab.exceptions.GitlabGetError as e:
        out["deleted"] = e.response_code
    return out


attempt("lifecycle", lifecycle)
print(json.dumps(seen))
