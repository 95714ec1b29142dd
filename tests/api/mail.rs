//! Outgoing mail through a real SMTP conversation: the mailer against the SMTP sink
//! (`tests/common/mail_sink.rs`), and against servers that are not there or say nothing.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use insight::Settings;
use insight::config::parse_smtp_url;
use insight::providers::mail::{Letter, Mailer};

use crate::support::mail_sink::MailSink;

const WAIT: Duration = Duration::from_secs(10);

fn mailer(url: &str) -> Mailer {
    let mut settings = Settings::for_database("sqlite://unused.db");
    settings.mail.smtp_url = Some(parse_smtp_url(url).expect("a good SMTP URL"));
    Mailer::from_settings(&settings.mail)
        .expect("a mailer")
        .expect("a URL makes a mailer")
}

#[tokio::test]
async fn no_smtp_url_means_no_mailer() {
    let settings = Settings::for_database("sqlite://unused.db");
    assert!(Mailer::from_settings(&settings.mail).unwrap().is_none());
}

#[tokio::test]
async fn an_invitation_and_a_password_reset_reach_the_server_as_written() {
    let mut sink = MailSink::start().await;
    let mailer = mailer(&sink.url(None));
    let expires = Utc.with_ymd_and_hms(2026, 11, 21, 14, 5, 0).unwrap();
    // Long enough that quoted-printable would fold it, and a name that is not ASCII:
    // the reader must still get both whole.
    let invite_url = format!("https://insight.example.org/invite/{}", "Zx9_-".repeat(12));
    let invitation = Letter::invitation(
        "new.member@example.org",
        "Études — café",
        "ada@example.org",
        "researcher",
        &invite_url,
        expires,
    );
    mailer
        .send_letter(invitation.clone())
        .await
        .expect("the invitation is sent");
    let received = sink.next(WAIT).await;
    assert_eq!(received.envelope_to, ["new.member@example.org"]);
    assert_eq!(received.to, "new.member@example.org");
    assert_eq!(received.envelope_from, "insight@localhost");
    assert_eq!(received.from, "insight@localhost");
    assert_eq!(
        received.subject,
        "ada@example.org invited you to \"Études — café\" on Insight"
    );
    assert!(received.text.contains(&invite_url), "{}", received.raw);
    assert!(received.text.contains("as a researcher"), "{}", received.text);
    assert!(
        received.text.contains("21 November 2026 at 14:05 UTC"),
        "{}",
        received.text
    );
    assert_eq!(received.text.trim_end(), invitation.text.trim_end());
    assert!(
        received.raw.lines().any(|line| line.starts_with("Message-ID: <")),
        "{}",
        received.raw
    );

    let reset_url = "https://insight.example.org/reset/Qm4t7yXc";
    mailer
        .send_letter(Letter::password_reset("ada@example.org", reset_url, expires))
        .await
        .expect("the reset is sent");
    let received = sink.next(WAIT).await;
    assert_eq!(received.envelope_to, ["ada@example.org"]);
    assert_eq!(received.subject, "Reset your Insight password");
    assert!(received.text.contains(reset_url), "{}", received.raw);
    assert!(sink.try_next().is_none(), "one message each");
}

#[tokio::test]
async fn the_mailer_signs_in_with_the_urls_user_and_percent_decoded_password() {
    let mut sink = MailSink::start_with_login("mailer@example.org", "s3cret:/@pass").await;
    let good = mailer(&sink.url(Some(("mailer%40example.org", "s3cret%3A%2F%40pass"))));
    good.send("ada@example.org", "Hello", "A line.\n".into())
        .await
        .expect("signed in and sent");
    let received = sink.next(WAIT).await;
    assert_eq!(received.user.as_deref(), Some("mailer@example.org"));
    assert_eq!(received.text.trim_end(), "A line.");

    let wrong = mailer(&sink.url(Some(("mailer%40example.org", "wrong%40horse"))));
    let error = format!(
        "{:#}",
        wrong
            .send("ada@example.org", "Hello", "A line.\n".into())
            .await
            .unwrap_err()
    );
    assert!(error.contains("535"), "the server's refusal is told: {error}");
    for secret in ["wrong%40horse", "wrong@horse"] {
        assert!(!error.contains(secret), "{error}");
    }
    assert!(sink.try_next().is_none());
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_without_the_password() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    for url in [
        format!("smtp://me:hunter2-%C3%A9t%C3%A9@{closed}"),
        format!("smtp://me:hunter2-%C3%A9t%C3%A9@{closed}?tls=required"),
        format!("smtps://me:hunter2-%C3%A9t%C3%A9@{closed}"),
    ] {
        let error = format!(
            "{:#}",
            mailer(&url)
                .send("ada@example.org", "Hello", "A line.\n".into())
                .await
                .unwrap_err()
        );
        assert!(error.contains(&closed.to_string()), "names the server: {error}");
        for secret in ["hunter2", "%C3%A9t%C3%A9", "été"] {
            assert!(!error.contains(secret), "{url}: {error}");
        }
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Accepts and keeps the connection without a word, as a wrong port behind a
    // firewall can.
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let mailer = mailer(&format!("smtp://me:hunter2@{addr}")).with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let error = mailer
        .send("ada@example.org", "Hello", "A line.\n".into())
        .await
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(error.contains("did not answer within 0.3 seconds"), "{error}");
    assert!(!error.contains("hunter2"), "{error}");
    silent.abort();
}

#[tokio::test]
async fn a_recipient_that_is_not_an_address_is_refused_before_connecting() {
    let mailer = mailer("smtp://127.0.0.1:9");
    let error = mailer
        .send("not an address", "Hello", "A line.\n".into())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("not an email address"), "{error}");
}
