//! Accounts and teams: who a caller is (tokens, sessions, single sign-on), which
//! workspaces he belongs to and with what role, and the audit trail of what was done.

pub mod access;
pub mod audit;
pub mod own;
pub mod password;
pub mod recovery;
pub mod sign_in;
pub mod sso;
pub mod teams;

/// The page where a one-time link's holder sets a password.
pub fn password_link_url(public_url: &str, token: &str) -> String {
    format!("{}/reset-password/{token}", public_url.trim_end_matches('/'))
}
