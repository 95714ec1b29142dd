//! Background workers over the durable job queue (see `store::jobs`). Each kind of job
//! is an implementation of [`Kind`], listed once in [`KINDS`]; a worker of a kind claims a
//! due job, keeps its lease alive while it runs, and then completes it, schedules a retry
//! with exponential backoff and jitter, or fails it with a reason. Workers wake at once
//! when this instance's store commits a job of their kind and otherwise poll, so work
//! queued by another instance, a retry coming due, or a job whose worker died is picked up
//! within a second or so.

mod personas;
mod records;
mod reports;
pub mod retention;
mod suggestions;
mod sweep;
mod themes;

pub use sweep::sweep;

use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Settings;
use crate::domain::job::JobKind;
use crate::store::{Job, Store};

const POLL: Duration = Duration::from_secs(1);
/// How often freed memory is handed back to the system.
const RETURN_MEMORY: Duration = Duration::from_secs(10);

/// What a job's runner reports when it could not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobError {
    /// Worth another attempt (a provider down, a timeout).
    Transient(String),
    /// Will not get better by trying again.
    Permanent(String),
    /// Something of the service's own (the file store) does not answer: a record's job
    /// waits for it without using up an attempt, however long it is down.
    Waiting(String),
}

impl From<anyhow::Error> for JobError {
    fn from(error: anyhow::Error) -> Self {
        Self::Transient(format!("{error:#}"))
    }
}

/// Everything runners need: the house's services.
pub(crate) use crate::services::Services as Context;

/// A kind of job: how it is claimed, run, retried and failed. The worker loop ([`work`])
/// is written once over it; a kind's own store calls (a record's or a report's state
/// moves with its job) are its overrides.
pub(crate) trait Kind: Send + Sync + 'static {
    /// The kind of the rows it claims.
    const KIND: JobKind;

    /// What the claim answers beside the job, for the runner (a report generation's
    /// report, read in the claim's write); the default claim answers its default.
    type Claimed: Default + Send + 'static;

    /// How many workers of this kind an instance runs.
    fn workers(settings: &Settings) -> usize;

    /// Claims the next due job of this kind for `lease`, if there is one.
    fn claim(
        store: &Store,
        lease: chrono::Duration,
    ) -> impl Future<Output = anyhow::Result<Option<(Job, Self::Claimed)>>> + Send {
        async move {
            let job = store.claim_job(Self::KIND, lease).await?;
            Ok(job.map(|job| (job, Self::Claimed::default())))
        }
    }

    /// Does the job's work; the runner completes the job itself when it succeeds.
    fn run(context: &Context, job: &Job, claimed: Self::Claimed) -> impl Future<Output = Result<(), JobError>> + Send;

    /// Puts the job back in the queue for `run_at` after a failed attempt, noting why;
    /// `false` when the job is no longer this attempt's.
    fn retry(
        store: &Store,
        job: &Job,
        run_at: DateTime<Utc>,
        reason: &str,
    ) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.retry_job(job, run_at, reason)
    }

    /// Gives up on the job with `reason`; `false` when it is no longer this attempt's.
    fn fail(store: &Store, job: &Job, reason: &str) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.fail_job(job, reason)
    }

    /// Puts the job to sleep until `run_at` without using up an attempt, when the
    /// runner waits for the file store ([`JobError::Waiting`]). `None`: this kind counts
    /// that as a transient failure.
    fn wait(
        _store: &Store,
        _job: &Job,
        _run_at: DateTime<Utc>,
    ) -> Option<impl Future<Output = anyhow::Result<bool>> + Send> {
        None::<std::future::Ready<anyhow::Result<bool>>>
    }
}

/// Every kind of job, each once: adding a kind is its [`Kind`] and a line here.
const KINDS: &[Registered] = &[
    Registered::of::<records::ProcessRecord>(),
    Registered::of::<personas::WritePersona>(),
    Registered::of::<reports::GenerateReport>(),
    Registered::of::<suggestions::SuggestHighlights>(),
    Registered::of::<themes::ProposeThemes>(),
];

/// A kind in [`KINDS`], as `Workers::start` starts it.
struct Registered {
    kind: JobKind,
    workers: fn(&Settings) -> usize,
    spawn: fn(Context, watch::Receiver<bool>) -> JoinHandle<()>,
}

