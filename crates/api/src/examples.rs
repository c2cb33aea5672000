//! Examples of every request and answer body this crate's routes document (the pages' are
//! `quire-pages-api`'s), for Swagger UI's "Try it out" and Schemathesis' examples phase,
//! which sends each request example to the real server. One story throughout: ann's page
//! "Launch notes" in her project `marketing`, on the hosts a local server uses
//! (`127.0.0.1:8080` for the API, `ann.localhost:8081` for her pages). Each is named on its
//! type (`#[schema(example = …)]`), so answers built of other answers reuse theirs.

use serde_json::{Value, json};

// The device login (RFC 8628).

pub fn device_authorization_request() -> Value {
    json!({"client_name": "quire CLI on ann-laptop"})
}

pub fn token_request() -> Value {
    json!({
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
        "device_code": "Xk2p9QvR7tLm4WcN8yB3dF6hJ1sA5zE0"
    })
}

pub fn device_authorization() -> Value {
    json!({
        "device_code": "Xk2p9QvR7tLm4WcN8yB3dF6hJ1sA5zE0",
        "user_code": "WDJB-MJHT",
        "verification_uri": "http://127.0.0.1:8080/authorize-agent",
        "verification_uri_complete": "http://127.0.0.1:8080/authorize-agent?code=WDJB-MJHT",
        "expires_in": 600,
        "interval": 3
    })
}

pub fn device_token() -> Value {
    json!({
        "access_token": "qk_7Hc2LmQ9rT4vX8bN1pK6sW3yZ5aD0eF2gJ7hM9nR4t",
        "token_type": "Bearer",
        "scope": "master",
        "expires_in": null
    })
}

// Answers of the platform API.

pub fn project_dto() -> Value {
    json!({
        "id": "5f0c2b1e-8a4d-4f6b-9c3e-2d7a1e9b4c60",
        "name": "Marketing site",
        "tag": "web",
        "color": "teal",
        "slug": "marketing",
        "oauthClientId": null,
        "status": "active",
        "createdAt": "2026-11-25T09:30:00Z",
        "updatedAt": "2026-11-26T14:05:00Z"
    })
}

pub fn project_envelope() -> Value {
    json!({"project": project_dto()})
}

pub fn project_list() -> Value {
    json!({"projects": [project_dto()]})
}

pub fn resource_dto() -> Value {
    json!({
        "id": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13",
        "name": "Launch notes",
        "createdAt": "2026-11-25T09:30:00Z"
    })
}

pub fn resources_dto() -> Value {
    json!({
        "pages": [resource_dto()],
        "objects": [],
        "links": [],
        "databases": [],
        "keys": []
    })
}

pub fn resources_envelope() -> Value {
    json!({"resources": resources_dto()})
}

pub fn grant_dto() -> Value {
    json!({
        "keyId": "3c8d1f4a-6e2b-4a9c-8f5d-7b1e0c2a9d46",
        "projectId": "5f0c2b1e-8a4d-4f6b-9c3e-2d7a1e9b4c60",
        "level": "read",
        "createdAt": "2026-11-25T09:30:00Z"
    })
}

pub fn grant_envelope() -> Value {
    json!({"grant": grant_dto()})
}

pub fn key_dto() -> Value {
    json!({
        "id": "3c8d1f4a-6e2b-4a9c-8f5d-7b1e0c2a9d46",
        "name": "deploy from CI",
        "tier": "app",
        "apps": ["page"],
        "projectId": "5f0c2b1e-8a4d-4f6b-9c3e-2d7a1e9b4c60",
        "project": "marketing",
        "keyPrefix": "qk_7Hc2LmQ9",
        "createdAt": "2026-11-25T09:30:00Z",
        "revokedAt": null
    })
}

pub fn key_list() -> Value {
    json!({"keys": [key_dto()]})
}

pub fn minted_key_dto() -> Value {
    json!({
        "key": "qk_7Hc2LmQ9rT4vX8bN1pK6sW3yZ5aD0eF2gJ7hM9nR4t",
        "keyId": "3c8d1f4a-6e2b-4a9c-8f5d-7b1e0c2a9d46",
        "keyPrefix": "qk_7Hc2LmQ9",
        "tier": "app",
        "apps": ["page"],
        "name": "deploy from CI",
        "projectId": "5f0c2b1e-8a4d-4f6b-9c3e-2d7a1e9b4c60",
        "project": "marketing"
    })
}

pub fn error_body() -> Value {
    json!({"error": "not_found", "message": "no page with that id"})
}

pub fn health() -> Value {
    json!({"status": "ok"})
}

