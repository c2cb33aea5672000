"""Supabase's own Python client (supabase-py) against a Quire database's data API.

Usage: rest.py URL SERVICE_ROLE_KEY ANON_KEY

Runs what an app does every day through `create_client(url, key)` unchanged: inserts,
selects with filters, ordering, ranges and counts, singular rows, upserts, updates, deletes,
RPC calls, embedded resources, and the errors PostgREST answers; then the rest of
PostgREST's grammar the client reaches (JSON paths, computed fields, a function's unnamed
argument, defaults for missing columns, max-affected, CSV, schemas), and the statuses it
does not show (through httpx, which it is built on). Every answer is checked here; the
script prints one JSON line of what it saw, and exits 1 naming the first check that failed.
"""

import json
import sys

import httpx

from postgrest.exceptions import APIError
from supabase import create_client

url, service_key, anon_key = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}


def check(what, got, want):
    seen[what] = got
    if got != want:
        print(f"{what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)


def refused(what, call):
    try:
        call()
    except APIError as e:
        seen[what] = e.code
        return e
    print(f"{what}: was not refused", file=sys.stderr)
    sys.exit(1)


db = create_client(url, service_key)
items = lambda: db.table("items")  # noqa: E731

made = items().insert(
    [
        {"name": "tea", "price": 2.5, "qty": 3},
        {"name": "cake", "price": 4, "qty": 1},
        {"name": "bread", "price": 3, "qty": 0},
    ]
).execute()
check("insert", [r["name"] for r in made.data], ["tea", "cake", "bread"])
check("insert ids", all(isinstance(r["id"], int) for r in made.data), True)

r = items().select("name, price").gt("price", 2.6).order("price", desc=True).execute()
check("gt + order desc", [x["name"] for x in r.data], ["cake", "bread"])
check("numeric as JSON", r.data[0]["price"], 4)

r = items().select("*", count="exact").order("id").range(0, 1).execute()
check("range", [x["name"] for x in r.data], ["tea", "cake"])
check("count exact", r.count, 3)

r = items().select("label:name").in_("name", ["tea", "bread"]).order("name").execute()
check("in + alias", r.data, [{"label": "bread"}, {"label": "tea"}])

r = items().select("name").ilike("name", "%AK%").execute()
check("ilike", r.data, [{"name": "cake"}])

r = items().select("name").or_("qty.eq.0,price.gte.4").order("name").execute()
check("or", [x["name"] for x in r.data], ["bread", "cake"])

r = items().select("name").not_.eq("name", "tea").order("name").execute()
check("not.eq", [x["name"] for x in r.data], ["bread", "cake"])

r = items().select("name").is_("note", "null").lte("qty", 1).order("name").execute()
check("is null + lte", [x["name"] for x in r.data], ["bread", "cake"])

r = items().select("name").limit(1).offset(1).order("name").execute()
check("limit + offset", r.data, [{"name": "cake"}])

r = items().select("name, qty").eq("name", "tea").single().execute()
check("single", r.data, {"name": "tea", "qty": 3})

e = refused("single of many", lambda: items().select("name").single().execute())
check("single of many code", e.code, "PGRST116")

r = items().upsert({"id": made.data[0]["id"], "name": "green tea", "price": 2.5, "qty": 3}).execute()
check("upsert merges", r.data[0]["name"], "green tea")
r = items().select("id", count="exact").execute()
check("upsert keeps the count", r.count, 3)

r = items().update({"qty": 10}).eq("name", "cake").execute()
check("update", [(x["name"], x["qty"]) for x in r.data], [("cake", 10)])

r = items().delete().eq("name", "bread").execute()
check("delete", [x["name"] for x in r.data], ["bread"])
r = items().select("name").order("name").execute()
check("after delete", [x["name"] for x in r.data], ["cake", "green tea"])

r = db.rpc("add", {"a": 2, "b": 3}).execute()
check("rpc scalar", r.data, 5)

r = db.rpc("items_over", {"min_price": 3}).execute()
check("rpc setof", [x["name"] for x in r.data], ["cake"])

e = refused("unknown table", lambda: db.table("nowhere").select("*").execute())
check("unknown table code", e.code, "PGRST205")

e = refused("duplicate key", lambda: items().insert({"id": made.data[1]["id"], "name": "x"}).execute())
check("duplicate key code", e.code, "23505")

e = refused("unfiltered delete", lambda: items().delete().execute())

messages = lambda: db.table("messages")  # noqa: E731
users = lambda: db.table("users")  # noqa: E731

r = messages().select("id, message, author:users(username)").order("id").execute()
check(
    "embed many-to-one",
    [(x["message"], x["author"]) for x in r.data],
    [("hi", {"username": "alice"}), ("hello", {"username": "bob"}), ("hi again", {"username": "alice"})],
)

r = users().select("username, messages(message)").order("username").order("id", foreign_table="messages").execute()
check(
    "embed one-to-many",
    [(x["username"], [m["message"] for m in x["messages"]]) for x in r.data],
    [("alice", ["hi", "hi again"]), ("bob", ["hello"]), ("dave", [])],
)

r = users().select("username, messages!inner(message)").eq("messages.message", "hi again").execute()
check("embed !inner + filter", r.data, [{"username": "alice", "messages": [{"message": "hi again"}]}])

r = messages().select("id, ...users(status)").eq("message", "hello").execute()
check("embed spread", [x["status"] for x in r.data], ["OFFLINE"])

r = (
    users()
    .select("username, messages(message)")
    .eq("username", "alice")
    .order("id", desc=True, foreign_table="messages")
    .limit(1, foreign_table="messages")
    .execute()
)
check("embed order + limit", r.data, [{"username": "alice", "messages": [{"message": "hi again"}]}])

r = db.table("best_friends").select("first:users!first_user(username), second:users!second_user(status)").execute()
check("embed hints", r.data, [{"first": {"username": "alice"}, "second": {"status": "OFFLINE"}}])

r = messages().insert({"message": "new", "username": "dave"}).select("message, users(status)").execute()
check("embed in a representation", r.data, [{"message": "new", "users": {"status": "OFFLINE"}}])

e = refused("embed ambiguous", lambda: db.table("best_friends").select("users(*)").execute())
check("embed ambiguous code", (e.code, len(e.details)), ("PGRST201", 2))
e = refused("embed unrelated", lambda: items().select("name, users(*)").execute())
check("embed unrelated code", e.code, "PGRST200")

anon = create_client(url, anon_key)
r = anon.table("items").select("name").order("name").execute()
check("anon reads what it was granted", [x["name"] for x in r.data], ["cake", "green tea"])
e = refused("anon writes what it was not granted", lambda: anon.table("items").insert({"name": "x"}).execute())
check("anon insert code", e.code, "42501")

# JSON paths, computed fields, defaults for the columns a row leaves out.
notes = lambda: db.table("notes")  # noqa: E731
made = notes().insert(
    [{"title": "a", "data": {"kind": "x", "n": 1, "tags": ["t1", "t2"]}}, {"title": "b"}],
    default_to_null=False,
).execute()
check("missing=default", [(r["title"], r["qty"]) for r in made.data], [("a", 7), ("b", 7)])
check("identity ids", all(isinstance(r["id"], int) for r in made.data), True)
notes().insert({"title": "c", "data": {"kind": "y", "n": 3}}).execute()

r = notes().select("title, kind:data->>kind, data->n, first:data->tags->>0").order("id").execute()
check(
    "json paths",
    r.data,
    [
        {"title": "a", "kind": "x", "n": 1, "first": "t1"},
        {"title": "b", "kind": None, "n": None, "first": None},
        {"title": "c", "kind": "y", "n": 3, "first": None},
    ],
)
r = notes().select("title").eq("data->>kind", "y").execute()
check("json path filter", r.data, [{"title": "c"}])
r = notes().select("title").not_.is_("data", "null").order("data->n", desc=True).execute()
check("json path order", [x["title"] for x in r.data], ["c", "a"])
r = notes().select("title, shout").eq("shout", "B").execute()
check("computed field", r.data, [{"title": "b", "shout": "B"}])

# A function's one unnamed json argument takes the body whole, as PostgREST gives it.
r = db.rpc("echo", {"": {"k": 1}}).execute()
check("unnamed argument", r.data, {"": {"k": 1}})

e = refused(
    "max-affected",
    lambda: notes().update({"qty": 0}).gt("id", 0).max_affected(1).execute(),
)
check("max-affected code", e.code, "PGRST124")
r = notes().select("qty").order("id").execute()
check("max-affected changed nothing", [x["qty"] for x in r.data], [7, 7, 7])
r = notes().update({"qty": 1}).eq("title", "a").max_affected(1).execute()
check("max-affected within", [x["qty"] for x in r.data], [1])

r = notes().select("title,qty").order("id").csv().execute()
check("csv", r.data, "title,qty\na,1\nb,7\nc,7")

e = refused("unexposed schema", lambda: db.schema("personal").table("notes").select("*").execute())
check("unexposed schema code", e.code, "PGRST106")

# What the client does not show: the statuses.
keys = {"apikey": service_key, "Authorization": f"Bearer {service_key}"}
upsert = httpx.post(
    f"{url}/rest/v1/notes",
    headers={**keys, "Prefer": "resolution=merge-duplicates"},
    json={"id": made.data[0]["id"], "title": "a2"},
)
check("upsert that updated", upsert.status_code, 200)
upsert = httpx.post(
    f"{url}/rest/v1/notes",
    headers={**keys, "Prefer": "resolution=merge-duplicates"},
    json={"title": "d"},
)
check("upsert that inserted", upsert.status_code, 201)
head = httpx.head(
    f"{url}/rest/v1/notes", params={"limit": "1"}, headers={**keys, "Prefer": "count=exact"}
)
check("head with a count", (head.status_code, head.headers.get("content-range")), (206, "0-0/4"))

print(json.dumps(seen))
