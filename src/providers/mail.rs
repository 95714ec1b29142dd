//! Mail the service sends (invitations, password resets) through the operator's SMTP
//! server, as plain text.
//!
//! The SMTP URL holds a password, and lettre's errors come from the network and from
//! the server's own replies, so every error this module returns has the password taken
//! out before anyone sees it.

use std::time::Duration;

use anyhow::anyhow;
use chrono::{DateTime, Utc};
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{MailSettings, SmtpUrl};

/// A sender or recipient, `Name <address>` or `address` (what `INSIGHT_MAIL_FROM` holds).
pub use lettre::message::Mailbox;

/// Longest a message may take from connecting to the server's last answer: a mail
/// server that hangs must not hold a request (or a job) for long.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(15);

/// Sends plain-text mail through one SMTP server.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// `host:port`, for messages.
    server: String,
    /// The password in the forms an error might carry it.
    secrets: Vec<String>,
    timeout: Duration,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("server", &self.server)
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// The mailer `INSIGHT_SMTP_URL` describes, or none when it is unset (the service
    /// then sends no mail, and says so where it would).
    pub fn from_settings(settings: &MailSettings) -> anyhow::Result<Option<Self>> {
        settings
            .smtp_url
            .as_ref()
            .map(|url| Self::new(url, settings.mail_from.clone()))
            .transpose()
    }

    /// A mailer for `url` (as lettre's `from_url` reads it), sending as `from`.
    pub fn new(url: &SmtpUrl, from: Mailbox) -> anyhow::Result<Self> {
        let secrets = url.password_forms();
        let parsed = url::Url::parse(url.expose()).map_err(|_| anyhow!("INSIGHT_SMTP_URL is not a URL"))?;
        let tls = parsed
            .query_pairs()
            .find(|(key, _)| key == "tls")
            .map(|(_, mode)| mode.into_owned());
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let port = parsed.port().unwrap_or(match (parsed.scheme(), tls.as_deref()) {
            ("smtps", _) => 465,
            (_, Some(_)) => 587,
            _ => 25,
        });
        let server = format!("{host}:{port}");
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())
            .map_err(|error| anyhow!("{}", redact(&format!("INSIGHT_SMTP_URL: {error}"), &secrets)))?
            .timeout(Some(SEND_TIMEOUT))
            .build();
        let loopback = host == "localhost"
            || host
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if parsed.scheme() == "smtp" && tls.is_none() && !secrets.is_empty() && !loopback {
            tracing::warn!(
                server,
                "INSIGHT_SMTP_URL sends the SMTP password without TLS; use smtps:// or ?tls=required"
            );
        }
        Ok(Self {
            transport,
            from,
            server,
            secrets,
            timeout: SEND_TIMEOUT,
        })
    }

    /// The same mailer with another limit on one message's time (tests of a silent server).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sends `text` as a plain-text message to `to`. An error says what went wrong and
    /// with which server, never with the SMTP password.
    pub async fn send(&self, to: &str, subject: &str, text: String) -> anyhow::Result<()> {
        let recipient: Mailbox = to
            .trim()
            .parse()
            .map_err(|error| anyhow!("cannot send mail to {to:?}: not an email address ({error})"))?;
        // lettre adds no Message-ID of its own, and mail without one looks like spam.
        let message_id = format!("<{}@{}>", uuid::Uuid::new_v4().simple(), self.from.email.domain());
        let message = Message::builder()
            .message_id(Some(message_id))
            .from(self.from.clone())
            .to(recipient)
            .subject(one_line(subject))
            .header(ContentType::TEXT_PLAIN)
            .body(text)
            .map_err(|error| anyhow!("cannot write a message to {to}: {error}"))?;
        match tokio::time::timeout(self.timeout, self.transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(anyhow!(
                "{}",
                redact(
                    &format!("cannot send mail to {to} through {}: {error}", self.server),
                    &self.secrets
                )
            )),
            Err(_) => Err(anyhow!(
                "cannot send mail to {to}: the mail server {} did not answer within {} seconds",
                self.server,
                self.timeout.as_secs_f64()
            )),
        }
    }

    /// Sends one of the service's [`Letter`]s.
    pub async fn send_letter(&self, letter: Letter) -> anyhow::Result<()> {
        self.send(&letter.to, &letter.subject, letter.text).await
    }
}

