"""Supabase's own Python client (supabase-py) through the mails that sign users in, and the
admin API, against a Quire database whose owner set `auth.settings.site_url`.

Usage: auth_flows.py URL ANON_KEY SERVICE_KEY OUTBOX_DIR

What an app does with `create_client` unchanged: `reset_password_for_email`, the code read
from the mail, `verify_otp`, `update_user` with a new password, then a sign-in with it;
`sign_in_with_otp`, the code (and, for another user, the link's `token_hash`) read from the
mail, `verify_otp`; `resend` of a sign-up's confirmation, confirmed on its link's page; and
`auth.admin` with the service role key (`create_user`, `list_users`, `get_user_by_id`,
`update_user_by_id`, `generate_link`, `delete_user`), refused with the anon key.

The mails are read from the server's outbox (one `.eml` per message, in the order sent).
Every answer is checked here; the script prints one JSON line of what it saw, and exits 1
naming the first check that failed.
"""

import email
import glob
import json
import os
import re
import sys
import time
from email import policy
from urllib.parse import parse_qs, urlparse

import httpx
from supabase import create_client
from supabase_auth import SyncGoTrueAdminAPI
from supabase_auth.errors import AuthApiError

url, anon_key, service_key, outbox = sys.argv[1:5]
SITE = "https://app.example.com"
ANN, BOB, CARL, DEE, EVE, FAY = (
    f"{name}@example.com" for name in ("ann", "bob", "carl", "dee", "eve", "fay")
)
OLD, NEW = "correct horse battery", "a whole new sentence"
seen = {}


