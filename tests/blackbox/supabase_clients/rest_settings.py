"""Supabase's own Python client (supabase-py) against a Quire database whose owner turned on
what PostgREST leaves off by default (PATCH .../data-api): aggregates, EXPLAIN,
`Prefer: tx=rollback`, a cap on rows and a second exposed schema.

Usage: rest_settings.py URL SERVICE_ROLE_KEY

Every answer is checked here; the script prints one JSON line of what it saw, and exits 1
naming the first check that failed.
"""

import json
import sys

import httpx

from supabase import create_client

url, service_key = sys.argv[1], sys.argv[2]
seen = {}


def check(what, got, want):
    seen[what] = got
    if got != want:
        print(f"{what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)


db = create_client(url, service_key)

# Aggregates, grouped by the other columns, and in an embedded resource.
r = db.table("orders").select("customer, n:count(), total:amount.sum()").order("customer").execute()
check(
    "aggregates grouped",
    r.data,
    [
        {"customer": "ada", "n": 2, "total": 30},
        {"customer": "bo", "n": 2, "total": 10},
    ],
)
r = db.table("orders").select("amount.max(), amount.min(), amount.avg()::int").execute()
check("aggregates alone", r.data, [{"max": 20, "min": 5, "avg": 10}])
r = db.table("customers").select("name, orders(count())").order("name").execute()
check(
    "aggregate embedded",
    r.data,
    [
        {"name": "ada", "orders": [{"count": 2}]},
        {"name": "bo", "orders": [{"count": 2}]},
        {"name": "cy", "orders": [{"count": 0}]},
    ],
)

# EXPLAIN, as text and as JSON.
text = db.table("orders").select("*").explain().execute()
check("explain text", text.startswith("Aggregate  (cost="), True)
plan = db.table("orders").select("*").explain(verbose=True, format="json").execute()
check("explain json", isinstance(plan.data[0]["Plan"], dict), True)

# tx=rollback: answered as if committed, then undone.
keys = {"apikey": service_key, "Authorization": f"Bearer {service_key}"}
rolled = httpx.post(
    f"{url}/rest/v1/orders",
    headers={**keys, "Prefer": "return=representation, tx=rollback"},
    json={"id": 9, "customer": "ada", "amount": 100},
)
check("rollback answered", (rolled.status_code, rolled.json()), (201, [{"id": 9, "customer": "ada", "amount": 100}]))
check("rollback applied", rolled.headers.get("preference-applied"), "return=representation, tx=rollback")
r = db.table("orders").select("id").eq("id", 9).execute()
check("rollback left nothing", r.data, [])

# The cap on rows: three at most, whatever is asked; the count is of them all.
r = db.table("orders").select("id", count="exact").order("id").execute()
check("max rows", ([x["id"] for x in r.data], r.count), ([1, 2, 3], 4))

# A second schema, by profile.
r = db.schema("reports").table("totals").select("*").execute()
check("profile", r.data, [{"customer": "ada", "total": 30}])

print(json.dumps(seen))
