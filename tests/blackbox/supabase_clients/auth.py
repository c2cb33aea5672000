"""Supabase's own Python client (supabase-py) signing users in against a Quire database.

Usage: auth.py URL ANON_KEY

What a tutorial's app does with `create_client(url, anon_key)` unchanged: two people sign up
and sign in, each inserts to-dos into a table under `auth.uid() = user_id` row-level
security and sees only their own, the anon key sees none; `get_user` and `update_user`;
`refresh_session` rotates the refresh token and the new access token works; a refresh token
presented again after two rotations is refused with `refresh_token_already_used` and ends
its session, so the newest token of that session is refused too; `sign_out` ends the
session, its access token no longer names a user and its refresh token is refused.

Every answer is checked here; the script prints one JSON line of what it saw, and exits 1
naming the first check that failed.
"""

import json
import sys

from postgrest.exceptions import APIError
from supabase import create_client
from supabase_auth.errors import AuthApiError

url, anon_key = sys.argv[1], sys.argv[2]
PASSWORD = "correct horse battery"
ANN, BOB = "ann@example.com", "bob@example.com"
seen = {}


def check(what, got, want):
    seen[what] = got
    if got != want:
        print(f"{what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)


def refused(what, call):
    """The GoTrue `error_code` (or PostgREST code) the call was refused with."""
    try:
        call()
    except AuthApiError as e:
        seen[what] = e.code
        return e.code
    except APIError as e:
        seen[what] = e.code
        return e.code
    print(f"{what}: was not refused", file=sys.stderr)
    sys.exit(1)


def tasks(client):
    r = client.table("todos").select("task, user_id").order("id").execute()
    return r.data


# Two people, each with a client of their own, as two browsers would have.
ann = create_client(url, anon_key)
bob = create_client(url, anon_key)

signed = ann.auth.sign_up(
    {"email": ANN, "password": PASSWORD, "options": {"data": {"name": "Ann"}}}
)
check("sign-up answers a session", signed.session is not None, True)
check("sign-up email", signed.user.email, ANN)
check("sign-up metadata", signed.user.user_metadata.get("name"), "Ann")
signed = bob.auth.sign_up({"email": BOB, "password": PASSWORD})
check("second sign-up answers a session", signed.session is not None, True)

check(
    "sign-up of a taken address",
    refused(
        "taken",
        lambda: create_client(url, anon_key).auth.sign_up(
            {"email": ANN, "password": PASSWORD}
        ),
    ),
    "user_already_exists",
)
check(
    "wrong password",
    refused(
        "wrong password",
        lambda: create_client(url, anon_key).auth.sign_in_with_password(
            {"email": ANN, "password": "not the password"}
        ),
    ),
    "invalid_credentials",
)

a = ann.auth.sign_in_with_password({"email": ANN, "password": PASSWORD})
b = bob.auth.sign_in_with_password({"email": BOB, "password": PASSWORD})
ann_id, bob_id = a.user.id, b.user.id
check("two users", ann_id != bob_id, True)
check("session shape", (a.session.token_type, a.session.expires_in), ("bearer", 3600))
ann_first_refresh = a.session.refresh_token

# The rows: `user_id` defaults to `auth.uid()`, the policy keeps each to their own.
made = ann.table("todos").insert([{"task": "ann 1"}, {"task": "ann 2"}]).execute()
check("insert stamps the user", [r["user_id"] for r in made.data], [ann_id, ann_id])
made = bob.table("todos").insert({"task": "bob 1"}).execute()
check("second user's insert", [r["user_id"] for r in made.data], [bob_id])
ann_row = ann.table("todos").select("id").eq("task", "ann 1").single().execute().data["id"]

check("ann sees her own", [t["task"] for t in tasks(ann)], ["ann 1", "ann 2"])
check("bob sees his own", [t["task"] for t in tasks(bob)], ["bob 1"])
check("anon sees none", tasks(create_client(url, anon_key)), [])
r = bob.table("todos").update({"task": "mine now"}).eq("id", ann_row).execute()
check("bob cannot update ann's row", r.data, [])
r = bob.table("todos").delete().eq("id", ann_row).execute()
check("bob cannot delete ann's row", r.data, [])
refused(
    "bob cannot insert a row as ann",
    lambda: bob.table("todos").insert({"task": "forged", "user_id": ann_id}).execute(),
)
check("forged insert code", seen["bob cannot insert a row as ann"], "42501")
refused(
    "anon cannot insert",
    lambda: create_client(url, anon_key).table("todos").insert({"task": "x"}).execute(),
)

# The signed-in user, and metadata merged into what sign-up gave.
u = ann.auth.get_user()
check("get_user email", u.user.email, ANN)
check("get_user id", u.user.id, ann_id)
u = ann.auth.update_user({"data": {"name": "x", "plan": "free"}})
check("update_user metadata", (u.user.user_metadata.get("name"), u.user.user_metadata.get("plan")), ("x", "free"))
check("update_user shows in get_user", ann.auth.get_user().user.user_metadata.get("name"), "x")

# A refresh retried (its answer lost) within the grace, its successor unused: accepted.
bob_first_refresh = bob.auth.get_session().refresh_token
check("bob refreshes", bob.auth.refresh_session().user.id, bob_id)
retried = create_client(url, anon_key).auth.refresh_session(bob_first_refresh)
check("a retry within the grace is accepted", retried.user.id, bob_id)

# Refresh: a new access token and a rotated refresh token, and the client uses them.
before = ann.auth.get_session()
r1 = ann.auth.refresh_session()
check("refresh rotates the refresh token", r1.session.refresh_token != ann_first_refresh, True)
check("refresh gives a new access token", r1.session.access_token != before.access_token, True)
check("refreshed user", r1.user.id, ann_id)
check("new access token names the user", ann.auth.get_user(r1.session.access_token).user.email, ANN)
check("new access token reads the rows", [t["task"] for t in tasks(ann)], ["ann 1", "ann 2"])

# Another rotation, then the token of two rotations ago, as a thief replaying it would.
r2 = ann.auth.refresh_session()
newest = r2.session.refresh_token
check(
    "reused refresh token",
    refused(
        "reuse",
        lambda: create_client(url, anon_key).auth.refresh_session(ann_first_refresh),
    ),
    "refresh_token_already_used",
)
check(
    "the family is revoked",
    refused(
        "newest after reuse",
        lambda: create_client(url, anon_key).auth.refresh_session(newest),
    ),
    "refresh_token_not_found",
)
check(
    "the session's access token names no session",
    refused("access after reuse", lambda: ann.auth.get_user(r2.session.access_token)),
    "session_not_found",
)
check("bob is untouched", [t["task"] for t in tasks(bob)], ["bob 1"])

# A new sign-in, then sign-out.
ann = create_client(url, anon_key)
a = ann.auth.sign_in_with_password({"email": ANN, "password": PASSWORD})
check("signed in again", [t["task"] for t in tasks(ann)], ["ann 1", "ann 2"])
ann.auth.sign_out()
check("signed out locally", ann.auth.get_session(), None)
check(
    "signed-out access token",
    refused("get_user after sign-out", lambda: ann.auth.get_user(a.session.access_token)),
    "session_not_found",
)
check(
    "signed-out refresh token",
    refused(
        "refresh after sign-out",
        lambda: create_client(url, anon_key).auth.refresh_session(a.session.refresh_token),
    ),
    "refresh_token_not_found",
)
check("signed-out client reads as anon", tasks(ann), [])
check("bob still signed in", bob.auth.get_user().user.email, BOB)
check("bob still sees his own", [t["task"] for t in tasks(bob)], ["bob 1"])

seen["ann"], seen["bob"] = ann_id, bob_id
print(json.dumps(seen))