impl Registered {
    const fn of<K: Kind>() -> Self {
        Self {
            kind: K::KIND,
            workers: K::workers,
            spawn: spawn::<K>,
        }
    }
}

fn spawn<K: Kind>(context: Context, stopped: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(work::<K>(context, stopped))
}

/// Personas, suggestions and themes are AI work like reports: `INSIGHT_REPORT_WORKERS=0`
/// stops them all; otherwise one worker each.
fn one_unless_reports_stopped(settings: &Settings) -> usize {
    usize::from(settings.report_workers() > 0)
}

/// The running workers.
pub struct Workers {
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    /// Let finish its round of deliveries on stop, so none stays claimed by an instance
    /// that is gone (another instance would wait for the lease to run out).
    dispatcher: Option<JoinHandle<()>>,
}

impl Workers {
    /// Starts the workers of this instance.
    pub fn start(context: Context) -> Self {
        let (shutdown, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        for registered in KINDS {
            let workers = (registered.workers)(&context.settings);
            tracing::debug!(kind = %registered.kind, workers, "starting the workers of a kind of job");
            for _ in 0..workers {
                tasks.push((registered.spawn)(context.clone(), stopped.clone()));
            }
        }
        tasks.push(tokio::spawn(watch_interviews(context.store.clone(), stopped.clone())));
        tasks.push(tokio::spawn(context.search.clone().run(stopped.clone())));
        let dispatcher = match crate::app::webhooks::Dispatcher::new(
            context.store.clone(),
            context.secret.clone(),
            context.settings.clone(),
        ) {
            Ok(dispatcher) => Some(tokio::spawn(dispatcher.run(stopped.clone()))),
            Err(error) => {
                tracing::error!(%error, "cannot start sending webhooks");
                None
            }
        };
        let mut workers = Self {
            shutdown,
            tasks,
            dispatcher,
        };
        workers.chores(&context);
        workers
    }

    /// The house's periodic chores: the audit log keeps `INSIGHT_AUDIT_RETENTION_DAYS`,
    /// files no record owns are swept, and records and recordings past a workspace's
    /// retention go.
    fn chores(&mut self, context: &Context) {
        let store = context.store.clone();
        let keep = chrono::Duration::days(context.settings.accounts.audit_retention_days as i64);
        self.every(Duration::from_secs(3600), move || {
            let store = store.clone();
            async move {
                if let Err(error) = store.prune_audit(crate::domain::now() - keep).await {
                    tracing::warn!(error = %format!("{error:#}"), "pruning the audit log failed; trying again later");
                }
            }
        });
        let (store, data_dir, files) = (
            context.store.clone(),
            context.settings.storage.data_dir.clone(),
            context.files.clone(),
        );
        self.every(sweep::EVERY, move || {
            let (store, data_dir, files) = (store.clone(), data_dir.clone(), files.clone());
            async move {
                sweep(&store, &data_dir, &files).await;
            }
        });
        // glibc keeps the memory freed after a bulk load or a report in its arenas (RSS
        // three to four times the idle figure with little of it in use); trimming hands
        // the free pages back to the system.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        self.every(RETURN_MEMORY, || async {
            // SAFETY: malloc_trim only releases free memory of glibc's own heaps.
            let _ = tokio::task::spawn_blocking(|| unsafe { libc::malloc_trim(0) }).await;
        });
        let (store, files) = (context.store.clone(), context.files.clone());
        self.every(Duration::from_secs(3600), move || {
            let (store, files) = (store.clone(), files.clone());
            async move {
                if let Err(error) = retention::sweep(&store, &files).await {
                    tracing::warn!(error = %format!("{error:#}"), "applying the retention settings failed; trying again later");
                }
            }
        });
    }

    /// Runs `chore` now and every `period` until the workers stop.
    pub fn every<Chore, Done>(&mut self, period: Duration, mut chore: Chore)
    where
        Chore: FnMut() -> Done + Send + 'static,
        Done: std::future::Future<Output = ()> + Send + 'static,
    {
        let mut stopped = self.shutdown.subscribe();
        self.tasks.push(tokio::spawn(async move {
            loop {
                chore().await;
                tokio::select! {
                    () = tokio::time::sleep(period) => {}
                    _ = stopped.changed() => return,
                }
            }
        }));
    }

    /// Stops taking jobs; a job in progress is left to its lease (it is taken over later).
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        if let Some(dispatcher) = self.dispatcher {
            let patience = DISPATCHER_PATIENCE;
            if tokio::time::timeout(patience, dispatcher).await.is_err() {
                tracing::warn!("webhook deliveries in flight did not finish; their leases will run out");
            }
        }
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

