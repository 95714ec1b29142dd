//! The server loop: every accepted connection is served by hyper's HTTP/1.1 connection.
//!
//! Why not `axum::serve`: it serves each connection with hyper-util's "auto" builder,
//! which looks for HTTP/2 first and whose state costs more memory per connection than
//! hyper's HTTP/1.1 connection alone. A respondent keeps a connection open for the whole
//! interview, so that is memory per session. Insight speaks HTTP/1.1; TLS and HTTP/2 to
//! browsers are a reverse proxy's job.
//!
//! The loop does what `axum::serve` did besides: `TCP_NODELAY` on every connection, the
//! peer's address as `ConnectInfo`, accept errors that do not stop the server, and a
//! graceful stop that lets requests in flight finish. It adds what a server on the
//! internet needs: the client's address as `ClientAddr` (the peer's, or the one a
//! trusted proxy forwarded; see `client`), a limit on how long a request's head may take
//! to arrive (which also closes a keep-alive connection left idle that long), and a
//! floor on the pace of a request's body, so a client that trickles a byte at a time
//! cannot hold a connection and a task open for ever.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::ConnectInfo;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's head, and so how long an idle
/// keep-alive connection stays open.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long to wait before accepting again after the system refused a connection for
/// want of resources (no file descriptors left, say).
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Connections the system may hold for the server before it accepts them: more than the
/// standard 128, so that a class of respondents opening their links at the same moment
/// while the server is busy is not refused. The system caps it at `net.core.somaxconn`.
const BACKLOG: u32 = 1024;

/// A listening socket on `addr`, with room for a burst of connections.
pub fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // A restarted server binds again at once, as with std's and tokio's own `bind`.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// What the server asks of every connection besides the HTTP protocol itself.
#[derive(Debug, Clone)]
pub struct Wire {
    /// Whose forwarded client address to believe.
    pub proxies: Arc<super::peer::TrustedProxies>,
    /// The body's pace: in every window of this length after the handler starts reading
    /// it, at least `body_min_rate` bytes a second must arrive.
    pub body_window: Duration,
    pub body_min_rate: u64,
}

/// Serves `app` on `listener` until `shutdown` completes, then waits for the requests in
/// flight, for `SHUTDOWN_GRACE` at most.
pub async fn serve(listener: TcpListener, app: Router, wire: Wire, shutdown: impl Future<Output = ()>) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEAD_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Small writes (an SSE event, a short answer) go out at once, not after the
        // peer's delayed ACK.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let connection = http.serve_connection(TokioIo::new(stream), service(app.clone(), peer, wire.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, %peer, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    // A request that would keep the service up for long (a stream, an MCP call waiting for
    // its report) is cut after the grace; its work goes on after the restart.
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!(grace = ?SHUTDOWN_GRACE, "requests still open at shutdown were cut");
    }
}

/// How long a stopping service waits for the requests in flight.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(20);

/// The router for one connection's requests, each told the peer's and the client's
/// address, with its body paced.
fn service(
    app: Router,
    peer: SocketAddr,
    wire: Wire,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future: Send,
> + Clone {
    hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let client = wire.proxies.client(peer.ip(), request.headers());
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(super::peer::ClientAddr(client));
        let request = request.map(|body| {
            axum::body::Body::new(PacedBody {
                inner: body,
                window: wire.body_window,
                window_quota: wire.body_min_rate.saturating_mul(wire.body_window.as_secs().max(1)),
                window_bytes: 0,
                deadline: None,
            })
        });
        app.clone().oneshot(request)
    })
}

/// A request body that fails with [`BodyTooSlow`] when a window passes without its quota
/// of bytes. The first window opens when the body is first read, not when the request
/// arrived: time a handler spends before reading is not the client's.
struct PacedBody {
    inner: Incoming,
    window: Duration,
    window_quota: u64,
    window_bytes: u64,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// The error of a body that arrived more slowly than `INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND`.
#[derive(Debug)]
pub struct BodyTooSlow {
    pub window: Duration,
    pub quota: u64,
}

impl std::fmt::Display for BodyTooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body arrived too slowly: fewer than {} bytes in {} seconds",
            self.quota,
            self.window.as_secs()
        )
    }
}

impl std::error::Error for BodyTooSlow {}

impl Body for PacedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        // An empty body (most GETs) needs no timer.
        if this.deadline.is_none() && this.inner.is_end_stream() {
            return Pin::new(&mut this.inner).poll_frame(cx).map_err(Into::into);
        }
        let window = this.window;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(window)));
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.window_bytes += data.len() as u64;
                    if this.window_bytes >= this.window_quota {
                        this.window_bytes = 0;
                        deadline.as_mut().reset(tokio::time::Instant::now() + window);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTooSlow {
                    window,
                    quota: this.window_quota,
                })))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether a body's read failed because the client sent it too slowly.
pub fn too_slow<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e BodyTooSlow> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(slow) = error.downcast_ref::<BodyTooSlow>() {
            return Some(slow);
        }
        cause = error.source();
    }
    None
}

/// A failed accept: a connection the client gave up on is nothing to wait for; anything
/// else (out of file descriptors, say) is logged and waited out.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(%error, "accepting a connection failed; trying again in a second");
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of clients connecting while the server has not accepted any yet: every
    /// connection is held for it (with the standard backlog of 128, those beyond it wait a
    /// second to try again).
    #[tokio::test]
    async fn a_burst_of_connections_waits_to_be_accepted() -> std::io::Result<()> {
        // The system caps the backlog; on one that caps it below the burst there is
        // nothing to check.
        let cap = std::fs::read_to_string("/proc/sys/net/core/somaxconn").ok();
        if cap
            .and_then(|cap| cap.trim().parse::<u32>().ok())
            .is_some_and(|cap| cap < 400)
        {
            eprintln!("net.core.somaxconn is below 400; skipped");
            return Ok(());
        }
        let listener = listen("127.0.0.1:0".parse().expect("an address"))?;
        let addr = listener.local_addr()?;
        let connects = (0..400).map(|_| async move {
            tokio::time::timeout(Duration::from_millis(500), tokio::net::TcpStream::connect(addr)).await
        });
        let connected = futures_util::future::join_all(connects)
            .await
            .into_iter()
            .filter(|outcome| matches!(outcome, Ok(Ok(_))))
            .count();
        assert_eq!(connected, 400, "connections held before any was accepted");
        drop(listener);
        Ok(())
    }
}