pub fn oauth_client_dto() -> Value {
    json!({
        "client_id": "qc_notes_4f8a2b",
        "name": "Notes app",
        "client_type": "confidential",
        "redirect_uris": ["http://127.0.0.1:8400/callback"],
        "createdAt": "2026-11-25T09:30:00Z",
        "client_secret": "qcs_Vb8nR2tY6uK1mP4wQ9zX3cL7"
    })
}

pub fn oauth_client_envelope() -> Value {
    json!({
        "client": {
            "client_id": "qc_notes_4f8a2b",
            "name": "Notes app",
            "client_type": "confidential",
            "redirect_uris": ["http://127.0.0.1:8400/callback"],
            "createdAt": "2026-11-25T09:30:00Z"
        }
    })
}

pub fn oauth_client_list() -> Value {
    json!({
        "clients": [
            {
                "client_id": "qc_notes_4f8a2b",
                "name": "Notes app",
                "client_type": "confidential",
                "redirect_uris": ["http://127.0.0.1:8400/callback"],
                "createdAt": "2026-11-25T09:30:00Z"
            }
        ]
    })
}

// Email.

pub fn send_email_request() -> Value {
    json!({
        "to": "ann@example.com",
        "subject": "Your page is live",
        "text": "Launch notes are online for the team."
    })
}

pub fn sent_email() -> Value {
    json!({
        "sent": true,
        "mail_id": "e4a1c9b7-2d5f-4b8e-a3c6-1f9d7e2b5a08",
        "remaining_today": 9
    })
}

// Keys.

pub fn mint_key_request() -> Value {
    json!({"name": "deploy from CI", "apps": ["page"], "project": "marketing"})
}

// OAuth tokens.

pub fn token_form() -> Value {
    json!({
        "grant_type": "authorization_code",
        "code": "Qm3vT8xK2pL9wR4n",
        "redirect_uri": "http://127.0.0.1:8400/callback",
        "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "client_id": "qc_notes_4f8a2b",
        "client_secret": "qcs_Vb8nR2tY6uK1mP4wQ9zX3cL7"
    })
}

pub fn revoke_form() -> Value {
    json!({
        "token": "rt_L4pQ8vN2xK7mW1cR9tB3",
        "client_id": "qc_notes_4f8a2b",
        "client_secret": "qcs_Vb8nR2tY6uK1mP4wQ9zX3cL7"
    })
}

pub fn token_answer() -> Value {
    json!({
        "access_token": "eyJhbGciOiJFZERTQSIsImtpZCI6IjIwMjYtMTEiLCJ0eXAiOiJhdCtqd3QifQ.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJl",
        "token_type": "Bearer",
        "expires_in": 900,
        "refresh_token": "rt_L4pQ8vN2xK7mW1cR9tB3",
        "scope": "pages:read pages:write"
    })
}

// OAuth clients.

pub fn register_client_request() -> Value {
    json!({
        "name": "Notes app",
        "redirect_uris": ["http://127.0.0.1:8400/callback"],
        "client_type": "confidential"
    })
}

// Project requests.

pub fn create_project_request() -> Value {
    json!({
        "name": "Marketing site",
        "tag": "web",
        "color": "teal",
        "slug": "marketing"
    })
}

pub fn patch_project_request() -> Value {
    json!({"name": "Marketing site 2027", "color": "violet"})
}

pub fn delete_project_request() -> Value {
    json!({"confirm": "5f0c2b1e-8a4d-4f6b-9c3e-2d7a1e9b4c60"})
}

pub fn assign_request() -> Value {
    json!({
        "resource_type": "page",
        "resource_id": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13"
    })
}

pub fn grant_request() -> Value {
    json!({"level": "read", "key_id": "3c8d1f4a-6e2b-4a9c-8f5d-7b1e0c2a9d46"})
}

pub fn revoke_grant_request() -> Value {
    json!({"key_id": "3c8d1f4a-6e2b-4a9c-8f5d-7b1e0c2a9d46"})
}

// Dynamic client registration (RFC 7591).

pub fn dynamic_registration_request() -> Value {
    json!({
        "client_name": "Cursor",
        "redirect_uris": [
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "http://localhost:8787/callback"
        ],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"]
    })
}

pub fn dynamic_registration_answer() -> Value {
    json!({
        "client_id": "qc_Vb8nR2tY6uK1mP4wQ9zX3c",
        "client_id_issued_at": 1_795_000_000,
        "client_name": "Cursor",
        "redirect_uris": [
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "http://localhost:8787/callback"
        ],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "registration_client_uri": "http://127.0.0.1:8080/api/oauth/register/qc_Vb8nR2tY6uK1mP4wQ9zX3c"
    })
}
