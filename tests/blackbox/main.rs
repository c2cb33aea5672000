//! The black-box suite: the real `quire-server` binary on free ports, on SQLite and on
//! PostgreSQL, spoken to over HTTP only. Every route and every error code of projects,
//! grants, keys and authentication is exercised here.

#![allow(clippy::unwrap_used)]
// test code: a panic is the failure report
// A test may need several things a machine can lack (PostgreSQL, Chromium, supabase-js);
// where two are missing, two `ignore`s apply and the second is reported unused.
#![allow(unused_attributes)]

mod harness;

mod activation;
mod admin;
mod agent_login;
mod audit;
mod auth;
mod backups;
mod browser;
mod browser_activation;
mod browser_audit;
mod browser_databases;
mod browser_end_users;
mod browser_files;
mod browser_journey;
mod browser_oauth;
mod browser_pages;
mod browser_todo;
mod browser_visitors;
mod budgets;
mod bundles;
mod cli;
mod cli_databases;
mod cli_links;
mod cli_mcp;
mod cli_objects;
mod cli_pages;
mod cli_upload_retries;
mod dashboard;
mod dashboard_agents;
mod dashboard_databases;
mod dashboard_files;
mod dashboard_links;
mod dashboard_manage;
mod data_api_instances;
mod data_api_keys;
mod data_auth;
mod data_auth_flows;
mod data_auth_mail;
mod data_auth_refusals;
mod data_auth_takeovers;
mod data_gateway;
mod databases;
mod email;
mod grants;
mod guessing;
mod hardening;
mod http_semantics;
mod interop;
mod keys;
mod link_budgets;
mod link_projects;
mod links;
mod mcp;
mod mcp_conformance;
mod mcp_databases;
mod mcp_inspector;
mod mcp_interop;
mod mcp_links;
mod mcp_objects;
mod metrics;
mod oauth_agents;
mod oauth_clients;
mod oauth_consent;
mod oauth_documents;
mod oauth_documents_refused;
mod oauth_flow;
mod oauth_tokens;
mod object_projects;
mod object_quotas;
mod objects;
mod objects_access;
mod objects_killed;
mod objects_large;
mod objects_refusals;
mod objects_serving;
mod ops;
mod page_database;
mod page_failures;
mod page_validation;
mod page_writes;
mod pages;
mod paging;
mod projects;
mod quotas;
mod replicas;
mod routes;
mod secrets_at_rest;
mod security;
mod serving;
mod serving_access;
mod serving_http;
mod serving_origins;
mod serving_visitors;
mod signup;
mod slow_clients;
mod supabase_auth_interop;
mod supabase_interop;
mod tenant_limits;
