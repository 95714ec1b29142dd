//! Outgoing mail: the SMTP server invitations and password resets go through, and
//! whom they come from.

use std::fmt;

use clap::Args;
use lettre::message::Mailbox;

use super::check::checked;

/// Invitations to a workspace and password-reset links go out by email, as plain text,
/// through your SMTP server.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Mail", verbatim_doc_comment)]
pub struct MailSettings {
    /// SMTP server for invitations and password resets, as a URL; unset, no mail is sent.
    ///
    /// - `smtps://USER:PASSWORD@HOST:465`: TLS from the first byte (port 465 when none is
    ///   given).
    ///
    /// - `smtp://USER:PASSWORD@HOST:587?tls=required`: STARTTLS, refusing to go on without it
    ///   (`?tls=opportunistic` goes on in the clear when the server offers no STARTTLS); port
    ///   587 when none is given.
    ///
    /// - `smtp://HOST:25`: no TLS at all, for a relay on the same machine or network (a
    ///   mailer that would send credentials this way to another host logs a warning).
    ///
    /// Characters such as `@`, `:`, `/` or `%` in the user or password are percent-encoded
    /// (`@` is `%40`). Server certificates are checked against the Mozilla roots built in.
    /// The password is never logged and never shown by `--help`, nor in an error (a bad URL
    /// is refused with a sentence that does not repeat it). Each message may take 15 seconds
    /// from connecting to the server's last answer.
    #[arg(long, env = "INSIGHT_SMTP_URL", hide_env_values = true, value_parser = checked(parse_smtp_url))]
    pub smtp_url: Option<SmtpUrl>,

    /// The sender of the service's mail, `Name <address>` or `address`.
    ///
    /// Set it to an address your SMTP server may send as, or the mail will be refused or
    /// taken for spam.
    #[arg(long, env = "INSIGHT_MAIL_FROM", default_value = "Insight <insight@localhost>", value_parser = checked(parse_mail_from))]
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

const SMTP_URL_FORMS: &str = "smtps://USER:PASSWORD@HOST:465, smtp://USER:PASSWORD@HOST:587?tls=required or \
                              smtp://HOST:25 (characters such as @ : / in USER or PASSWORD percent-encoded)";

/// Checks what lettre's `from_url` takes, saying what is wrong without repeating the
/// value: it may hold a password.
pub fn parse_smtp_url(value: &str) -> Result<SmtpUrl, String> {
    let bad = |why: &str| format!("must look like {SMTP_URL_FORMS}; this one {why}");
    // What is wrong with a value that is no URL at all goes without saying.
    let url = url::Url::parse(value.trim()).map_err(|_| format!("must look like {SMTP_URL_FORMS}"))?;
    let tls = url.query_pairs().find(|(key, _)| key == "tls").map(|(_, mode)| mode);
    match (url.scheme(), tls.as_deref()) {
        ("smtps", _) | ("smtp", None | Some("required" | "opportunistic")) => {}
        ("smtp", Some(_)) => return Err(bad("has a tls= other than required or opportunistic")),
        _ => return Err(bad("does not start with smtp:// or smtps://")),
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
    value
        .trim()
        .parse::<Mailbox>()
        .map_err(|_| "must be an address such as insight@example.org or \"Insight <insight@example.org>\"".into())
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
            assert!(error.starts_with("must look like smtps://"), "{error}");
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
        assert!(error.starts_with("must be an address"), "{error}");
    }
}
