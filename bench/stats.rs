//! Summaries of latency samples, shared by the benchmarks.
#![allow(dead_code)]

/// The `p`th percentile (0 to 100) of `sorted` samples, by the nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// p50, p99 and the largest of `samples`.
pub fn summary(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (
        percentile(&samples, 50.0),
        percentile(&samples, 99.0),
        samples.last().copied().unwrap_or(f64::NAN),
    )
}

/// The peak resident memory of process `pid`, in MB.
pub fn peak_rss_mb(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The resident memory of process `pid` now, in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmRSS:")
}

/// Of [`rss_mib`], the anonymous memory (the heap and stacks), in MiB: the rest is files
/// mapped into memory (the search index), pages the system may drop at will.
pub fn anon_mib(pid: u32) -> f64 {
    status_mib(pid, "RssAnon:")
}

fn status_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// The CPU time of process `pid` so far, in clock ticks (`/proc/<pid>/stat`: utime + stime).
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name in parentheses: state is the 3rd field, utime the 14th.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Waits until process `pid` uses under 5% of a core over a second (at most `patience`),
/// so that background work (tantivy's merges, the workers' tail) does not land in the
/// figures; how long it took.
pub async fn settle(pid: u32, patience: std::time::Duration) -> std::time::Duration {
    // USER_HZ, the unit of /proc's CPU times, is 100 on Linux.
    const IDLE_TICKS: u64 = 5;
    let started = std::time::Instant::now();
    while started.elapsed() < patience {
        let before = cpu_ticks(pid);
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        match (before, cpu_ticks(pid)) {
            (Some(before), Some(after)) if after.saturating_sub(before) > IDLE_TICKS => {}
            _ => break,
        }
    }
    started.elapsed()
}
