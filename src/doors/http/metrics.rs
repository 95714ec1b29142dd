//! Request counts and latency by route, exported in Prometheus' text format.
//!
//! The recorder is process-global (the `metrics` facade allows one), so it is installed
//! once and shared by every app in the process.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

const LATENCY: &str = "http_request_duration_seconds";

fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let buckets = [
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
        ];
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(LATENCY.into()), &buckets)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Fails only if another recorder was installed first; ours then stays empty.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Installs the recorder (idempotent).
pub fn install() {
    handle();
}

pub fn render() -> String {
    record_heap();
    handle().render()
}

/// The heap memory the allocator has handed out and not had back, as
/// `insight_heap_in_use_bytes`: the memory the process's data takes now. Its resident
/// size is larger after a burst, because the allocator keeps what was freed for reuse.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn record_heap() {
    // SAFETY: mallinfo2 takes no arguments and only reads glibc's allocator statistics
    // (under the allocator's own locks), returning them by value.
    let info = unsafe { libc::mallinfo2() };
    metrics::gauge!("insight_heap_in_use_bytes").set((info.uordblks + info.hblkhd) as f64);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn record_heap() {}

/// Middleware: counts the request and times it, labelled by the matched route template
/// (never the raw path, which holds ids and tokens).
pub async fn track(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!(LATENCY, &labels[..2]).record(started.elapsed().as_secs_f64());
    response
}