/// How long a stop waits for the deliveries in flight (a receiver's answer is waited
/// for at most `INSIGHT_WEBHOOKS_TIMEOUT_SECONDS`).
const DISPATCHER_PATIENCE: Duration = Duration::from_secs(20);

/// How often interviews are checked for a time that ran out.
const INTERVIEW_WATCH: Duration = Duration::from_secs(5);

/// Closes interviews whose respondent went away when their time runs out (their
/// transcript becomes a record), and marks links that expired unused.
async fn watch_interviews(store: Store, mut stopped: watch::Receiver<bool>) {
    loop {
        if let Err(error) = crate::app::interview::close_overdue(&store).await {
            tracing::warn!(error = %format!("{error:#}"), "closing overdue interviews failed; trying again");
        }
        tokio::select! {
            () = tokio::time::sleep(INTERVIEW_WATCH) => {}
            _ = stopped.changed() => return,
        }
    }
}

/// One worker of kind `K`: claims its due jobs one at a time until the workers stop.
async fn work<K: Kind>(context: Context, mut stopped: watch::Receiver<bool>) {
    let kind = K::KIND;
    let lease = chrono::Duration::seconds(i64::try_from(context.settings.jobs.job_lease_seconds).unwrap_or(60));
    loop {
        if *stopped.borrow() {
            return;
        }
        match K::claim(&context.store, lease).await {
            Ok(Some((job, claimed))) => run::<K>(&context, job, claimed, lease).await,
            Ok(None) => {
                tokio::select! {
                    () = context.store.job_committed(kind) => {}
                    () = tokio::time::sleep(POLL) => {}
                    _ = stopped.changed() => return,
                }
            }
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), %kind, "claiming a job failed");
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// Runs one job with its heartbeat, then records how it went.
async fn run<K: Kind>(context: &Context, job: Job, claimed: K::Claimed, lease: chrono::Duration) {
    let heartbeat = {
        let store = context.store.clone();
        let job = job.clone();
        let every = (lease / 3)
            .to_std()
            .unwrap_or(Duration::from_secs(20))
            .max(Duration::from_millis(200));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match store.extend_job(&job, lease).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(error) => {
                        tracing::warn!(job = %job.id, error = %format!("{error:#}"), "extending a job's lease failed; trying again")
                    }
                }
            }
        })
    };
    let max_attempts = i32::try_from(context.settings.jobs.job_max_attempts).unwrap_or(5);
    let outcome = if job.attempts > max_attempts {
        // Claimed more often than allowed: earlier attempts died with their process.
        Err(JobError::Permanent(format!(
            "Gave up after {} attempts; the service stopped while working on it each time.",
            job.attempts - 1
        )))
    } else {
        K::run(context, &job, claimed).await
    };
    heartbeat.abort();
    let store = &context.store;
    let base_seconds = context.settings.jobs.job_retry_base_seconds;
    let waiting = match &outcome {
        Err(JobError::Waiting(reason)) => waits::<K>(store, &job, base_seconds, reason),
        _ => None,
    };
    let (result, settled) = match (outcome, waiting) {
        (Ok(()), _) => ("done", Ok(true)),
        (Err(_), Some(waiting)) => ("waiting", waiting.await),
        (Err(JobError::Transient(reason) | JobError::Waiting(reason)), None) if job.attempts < max_attempts => {
            let delay = backoff(base_seconds, job.attempts);
            tracing::warn!(job = %job.id, kind = %job.kind, attempt = job.attempts, %reason, retry_in = ?delay, "job failed; will retry");
            let run_at = crate::domain::now() + chrono::Duration::from_std(delay).unwrap_or_default();
            ("retried", K::retry(store, &job, run_at, &reason).await)
        }
        (Err(JobError::Transient(reason) | JobError::Permanent(reason) | JobError::Waiting(reason)), None) => {
            tracing::warn!(job = %job.id, kind = %job.kind, attempt = job.attempts, %reason, "job failed for good");
            ("failed", K::fail(store, &job, &reason).await)
        }
    };
    metrics::counter!("insight_jobs_total", "kind" => job.kind.as_str(), "result" => result).increment(1);
    match settled {
        Ok(true) => {}
        // Its lease ran out and another worker has it now: that attempt's outcome counts.
        Ok(false) => tracing::warn!(job = %job.id, "a job's lease was lost before it finished; its outcome is dropped"),
        // The lease runs out and another attempt takes the job: nothing is lost.
        Err(error) => tracing::error!(job = %job.id, error = %format!("{error:#}"), "recording a job's outcome failed"),
    }
}

