//! Outgoing mail: the SMTP server invitations and password resets go through, and
//! whom they come from.

use std::fmt;

use clap::Args;
use lettre::message::Mailbox;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Mail")]
pub struct MailSettings {
    /// SMTP server for invitations and password resets: `smtps://USER:PASSWORD@HOST:465`
    /// (TLS), `smtp://USER:PASSWORD@HOST:587?tls=required` (STARTTLS) or `smtp://HOST:25`
    /// (no TLS); unset, no mail is sent [env: INSIGHT_SMTP_URL].
    #[arg(long, env = "INSIGHT_SMTP_URL", hide_env_values = true, value_parser = SmtpUrlParser)]
    pub smtp_url: Option<SmtpUrl>,

    /// The sender of the service's mail, `Name <address>` or `address` [env: INSIGHT_MAIL_FROM].
    #[arg(long, env = "INSIGHT_MAIL_FROM", default_value = "Insight <insight@localhost>", value_parser = parse_mail_from)]
    pub mail_from: Mailbox,
}

/// An SMTP server's URL as the operator gave it, password included; shown only as
/// [`redacted`](Self::redacted).
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpUrl(String);

impl SmtpUrl {
    /// The URL for the SMTP client only: never log it or put it in an error.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The password as written in the URL (percent-encoded) and as sent, for
    /// removing it from any text that might echo it.
    pub fn password_forms(&self) -> Vec<String> {
        let Some(written) = url::Url::parse(&self.0)
            .ok()
            .and_then(|url| url.password().map(str::to_owned))
        else {
            return Vec::new();
        };
        let decoded = percent_encoding::percent_decode_str(&written)
            .decode_utf8_lossy()
            .into_owned();
        let mut forms = vec![written, decoded];
        forms.dedup();
        forms.retain(|form| !form.is_empty());
        forms
    }

    /// Scheme, user, host, port and TLS mode, with the password replaced.
    pub fn redacted(&self) -> String {
        match url::Url::parse(&self.0) {
            Ok(mut url) => {
                if url.password().is_none() {
                    return url.to_string();
                }
                if url.set_password(Some("REDACTED")).is_err() {
                    return "[an SMTP URL with a password]".into();
                }
                // Brackets would be percent-encoded in a password.
                url.to_string().replacen(":REDACTED@", ":[redacted]@", 1)
            }
            Err(_) => "[an SMTP URL that does not parse]".into(),
        }
    }
}

impl fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SmtpUrl({})", self.redacted())
    }
}

impl std::str::FromStr for SmtpUrl {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        parse_smtp_url(value)
    }
}

/// [`parse_smtp_url`] for clap, whose own message for a refused value quotes the value,
/// and this one holds a password.
#[derive(Clone)]
struct SmtpUrlParser;

impl clap::builder::TypedValueParser for SmtpUrlParser {
    type Value = SmtpUrl;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<SmtpUrl, clap::Error> {
        value
            .to_str()
            .ok_or_else(|| "INSIGHT_SMTP_URL (--smtp-url) is not UTF-8".to_owned())
            .and_then(parse_smtp_url)
            .map_err(|message| {
                clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{message}\n")).with_cmd(cmd)
            })
    }
}

const SMTP_URL_FORMS: &str = "smtps://USER:PASSWORD@HOST:465, smtp://USER:PASSWORD@HOST:587?tls=required or \
                              smtp://HOST:25 (characters such as @ : / in USER or PASSWORD percent-encoded)";

/// Checks what lettre's `from_url` takes, without repeating the value: it may hold a
/// password.
pub fn parse_smtp_url(value: &str) -> Result<SmtpUrl, String> {
    let bad = |why: &str| format!("INSIGHT_SMTP_URL (--smtp-url) {why}; it must look like {SMTP_URL_FORMS}");
    let url = url::Url::parse(value.trim()).map_err(|_| bad("is not a URL"))?;
    let tls = url.query_pairs().find(|(key, _)| key == "tls").map(|(_, mode)| mode);
    match (url.scheme(), tls.as_deref()) {
        ("smtps", _) | ("smtp", None | Some("required" | "opportunistic")) => {}
        ("smtp", Some(_)) => return Err(bad("has a tls= other than required or opportunistic")),
        _ => return Err(bad("must start with smtp:// or smtps://")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("names no host"));
    }
    for part in [url.username(), url.password().unwrap_or_default()] {
        if percent_encoding::percent_decode_str(part).decode_utf8().is_err() {
            return Err(bad("has a user or password that is not UTF-8 once percent-decoded"));
        }
    }
    if !url.username().is_empty() && url.password().is_none() {
        return Err(bad("has a user but no password"));
    }
    Ok(SmtpUrl(value.trim().to_owned()))
}

fn parse_mail_from(value: &str) -> Result<Mailbox, String> {
    value.trim().parse::<Mailbox>().map_err(|error| {
        format!(
            "INSIGHT_MAIL_FROM (--mail-from) must be an address such as insight@example.org or \
             \"Insight <insight@example.org>\", not {value:?} ({error})"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_urls_lettre_takes_pass_and_others_are_named() {
        for good in [
            "smtp://127.0.0.1:2525",
            "smtp://mail.example.org",
            "smtps://me%40example.org:p%40ss@smtp.example.org:465",
            "smtp://me:secret@smtp.example.org:587?tls=required",
            "smtp://me:secret@smtp.example.org:587?tls=opportunistic",
        ] {
            assert!(parse_smtp_url(good).is_ok(), "{good}");
        }
        for bad in [
            "mail.example.org",
            "http://mail.example.org",
            "smtp://me:secret@mail.example.org?tls=yes",
            "smtp://me@mail.example.org",
            "smtp://:secret@",
        ] {
            let error = parse_smtp_url(bad).unwrap_err();
            assert!(error.starts_with("INSIGHT_SMTP_URL (--smtp-url) "), "{error}");
            assert!(!error.contains("secret"), "{error}");
        }
    }

    #[test]
    fn the_password_never_prints() {
        let url = parse_smtp_url("smtp://me:s%3Acret@smtp.example.org:587?tls=required").unwrap();
        assert_eq!(
            format!("{url:?}"),
            "SmtpUrl(smtp://me:[redacted]@smtp.example.org:587?tls=required)"
        );
        assert_eq!(url.password_forms(), ["s%3Acret", "s:cret"]);
        assert!(parse_smtp_url("smtp://relay:25").unwrap().password_forms().is_empty());
    }

    #[test]
    fn the_sender_is_a_mailbox() {
        let from = parse_mail_from("Insight <insight@localhost>").unwrap();
        assert_eq!(from.email.to_string(), "insight@localhost");
        assert_eq!(from.name.as_deref(), Some("Insight"));
        assert!(parse_mail_from("research@example.org").is_ok());
        let error = parse_mail_from("Insight").unwrap_err();
        assert!(error.starts_with("INSIGHT_MAIL_FROM (--mail-from) "), "{error}");
    }
}
