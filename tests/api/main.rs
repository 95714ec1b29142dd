//! HTTP-level tests of the insight service, one module per tag. Run against SQLite by
//! default and against PostgreSQL when `INSIGHT_TEST_DATABASE_URL` names a database
//! (each test then creates its own fresh database next to it).

mod accounts;
mod archive;
mod browser;
mod budgets;
mod chat;
mod cli;
mod console;
mod console_chat;
mod console_library;
mod console_pages;
mod console_repository;
mod console_settings;
mod conventions;
mod doors;
mod erasure_files;
mod evidence;
mod exchange;
mod exports;
mod generation;
mod hardening;
mod highlights;
mod import_kill;
mod imports;
mod interviews;
mod isolation;
mod limits;
mod mail;
#[path = "../common/mail_sink.rs"]
mod mail_sink;
mod mcp;
mod mcp_transport;
mod model;
mod oidc;
#[path = "../common/openai_stub.rs"]
mod openai_stub;
mod openapi;
mod pagination;
mod presets;
mod privacy;
mod projects;
mod records;
mod report_edits;
mod reports;
mod roles;
mod search;
mod sso;
mod storage;
mod support;
mod tags;
mod transcription;
mod voice;
mod webhooks;
mod workspace_access;
mod workspaces;
