"""Supabase's own Python client (supabase-py) against a Quire database's data API.

Usage: rest.py URL SERVICE_ROLE_KEY ANON_KEY

Runs what an app does every day through `create_client(url, key)` unchanged: inserts,
selects with filters, ordering, ranges and counts, singular rows, upserts, updates, deletes,
RPC calls, embedded resources, and the errors PostgREST answers. Every answer is checked here; the script
prints one JSON line of what it saw, and exits 1 naming the first check that failed.
"""

import json
import sys

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

print(json.dumps(seen))
