//! Accounts and teams: who a caller is (tokens, sessions, single sign-on), which
//! workspaces he belongs to and with what role, and the audit trail of what was done.

pub mod mail;
pub mod oidc;
pub mod password;
