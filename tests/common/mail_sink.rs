//! An SMTP server for tests, on a free loopback port: mailin's SMTP sessions (the
//! engine of mailin-embedded, whose own TLS stack would bring a second crypto library
//! into every test build) behind a tokio listener, and each message read back with
//! mail-parser as a mail client would (encoded subjects and quoted-printable or base64
//! bodies decoded). Plain SMTP only, optionally requiring a login.
#![allow(dead_code)]

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mailin::{Action, AuthMechanism, Handler, Response, SessionBuilder};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// One message as the sink received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The envelope: `MAIL FROM` and each `RCPT TO`.
    pub envelope_from: String,
    pub envelope_to: Vec<String>,
    /// The headers' addresses, subject and the plain-text body, decoded (the body's
    /// line ends as `\n`, not SMTP's `\r\n`).
    pub from: String,
    pub to: String,
    pub subject: String,
    pub text: String,
    /// The user the client signed in as, when the sink asks for a login.
    pub user: Option<String>,
    /// The message as sent, headers and encoded body.
    pub raw: String,
}

/// A running sink; stops when dropped.
pub struct MailSink {
    pub addr: SocketAddr,
    received: mpsc::UnboundedReceiver<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MailSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MailSink {
    /// A sink that takes every message without a login.
    pub async fn start() -> Self {
        Self::serve(None).await
    }

    /// A sink that takes messages only after `AUTH PLAIN` or `AUTH LOGIN` with this
    /// user and password (over plain SMTP, as no real server should allow).
    pub async fn start_with_login(user: &str, password: &str) -> Self {
        Self::serve(Some((user.to_owned(), password.to_owned()))).await
    }

    async fn serve(login: Option<(String, String)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the mail sink");
        let addr = listener.local_addr().expect("the mail sink's address");
        let mut builder = SessionBuilder::new("sink.localhost");
        if login.is_some() {
            builder
                .enable_auth(AuthMechanism::Plain)
                .enable_auth(AuthMechanism::Login)
                .insecure_enable_plaintext_auth();
        }
        let (sender, received) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                let handler = Connection {
                    sender: sender.clone(),
                    login: login.clone(),
                    user: None,
                    from: String::new(),
                    to: Vec::new(),
                    data: Vec::new(),
                };
                tokio::spawn(session(stream, peer.ip(), builder.clone(), handler));
            }
        });
        Self { addr, received, task }
    }

    /// `smtp://127.0.0.1:PORT`, with `user:password@` when given.
    pub fn url(&self, login: Option<(&str, &str)>) -> String {
        match login {
            Some((user, password)) => format!("smtp://{user}:{password}@{}", self.addr),
            None => format!("smtp://{}", self.addr),
        }
    }

    /// The next message, waiting at most `within`; panics when none comes.
    pub async fn next(&mut self, within: Duration) -> Received {
        match tokio::time::timeout(within, self.received.recv()).await {
            Ok(Some(message)) => message,
            Ok(None) => panic!("the mail sink stopped"),
            Err(_) => panic!("no message reached the mail sink within {within:?}"),
        }
    }

    /// A message already received and not yet taken, if any.
    pub fn try_next(&mut self) -> Option<Received> {
        self.received.try_recv().ok()
    }
}

/// One SMTP connection: mailin decides every answer; this only carries lines.
async fn session(stream: TcpStream, peer: IpAddr, builder: SessionBuilder, handler: Connection) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let mut session = builder.build(peer, handler);
    let mut line = Vec::new();
    let greeting = session.greeting().buffer().expect("an SMTP answer");
    if writer.write_all(&greeting).await.is_err() {
        return;
    }
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let response = session.process(&line);
        let action = response.action.clone();
        if action == Action::NoReply {
            continue;
        }
        let bytes = response.buffer().expect("an SMTP answer");
        if writer.write_all(&bytes).await.is_err() || action != Action::Reply {
            // Close, or STARTTLS, which this sink never offers.
            return;
        }
    }
}

struct Connection {
    sender: mpsc::UnboundedSender<Received>,
    login: Option<(String, String)>,
    user: Option<String>,
    from: String,
    to: Vec<String>,
    data: Vec<u8>,
}

impl Connection {
    fn check_login(&mut self, user: &str, password: &str) -> Response {
        match &self.login {
            Some((expected_user, expected)) if expected_user == user && expected == password => {
                self.user = Some(user.to_owned());
                mailin::response::AUTH_OK
            }
            _ => mailin::response::INVALID_CREDENTIALS,
        }
    }
}

impl Handler for Connection {
    fn data_start(&mut self, _domain: &str, from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.from = from.to_owned();
        self.to = to.to_vec();
        self.data.clear();
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let parsed = mail_parser::MessageParser::default().parse(&self.data[..]);
        let Some(parsed) = parsed else {
            return mailin::response::TRANSACTION_FAILED;
        };
        let first_address = |address: Option<&mail_parser::Address<'_>>| {
            address
                .and_then(|address| address.first())
                .and_then(|address| address.address())
                .unwrap_or_default()
                .to_owned()
        };
        let message = Received {
            envelope_from: self.from.clone(),
            envelope_to: self.to.clone(),
            from: first_address(parsed.from()),
            to: first_address(parsed.to()),
            subject: parsed.subject().unwrap_or_default().to_owned(),
            text: parsed
                .body_text(0)
                .map(|text| text.replace("\r\n", "\n"))
                .unwrap_or_default(),
            user: self.user.clone(),
            raw: String::from_utf8_lossy(&self.data).into_owned(),
        };
        let _ = self.sender.send(message);
        mailin::response::OK
    }

    fn auth_plain(&mut self, _authorization_id: &str, user: &str, password: &str) -> Response {
        self.check_login(user, password)
    }

    fn auth_login(&mut self, user: &str, password: &str) -> Response {
        self.check_login(user, password)
    }
}
