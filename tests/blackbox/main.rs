//! The black-box suite: the real `quire-server` binary on free ports, on SQLite and on
//! PostgreSQL, spoken to over HTTP only. Every route and every error code of projects,
//! grants, keys and authentication is exercised here.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod harness;

mod activation;
mod admin;
mod agent_login;
mod audit;
mod auth;
mod browser;
mod browser_activation;
mod browser_audit;
mod browser_journey;
mod browser_oauth;
mod browser_pages;
mod browser_visitors;
mod budgets;
mod bundles;
mod cli;
mod cli_links;
mod cli_mcp;
mod cli_objects;
mod cli_pages;
mod cli_upload_retries;
mod dashboard;
mod dashboard_agents;
mod dashboard_links;
mod dashboard_manage;
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
mod mcp_inspector;
mod mcp_interop;
mod mcp_links;
mod oauth_agents;
mod oauth_clients;
mod oauth_consent;
mod oauth_documents;
mod oauth_flow;
mod oauth_tokens;
mod object_projects;
mod objects;
mod objects_access;
mod objects_killed;
mod objects_large;
mod objects_refusals;
mod objects_serving;
mod ops;
mod page_failures;
mod page_validation;
mod page_writes;
mod pages;
mod paging;
mod projects;
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
