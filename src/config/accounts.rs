//! Accounts: who may make an account, how long sessions and links last, when repeated
//! failed sign-ins lock, and how long the audit log is kept.

use clap::Args;

use super::check::{checked, ranged};

/// People sign in with an email address and password (`POST /auth/login`) or single
/// sign-on; a session is a cookie (`HttpOnly`, `SameSite=Lax`, `Path=/`; `Secure` and the
/// `__Host-` name when `INSIGHT_PUBLIC_URL` is `https://`) whose value is kept only as a
/// SHA-256 hash. Passwords are argon2id hashes (19 MiB, 10 passes, 1 lane).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Accounts and sessions", verbatim_doc_comment)]
pub struct AccountsSettings {
    /// Who may make an account: `invite` (only by accepting an invitation, or with single
    /// sign-on), `open` (anyone, with `POST /auth/signup`) or `closed` (nobody: accounts come
    /// from `insight users add`, and invitations and single sign-on reach existing accounts
    /// only).
    #[arg(long, env = "INSIGHT_SIGNUP", default_value = "invite", value_parser = checked(parse_signup))]
    pub signup: Signup,

    /// Minutes a session may go unused before it ends.
    ///
    /// Its last use is written down at most once a minute.
    #[arg(long, env = "INSIGHT_SESSION_IDLE_MINUTES", default_value_t = 4320, value_parser = ranged::<u64>(1..=525_600))]
    pub session_idle_minutes: u64,

    /// Hours a session lasts at most after sign-in, however much it is used.
    #[arg(long, env = "INSIGHT_SESSION_LIFETIME_HOURS", default_value_t = 720, value_parser = ranged::<u64>(1..=8_760))]
    pub session_lifetime_hours: u64,

    /// Days an invitation link stays valid (it works once).
    #[arg(long, env = "INSIGHT_INVITATION_DAYS", default_value_t = 7, value_parser = ranged::<u64>(1..=90))]
    pub invitation_days: u64,

    /// Minutes a password reset link stays valid (it works once).
    #[arg(long, env = "INSIGHT_PASSWORD_RESET_MINUTES", default_value_t = 60, value_parser = ranged::<u64>(5..=10_080))]
    pub password_reset_minutes: u64,

    /// Failed sign-ins to one account, within the lock period, after which it is locked for
    /// that period (429 with `Retry-After`, even with the right password).
    ///
    /// Each failure before that holds its answer 250 ms longer than the last (3 s at most).
    #[arg(long, env = "INSIGHT_SIGN_IN_LOCK_AFTER", default_value_t = 10, value_parser = ranged::<u32>(3..=1000))]
    pub sign_in_lock_after: u32,

    /// Failed sign-ins from one client address (see INSIGHT_TRUSTED_PROXIES), within the lock
    /// period, after which the address is locked out (higher than per account: many people
    /// share an office's address).
    #[arg(long, env = "INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER", default_value_t = 50, value_parser = ranged::<u32>(3..=100_000))]
    pub sign_in_address_lock_after: u32,

    /// Minutes a lock lasts, and the window in which failures are counted.
    ///
    /// Counts and locks live in the database, so every instance sees the same.
    #[arg(long, env = "INSIGHT_SIGN_IN_LOCK_MINUTES", default_value_t = 15, value_parser = ranged::<u64>(1..=1440))]
    pub sign_in_lock_minutes: u64,

    /// Days the audit log keeps an entry; older ones are deleted hourly.
    #[arg(long, env = "INSIGHT_AUDIT_RETENTION_DAYS", default_value_t = 365, value_parser = ranged::<u64>(1..=36_500))]
    pub audit_retention_days: u64,
}

/// Who may make an account (`INSIGHT_SIGNUP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signup {
    Invite,
    Open,
    Closed,
}

impl AccountsSettings {
    pub fn session_idle(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.session_idle_minutes * 60)
    }

    pub fn session_lifetime(&self) -> chrono::Duration {
        chrono::Duration::hours(self.session_lifetime_hours as i64)
    }
}

fn parse_signup(value: &str) -> Result<Signup, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "invite" => Ok(Signup::Invite),
        "open" => Ok(Signup::Open),
        "closed" => Ok(Signup::Closed),
        _ => Err("must be invite, open or closed".into()),
    }
}