def check(what, got, want):
    seen[what] = got
    if got != want:
        print(f"{what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)


def refused(what, call):
    """The (status, GoTrue error_code) the call was refused with."""
    try:
        call()
    except AuthApiError as e:
        seen[what] = [e.status, e.code]
        return [e.status, e.code]
    print(f"{what}: was not refused", file=sys.stderr)
    sys.exit(1)


def mail_to(address, n=0):
    """The text of the `n`th message to `address`, waiting for it (mails leave off the
    request path)."""
    for _ in range(200):
        texts = []
        for path in sorted(glob.glob(os.path.join(outbox, "*.eml"))):
            with open(path, "rb") as f:
                message = email.message_from_binary_file(f, policy=policy.default)
            if address in str(message["To"]):
                texts.append(message.get_body(preferencelist=("plain",)).get_content())
        if len(texts) > n:
            return texts[n]
        time.sleep(0.05)
    print(f"no message #{n} to {address} in {outbox}", file=sys.stderr)
    sys.exit(1)


def code_in(text):
    found = re.search(r"Your code: (\d{6})", text)
    if not found:
        print(f"no code in {text!r}", file=sys.stderr)
        sys.exit(1)
    return found.group(1)


def link_in(text, start):
    at = text.find(start)
    if at < 0:
        print(f"no {start} link in {text!r}", file=sys.stderr)
        sys.exit(1)
    return text[at:].split()[0]


# Password recovery: the mail's code signs in once, then the new password is the one.
ann = create_client(url, anon_key)
ann.auth.sign_up({"email": ANN, "password": OLD})
ann.auth.reset_password_for_email(ANN, {"redirect_to": f"{SITE}/reset"})
text = mail_to(ANN)
code = code_in(text)
link = link_in(text, f"{SITE}/reset?token_hash=")
check("recovery link type", parse_qs(urlparse(link).query)["type"], ["recovery"])
check(
    "wrong recovery code",
    refused(
        "wrong code",
        lambda: create_client(url, anon_key).auth.verify_otp(
            {"email": ANN, "token": "000000" if code != "000000" else "111111", "type": "recovery"}
        ),
    ),
    [403, "otp_expired"],
)
recovered = ann.auth.verify_otp({"email": ANN, "token": code, "type": "recovery"})
check("recovery signs in", recovered.session is not None, True)
check("recovered user", recovered.user.email, ANN)
check(
    "a spent code",
    refused(
        "spent code",
        lambda: create_client(url, anon_key).auth.verify_otp(
            {"email": ANN, "token": code, "type": "recovery"}
        ),
    ),
    [403, "otp_expired"],
)
ann.auth.update_user({"password": NEW})
check(
    "the old password",
    refused(
        "old password",
        lambda: create_client(url, anon_key).auth.sign_in_with_password(
            {"email": ANN, "password": OLD}
        ),
    ),
    [400, "invalid_credentials"],
)
again = create_client(url, anon_key).auth.sign_in_with_password({"email": ANN, "password": NEW})
check("the new password signs in", again.user.email, ANN)
identity = again.user.identities[0]
check(
    "identity",
    (identity.provider, identity.identity_data["email"], identity.user_id),
    ("email", ANN, again.user.id),
)
check("a recovery a second time within the minute", refused(
    "recovery too soon", lambda: ann.auth.reset_password_for_email(ANN)
), [429, "over_email_send_rate_limit"])
# An unknown address is answered as a registered one.
create_client(url, anon_key).auth.reset_password_for_email("nobody@example.com")

# Sign-in by mail: the code makes and confirms a new user; another's link signs in too.
bob = create_client(url, anon_key)
bob.auth.sign_in_with_otp({"email": BOB, "options": {"data": {"name": "Bob"}}})
signed = bob.auth.verify_otp({"email": BOB, "token": code_in(mail_to(BOB)), "type": "email"})
check("otp signs in", signed.session is not None, True)
check("otp user", (signed.user.email, signed.user.user_metadata.get("name")), (BOB, "Bob"))
check("otp confirms", signed.user.email_confirmed_at is not None, True)
check("bob reads himself", bob.auth.get_user().user.email, BOB)
carl = create_client(url, anon_key)
carl.auth.sign_in_with_otp({"email": CARL})
carl_link = link_in(mail_to(CARL), f"{SITE}?token_hash=")
token_hash = parse_qs(urlparse(carl_link).query)["token_hash"][0]
by_link = carl.auth.verify_otp({"token_hash": token_hash, "type": "email"})
check("a link's token_hash signs in", by_link.user.email, CARL)
check(
    "no user made when asked not to",
    refused(
        "otp without sign-up",
        lambda: create_client(url, anon_key).auth.sign_in_with_otp(
            {"email": "new@example.com", "options": {"should_create_user": False}}
        ),
    ),
    [422, "otp_disabled"],
)

# The admin API, with the service role key.
admin = create_client(url, service_key).auth.admin
made = admin.create_user(
    {"email": EVE, "password": OLD, "email_confirm": True, "user_metadata": {"name": "Eve"}}
).user
check(
    "admin made",
    (made.email, made.user_metadata.get("name"), made.email_confirmed_at is not None),
    (EVE, "Eve", True),
)
dee = admin.create_user({"email": DEE, "password": OLD}).user
check("admin made unconfirmed", dee.email_confirmed_at, None)
everyone = admin.list_users()
check("admin lists", sorted(u.email for u in everyone), sorted([ANN, BOB, CARL, DEE, EVE]))
check("a page", len(admin.list_users(page=2, per_page=2)), 2)
check("the last page", len(admin.list_users(page=3, per_page=2)), 1)
check("admin reads", admin.get_user_by_id(made.id).user.email, EVE)
changed = admin.update_user_by_id(
    made.id, {"password": NEW, "user_metadata": {"plan": "pro"}}
).user
check(
    "admin changes",
    (changed.user_metadata.get("name"), changed.user_metadata.get("plan")),
    ("Eve", "pro"),
)
eve = create_client(url, anon_key).auth.sign_in_with_password({"email": EVE, "password": NEW})
check("eve signs in", eve.user.id, made.id)
generated = admin.generate_link({"type": "magiclink", "email": FAY})
props = generated.properties
check("generated for", generated.user.email, FAY)
check(
    "generated link",
    props.action_link,
    f"{SITE}?token_hash={props.hashed_token}&type=magiclink",
)
check("generated code", bool(re.fullmatch(r"\d{6}", props.email_otp)), True)
fay = create_client(url, anon_key).auth.verify_otp(
    {"token_hash": props.hashed_token, "type": "magiclink"}
)
check("a generated link signs in", fay.user.email, FAY)
admin.delete_user(fay.user.id)
check(
    "deleted",
    refused("get deleted", lambda: admin.get_user_by_id(fay.user.id)),
    [404, "user_not_found"],
)
anon_admin = create_client(url, anon_key).auth.admin
check(
    "the anon key is no admin",
    refused("anon lists", lambda: anon_admin.list_users()),
    [403, "not_admin"],
)
user_admin = SyncGoTrueAdminAPI(
    url=f"{url}/auth/v1",
    headers={"apikey": anon_key, "Authorization": f"Bearer {signed.session.access_token}"},
)
check(
    "nor is a user's token",
    refused("user lists", lambda: user_admin.list_users()),
    [403, "not_admin"],
)

# A pending sign-up's confirmation sent again, confirmed on its link's page.
create_client(url, anon_key).auth.resend({"type": "signup", "email": DEE})
page_link = link_in(mail_to(DEE), url + "/auth/v1/verify?token=")
with httpx.Client() as http:
    page = http.get(page_link)
    check("the link's page", (page.status_code, "Confirm your address" in page.text), (200, True))
    token = parse_qs(urlparse(page_link).query)["token"][0]
    origin = "{0.scheme}://{0.netloc}".format(urlparse(url))
    done = http.post(
        page_link.split("?")[0],
        data={"type": "signup", "token": token, "password": OLD},
        headers={"Origin": origin},
    )
    check(
        "confirmed on the page",
        (done.status_code, "Address confirmed" in done.text),
        (200, True),
    )
dee_in = create_client(url, anon_key).auth.sign_in_with_password({"email": DEE, "password": OLD})
check("dee signs in", dee_in.user.email, DEE)

seen["ann"] = again.user.id
print(json.dumps(seen))
