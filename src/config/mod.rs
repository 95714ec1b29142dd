//! Settings: every `INSIGHT_*` variable, with its default and its check, in groups owned
//! by the subsystem each configures (one file each); `Settings` gathers the groups.
//!
//! Each setting is declared once, as a `serve` flag with its variable (`env`), default,
//! check (`value_parser`, see `check.rs`) and doc comment; `serve --help` shows them under
//! the group's heading, and docs/settings.md is rendered from the same declarations (see
//! `reference.rs`). A bad value stops the start with a sentence naming the variable, the
//! flag and what the value must be, so an operator knows exactly what to fix.

use std::net::SocketAddr;

use clap::Args;

mod accounts;
mod check;
mod imports;
mod interviews;
mod jobs;
mod mail;
mod material;
mod model;
mod quotas;
#[cfg(test)]
mod reference;
mod search;
mod server;
mod speech;
mod sso;
mod storage;
mod webhooks;

pub use accounts::{AccountsSettings, Signup};
pub use imports::ImportSettings;
pub use interviews::InterviewsSettings;
pub use jobs::JobsSettings;
pub use mail::{MailSettings, SmtpUrl, parse_smtp_url};
pub use material::MaterialSettings;
pub use model::AiKind;
pub use model::ModelSettings;
pub use quotas::Quotas;
pub use search::SearchProvider;
pub use search::SearchSettings;
pub use server::ServerSettings;
pub use server::{ForwardedHeader, LogFormat, TrustedNetworks};
pub use speech::SpeechSettings;
pub use speech::SttProvider;
pub use sso::{AllowedDomains, SsoRole, SsoSettings};
pub use storage::{StorageSettings, StorageUrl, database_url};
pub use webhooks::RetrySchedule;
pub use webhooks::WebhooksSettings;

/// Every setting is an environment variable and a flag of `insight serve` (the flag wins
/// when both are given); `insight serve --help` lists them all. A bad value stops the start
/// with a sentence naming the variable, its flag and what it must be, so an operator knows
/// exactly what to fix. Secrets (`*_API_KEY`, `*_SECRET*`, `INSIGHT_SECRET_KEY`,
/// `INSIGHT_SMTP_URL`) are never logged and never shown by `--help`, nor repeated when
/// refused.
///
/// Whole numbers must lie in the range given with each; yes/no settings take `true`, `1`,
/// `yes`, `on` or `false`, `0`, `no`, `off` (or empty).
#[derive(Debug, Clone, Args)]
#[command(verbatim_doc_comment)]
pub struct Settings {
    #[command(flatten)]
    pub server: ServerSettings,

    #[command(flatten)]
    pub storage: StorageSettings,

    #[command(flatten)]
    pub material: MaterialSettings,

    #[command(flatten)]
    pub imports: ImportSettings,

    #[command(flatten)]
    pub speech: SpeechSettings,

    #[command(flatten)]
    pub jobs: JobsSettings,

    #[command(flatten)]
    pub model: ModelSettings,

    #[command(flatten)]
    pub search: SearchSettings,

    #[command(flatten)]
    pub webhooks: WebhooksSettings,

    #[command(flatten)]
    pub interviews: InterviewsSettings,

    #[command(flatten)]
    pub sso: SsoSettings,

    #[command(flatten)]
    pub mail: MailSettings,

    #[command(flatten)]
    pub quotas: Quotas,

    #[command(flatten)]
    pub accounts: AccountsSettings,
}

/// Report workers with the offline engine when `INSIGHT_REPORT_WORKERS` does not say.
const DEFAULT_OFFLINE_WORKERS: usize = 4;

impl Settings {
    /// Report workers of this instance: `INSIGHT_REPORT_WORKERS`; unset, twice the model's
    /// concurrency with a model (the model has work while some workers use the database),
    /// 4 with the offline engine (its work is this machine's CPU, and each copies its material).
    pub fn report_workers(&self) -> usize {
        self.jobs.report_workers.unwrap_or(match self.model.ai_kind() {
            Ok(AiKind::OpenAi) => 2 * self.model.llm_concurrency,
            _ => DEFAULT_OFFLINE_WORKERS,
        })
    }

    /// Settings for an instance that tests or embedders start on a given database: every
    /// other setting at its declared default (the environment is not read), a free port on
    /// loopback and a fresh data folder.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        let database_url = database_url.into();
        let command = <Self as Args>::augment_args(clap::Command::new("insight")).mut_args(|arg| arg.env(None));
        let matches = command
            .try_get_matches_from(["insight", "--database-url", database_url.as_str()])
            .unwrap_or_else(|error| panic!("settings for {database_url}: {error}"));
        let mut settings =
            <Self as clap::FromArgMatches>::from_arg_matches(&matches).expect("the defaults are valid settings");
        settings.server.addr = SocketAddr::from(([127, 0, 0, 1], 0));
        settings.storage.data_dir = std::env::temp_dir().join(format!("insight-data-{}", uuid::Uuid::new_v4()));
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_workers_default_to_twice_the_model_concurrency_or_four_offline() {
        let mut settings = Settings::for_database("sqlite://unused.db");
        settings.model.llm_concurrency = 16;
        assert_eq!(settings.report_workers(), 4, "offline");
        settings.model.llm_base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(settings.report_workers(), 32, "with a model");
        settings.jobs.report_workers = Some(0);
        assert_eq!(settings.report_workers(), 0, "as set");
    }
}

#[cfg(test)]
mod defaults {
    use super::*;

    #[test]
    fn settings_for_a_database_take_the_declared_defaults_not_the_environment() {
        let settings = Settings::for_database("sqlite://unused.db");
        assert_eq!(settings.storage.database_url, "sqlite://unused.db");
        assert_eq!(settings.server.addr.port(), 0);
        assert_eq!(settings.server.public_url, "http://127.0.0.1:8000");
        assert_eq!(settings.model.llm_model, "gpt-4o-mini");
        assert_eq!(settings.webhooks.webhooks_retry_schedule.0.len(), 7);
        assert_eq!(settings.quotas.webhook_endpoints, 20);
        assert_eq!(settings.speech.stt_provider, SttProvider::OpenAi);
        assert_eq!(settings.accounts.signup, Signup::Invite);
        assert_eq!(settings.accounts.session_idle_minutes, 4320);
        assert_eq!(settings.accounts.audit_retention_days, 365);
        assert_eq!(settings.sso.oidc_issuer, None);
        assert_eq!(settings.sso.oidc_client_id, None);
        assert!(settings.sso.oidc_client_secret.is_none());
        assert_eq!(settings.sso.oidc_allowed_domains, AllowedDomains::default());
        assert_eq!(settings.sso.oidc_workspace, None);
        assert_eq!(settings.sso.oidc_role, SsoRole::Viewer);
        assert!(settings.mail.smtp_url.is_none());
        assert_eq!(settings.mail.mail_from.to_string(), "Insight <insight@localhost>");
    }
}
