//! Accounts: who may make an account, how long sessions and links last, when repeated
//! failed sign-ins lock, and how long the audit log is kept.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Accounts")]
pub struct AccountsSettings {
    /// Who may make an account: `invite` (only by accepting an invitation), `open` (anyone,
    /// with `POST /auth/signup`) or `closed` (nobody: accounts come from the CLI, and
    /// invitations and single sign-on reach existing accounts only) [env: INSIGHT_SIGNUP].
    #[arg(long, env = "INSIGHT_SIGNUP", default_value = "invite", value_parser = parse_signup)]
    pub signup: Signup,

    /// Minutes a session may go unused before it ends [env: INSIGHT_SESSION_IDLE_MINUTES].
    #[arg(long, env = "INSIGHT_SESSION_IDLE_MINUTES", default_value_t = 4320, value_parser = parse_idle)]
    pub session_idle_minutes: u64,

    /// Hours a session lasts at most, however much it is used [env: INSIGHT_SESSION_LIFETIME_HOURS].
    #[arg(long, env = "INSIGHT_SESSION_LIFETIME_HOURS", default_value_t = 720, value_parser = parse_lifetime)]
    pub session_lifetime_hours: u64,

    /// Days an invitation link stays valid [env: INSIGHT_INVITATION_DAYS].
    #[arg(long, env = "INSIGHT_INVITATION_DAYS", default_value_t = 7, value_parser = parse_invitation_days)]
    pub invitation_days: u64,

    /// Minutes a password reset link stays valid [env: INSIGHT_PASSWORD_RESET_MINUTES].
    #[arg(long, env = "INSIGHT_PASSWORD_RESET_MINUTES", default_value_t = 60, value_parser = parse_reset_minutes)]
    pub password_reset_minutes: u64,

    /// Failed sign-ins to one account, within the lock period, after which it is locked for
    /// that period; each failure before that slows the next answer [env: INSIGHT_SIGN_IN_LOCK_AFTER].
    #[arg(long, env = "INSIGHT_SIGN_IN_LOCK_AFTER", default_value_t = 10, value_parser = parse_lock_after)]
    pub sign_in_lock_after: u32,

    /// Failed sign-ins from one client address, within the lock period, after which the
    /// address is locked out (higher than per account: many people share an office's address)
    /// [env: INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER].
    #[arg(long, env = "INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER", default_value_t = 50, value_parser = parse_address_lock_after)]
    pub sign_in_address_lock_after: u32,

    /// Minutes a lock lasts, and the window in which failures are counted [env: INSIGHT_SIGN_IN_LOCK_MINUTES].
    #[arg(long, env = "INSIGHT_SIGN_IN_LOCK_MINUTES", default_value_t = 15, value_parser = parse_lock_minutes)]
    pub sign_in_lock_minutes: u64,

    /// Days the audit log keeps an entry [env: INSIGHT_AUDIT_RETENTION_DAYS].
    #[arg(long, env = "INSIGHT_AUDIT_RETENTION_DAYS", default_value_t = 365, value_parser = parse_audit_days)]
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
        _ => Err(format!(
            "INSIGHT_SIGNUP (--signup) must be invite, open or closed, not {value:?}"
        )),
    }
}

fn parse_idle(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_SESSION_IDLE_MINUTES",
        "--session-idle-minutes",
        1..=525_600,
    )
}

fn parse_lifetime(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_SESSION_LIFETIME_HOURS",
        "--session-lifetime-hours",
        1..=8_760,
    )
}

fn parse_invitation_days(value: &str) -> Result<u64, String> {
    parse_number(value, "INSIGHT_INVITATION_DAYS", "--invitation-days", 1..=90)
}

fn parse_reset_minutes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_PASSWORD_RESET_MINUTES",
        "--password-reset-minutes",
        5..=10_080,
    )
}

fn parse_lock_after(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_SIGN_IN_LOCK_AFTER", "--sign-in-lock-after", 3..=1000)
}

fn parse_address_lock_after(value: &str) -> Result<u32, String> {
    parse_number(
        value,
        "INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER",
        "--sign-in-address-lock-after",
        3..=100_000,
    )
}

fn parse_lock_minutes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_SIGN_IN_LOCK_MINUTES",
        "--sign-in-lock-minutes",
        1..=1440,
    )
}

fn parse_audit_days(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_AUDIT_RETENTION_DAYS",
        "--audit-retention-days",
        1..=36_500,
    )
}
