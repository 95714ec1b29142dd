//! `insight serve` as a child process, for the benchmarks that measure the real binary:
//! started on a free port, its pipes drained for its whole life, its first user's token
//! read, and killed whatever path the benchmark leaves by. Each benchmark uses part of it.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};

const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Server log lines kept to explain a failed start or a failing run.
const LOG_TAIL_LINES: usize = 40;

/// Kills and reaps the child when dropped, so no server outlives the benchmark.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub struct ServerProcess {
    pub child: ChildGuard,
    pub base: String,
    pub token: String,
    pub log: Arc<Mutex<VecDeque<String>>>,
}

impl ServerProcess {
    /// Runs `command` (`insight serve --addr 127.0.0.1:0` with its settings, on an empty
    /// database) and waits for it to say where it listens and for the first user's token.
    pub async fn start(command: Command) -> anyhow::Result<Self> {
        let Spawned {
            mut child,
            log,
            mut lines_rx,
            token_rx,
        } = spawn(command)?;
        let waited = tokio::time::timeout(START_TIMEOUT, async {
            while let Some(line) = lines_rx.recv().await {
                if let Some(addr) = listening_addr(&line) {
                    return Some(addr);
                }
            }
            None
        })
        .await;
        let tail = || tail_text(&log);
        let addr = match waited {
            Ok(Some(addr)) => addr,
            Ok(None) => {
                let status = child.0.wait().map_or_else(|err| err.to_string(), |s| s.to_string());
                bail!("the server exited ({status}) before listening{}", tail());
            }
            Err(_) => bail!(
                "no \"Insight listening on http://...\" line within {} s{}",
                START_TIMEOUT.as_secs(),
                tail()
            ),
        };
        // The token is printed before the listening line, so it is there by now.
        let token = tokio::time::timeout(Duration::from_secs(5), token_rx)
            .await
            .ok()
            .and_then(Result::ok)
            .with_context(|| format!("no token on stdout: was the database not empty?{}", tail()))?;
        Ok(Self {
            child,
            base: format!("http://{addr}"),
            token,
            log,
        })
    }

    /// The server's last log lines, to explain a failure.
    pub fn log_tail(&self) -> String {
        let pid = self.child.0.id();
        format!("server (pid {pid}) log, last lines:{}", tail_text(&self.log))
    }

    /// The server's process id, as `/proc` names it.
    pub fn pid(&self) -> String {
        self.child.0.id().to_string()
    }
}

/// A server just started: its pipes read on threads for its whole life (a server blocked on a
/// full pipe would stall mid-benchmark), its log lines sent on and kept in a tail, and its
/// first line on stdout (the first user's token, on an empty database).
pub struct Spawned {
    pub child: ChildGuard,
    pub log: Arc<Mutex<VecDeque<String>>>,
    pub lines_rx: tokio::sync::mpsc::UnboundedReceiver<String>,
    pub token_rx: tokio::sync::oneshot::Receiver<String>,
}

pub fn spawn(mut command: Command) -> anyhow::Result<Spawned> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    let stdout = child.stdout.take().context("the child has no stdout pipe")?;
    let stderr = child.stderr.take().context("the child has no stderr pipe")?;
    let log = Arc::new(Mutex::new(VecDeque::new()));
    let (lines_tx, lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let tail = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            {
                let mut tail = tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if tail.len() == LOG_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line.clone());
            }
            // Nobody listens once the server is up; the tail still keeps the line.
            let _ = lines_tx.send(line);
        }
    });
    let (token_tx, token_rx) = tokio::sync::oneshot::channel::<String>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        if reader.read_line(&mut first).is_ok() && !first.trim().is_empty() {
            let _ = token_tx.send(first.trim().to_owned());
        }
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    Ok(Spawned {
        child: ChildGuard(child),
        log,
        lines_rx,
        token_rx,
    })
}

pub fn tail_text(log: &Mutex<VecDeque<String>>) -> String {
    let tail = log.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if tail.is_empty() {
        " (the server logged nothing)".into()
    } else {
        tail.iter().fold(String::new(), |text, line| text + "\n  " + line)
    }
}

/// The address in the server's "Insight listening on http://HOST:PORT" line, in text or
/// JSON log format, with or without colour codes.
pub fn listening_addr(line: &str) -> Option<SocketAddr> {
    const MARK: &str = "Insight listening on http://";
    let rest = &line[line.find(MARK)? + MARK.len()..];
    let addr: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '[' | ']'))
        .collect();
    addr.parse().ok()
}
