//! An example of every body of the database API, as the OpenAPI document shows them.

use serde_json::{Value, json};

pub fn database_dto() -> Value {
    json!({
        "id": "0193a5f2-7c1e-7b3d-9a42-5d8e6f1c2b3a",
        "slug": "shop",
        "name": "Shop",
        "status": "ready",
        "sizeBytes": 7_643_315,
        "expiresAt": null,
        "dataApi": {
            "enabled": true,
            "url": "http://localhost:8080/db/shop",
            "restUrl": "http://localhost:8080/db/shop/rest/v1",
            "authUrl": "http://localhost:8080/db/shop/auth/v1",
            "settings": settings()
        },
        "createdAt": "2026-11-28T08:00:00Z",
        "updatedAt": "2026-11-28T08:00:00Z",
        "project": "default",
        "openTables": [open_table()]
    })
}

pub fn settings() -> Value {
    json!({
        "exposedSchemas": ["public"],
        "maxRows": null,
        "aggregates": false,
        "explain": false,
        "txRollback": false
    })
}

pub fn settings_body() -> Value {
    json!({ "exposedSchemas": ["public", "api"], "maxRows": 1000, "aggregates": true })
}

pub fn open_table() -> Value {
    json!({ "name": "items", "kind": "table", "privileges": ["select", "insert", "update", "delete"] })
}

pub fn data_api() -> Value {
    database_dto()["dataApi"].clone()
}

pub fn database_list() -> Value {
    json!({
        "databases": [database_dto()],
        "project": "default",
        "available": true,
        "quota": database_quota()
    })
}

pub fn create_body() -> Value {
    json!({ "slug": "shop", "name": "Shop" })
}

pub fn query_body() -> Value {
    json!({ "sql": "create table items (id serial primary key, name text); insert into items (name) values ('tea') returning *" })
}

pub fn query_result() -> Value {
    json!({ "columns": ["id", "name"], "rows": [[1, "tea"]], "rowCount": 1, "openTables": [open_table()] })
}

pub fn secret() -> Value {
    json!({
        "jwtSecret": "k3J9v2mQ8xT5rW1nY7bZ4cF6hL0pS2dG9aE3uI8oK1j",
        "anonKey": "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJxdWlyZSIsInJlZiI6InNob3AiLCJyb2xlIjoiYW5vbiJ9.…",
        "serviceRoleKey": "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJxdWlyZSIsInJlZiI6InNob3AiLCJyb2xlIjoic2VydmljZV9yb2xlIn0.…",
        "url": "http://localhost:8080/db/shop",
        "restUrl": "http://localhost:8080/db/shop/rest/v1",
        "authUrl": "http://localhost:8080/db/shop/auth/v1"
    })
}

pub fn database_quota() -> Value {
    json!({
        "databases": { "used": 1, "limit": 10 },
        "bytes": { "used": 7_954_947, "limit": 1_073_741_824 }
    })
}