/// `text` with every form of the password replaced.
fn redact(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_owned(), |text, secret| {
        text.replace(secret.as_str(), "[redacted]")
    })
}

/// Names and subjects come from people: a line break in one must not start a new line
/// of the message (a forged header, or a paragraph the service did not write).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// When a link stops working, in words and in UTC (the reader's time zone is unknown).
fn expiry(at: DateTime<Utc>) -> String {
    at.format("%-d %B %Y at %H:%M UTC").to_string()
}

/// A message the service sends: whom to, its subject and its plain-text body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Letter {
    pub to: String,
    pub subject: String,
    pub text: String,
}

impl Letter {
    /// An invitation to join `workspace_name` with `role`, sent by `inviter_email`;
    /// `url` accepts it until `expires_at`.
    pub fn invitation(
        to: &str,
        workspace_name: &str,
        inviter_email: &str,
        role: &str,
        url: &str,
        expires_at: DateTime<Utc>,
    ) -> Self {
        let workspace = one_line(workspace_name);
        let inviter = one_line(inviter_email);
        let role = one_line(role);
        let article = if role.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let text = format!(
            "Hello,\n\
             \n\
             {inviter} has invited you to join the workspace \"{workspace}\" on Insight, as {article} {role}.\n\
             \n\
             To accept the invitation, open this link:\n\
             \n\
             {url}\n\
             \n\
             The link works until {expires}. If it has expired, ask {inviter} to invite you again.\n\
             \n\
             If you did not expect this invitation, you can ignore this email: nothing happens unless \
             you open the link.\n\
             \n\
             Insight\n",
            expires = expiry(expires_at),
        );
        Self {
            to: to.to_owned(),
            subject: format!("{inviter} invited you to \"{workspace}\" on Insight"),
            text,
        }
    }

    /// A link to choose a new password, working until `expires_at`.
    pub fn password_reset(to: &str, url: &str, expires_at: DateTime<Utc>) -> Self {
        let text = format!(
            "Hello,\n\
             \n\
             Someone, probably you, asked to reset the password of the Insight account for this \
             email address.\n\
             \n\
             To choose a new password, open this link:\n\
             \n\
             {url}\n\
             \n\
             The link works until {expires}. After that, you can ask for a new one on the sign-in page.\n\
             \n\
             If you did not ask for this, you can ignore this email: your password stays as it is. \
             If it keeps happening, tell the person who runs Insight for your team.\n\
             \n\
             Insight\n",
            expires = expiry(expires_at),
        );
        Self {
            to: to.to_owned(),
            subject: "Reset your Insight password".into(),
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, 14, 5, 0).unwrap()
    }

    #[test]
    fn an_invitation_names_who_where_as_what_the_link_and_its_end() {
        let letter = Letter::invitation(
            "new@example.org",
            "Growth\r\nBcc: everyone@example.org",
            "ada@example.org",
            "admin",
            "https://insight.example.org/invite/abc",
            at(),
        );
        assert_eq!(letter.to, "new@example.org");
        assert_eq!(
            letter.subject,
            "ada@example.org invited you to \"Growth  Bcc: everyone@example.org\" on Insight"
        );
        assert!(letter.text.contains("as an admin."), "{}", letter.text);
        assert!(letter.text.contains("\nhttps://insight.example.org/invite/abc\n"));
        assert!(letter.text.contains("until 21 November 2026 at 14:05 UTC"));
        assert!(letter.text.contains("ignore this email"));
        let viewer = Letter::invitation("n@example.org", "W", "a@example.org", "viewer", "u", at());
        assert!(viewer.text.contains("as a viewer."));
    }

    #[test]
    fn a_password_reset_has_the_link_its_end_and_what_to_do_if_it_was_not_you() {
        let letter = Letter::password_reset("ada@example.org", "https://i.example.org/reset/xyz", at());
        assert_eq!(letter.subject, "Reset your Insight password");
        assert!(letter.text.contains("\nhttps://i.example.org/reset/xyz\n"));
        assert!(letter.text.contains("until 21 November 2026 at 14:05 UTC"));
        assert!(letter.text.contains("If you did not ask for this"));
    }

    #[test]
    fn the_password_is_taken_out_of_any_text() {
        let secrets = vec!["p%40ss".to_owned(), "p@ss".to_owned()];
        assert_eq!(
            redact("auth p@ss failed for p%40ss", &secrets),
            "auth [redacted] failed for [redacted]"
        );
    }
}