/// The sleep of a job that waits for the file store, if its kind waits (see
/// [`Kind::wait`]): one base delay, whatever its attempt.
fn waits<'a, K: Kind>(
    store: &'a Store,
    job: &'a Job,
    base_seconds: f64,
    reason: &str,
) -> Option<impl Future<Output = anyhow::Result<bool>> + Send + use<'a, K>> {
    let delay = backoff(base_seconds, 1);
    let run_at = crate::domain::now() + chrono::Duration::from_std(delay).unwrap_or_default();
    let waiting = K::wait(store, job, run_at)?;
    tracing::warn!(job = %job.id, kind = %job.kind, %reason, retry_in = ?delay, "job waits for the file store");
    Some(waiting)
}

/// `base * 2^(attempt-1)`, times a random factor from 0.5 to 1.5, at most a day.
fn backoff(base_seconds: f64, attempt: i32) -> Duration {
    let exponent = attempt.saturating_sub(1).clamp(0, 30);
    let jitter = rand::rng().random_range(0.5..1.5);
    Duration::from_secs_f64((base_seconds * f64::from(1u32 << exponent) * jitter).min(86_400.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for attempt in 1..=6 {
            let nominal = 10.0 * f64::from(1u32 << (attempt - 1));
            let delay = backoff(10.0, attempt).as_secs_f64();
            assert!(
                delay >= nominal * 0.5 && delay <= nominal * 1.5,
                "attempt {attempt}: {delay}"
            );
        }
        assert!(backoff(10.0, 40).as_secs_f64() <= 86_400.0);
        assert_eq!(backoff(0.0, 3), Duration::ZERO);
    }

    #[test]
    fn every_kind_of_job_is_registered_once() {
        for kind in JobKind::ALL {
            let registered = KINDS.iter().filter(|registered| registered.kind == kind).count();
            assert_eq!(registered, 1, "{kind}");
        }
        assert_eq!(KINDS.len(), JobKind::ALL.len());
    }

    #[test]
    fn records_always_have_a_worker_and_the_ai_work_stops_with_the_reports() {
        let workers = |settings: &Settings, kind: JobKind| {
            let registered = KINDS.iter().find(|registered| registered.kind == kind);
            (registered.expect("registered").workers)(settings)
        };
        let mut settings = Settings::for_database("sqlite://unused.db");
        settings.jobs.report_workers = Some(3);
        assert_eq!(workers(&settings, JobKind::ProcessRecord), 1);
        assert_eq!(workers(&settings, JobKind::GenerateReport), 3);
        for kind in [
            JobKind::WritePersona,
            JobKind::SuggestHighlights,
            JobKind::ProposeThemes,
        ] {
            assert_eq!(workers(&settings, kind), 1, "{kind}");
        }
        settings.jobs.report_workers = Some(0);
        assert_eq!(workers(&settings, JobKind::ProcessRecord), 1);
        for kind in [
            JobKind::GenerateReport,
            JobKind::WritePersona,
            JobKind::SuggestHighlights,
            JobKind::ProposeThemes,
        ] {
            assert_eq!(workers(&settings, kind), 0, "{kind}");
        }
    }
}

#[cfg(test)]
mod chores {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_chore_runs_at_once_then_every_period_until_the_workers_stop() {
        let (shutdown, _) = watch::channel(false);
        let mut workers = Workers {
            shutdown,
            tasks: Vec::new(),
            dispatcher: None,
        };
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        workers.every(Duration::from_millis(20), move || {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::ready(())
        });
        tokio::time::sleep(Duration::from_millis(150)).await;
        let seen = runs.load(Ordering::SeqCst);
        assert!(seen >= 3, "it ran at once and again: {seen}");
        workers.stop().await;
        let stopped = runs.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(runs.load(Ordering::SeqCst), stopped, "it does not run after the stop");
    }
}
