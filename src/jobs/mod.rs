//! Background workers over the durable job queue (see `store::jobs`). Each kind of job
//! has its runner; a worker claims a due job, keeps its lease alive while it runs, and
//! then completes it, schedules a retry with exponential backoff and jitter, or fails it
//! with a reason. Workers wake at once when this instance queues work and otherwise poll,
//! so work queued by another instance, a retry coming due, or a job whose worker died
//! is picked up within a second or so.

mod personas;
mod records;
mod reports;
mod sweep;

pub use sweep::sweep;

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::ai::Engine;
use crate::config::Settings;
use crate::domain::persona::PERSONA_JOB;
use crate::domain::record::PROCESS_JOB;
use crate::domain::report::GENERATE_JOB;
use crate::ingest::stt::SpeechToText;
use crate::store::{Job, ReportWork, Store};

const POLL: Duration = Duration::from_secs(1);

/// What a job's runner reports when it could not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobError {
    /// Worth another attempt (a provider down, a timeout).
    Transient(String),
    /// Will not get better by trying again.
    Permanent(String),
}

impl From<anyhow::Error> for JobError {
    fn from(error: anyhow::Error) -> Self {
        Self::Transient(format!("{error:#}"))
    }
}

/// Everything runners need.
#[derive(Clone)]
pub struct Context {
    pub store: Store,
    pub settings: Arc<Settings>,
    pub stt: Option<SpeechToText>,
    pub engine: Engine,
    /// The instance key (webhook secrets are derived from it).
    pub secret: Arc<crate::secret::SecretKey>,
}

/// Tells this instance's workers that a job was queued: one idle worker of the job's
/// kind looks now; the others sleep on. (Waking every idle worker for every job sent a
/// herd of claims that found nothing, and on SQLite each claim is a write through the
/// single writer.) A job queued while every worker of its kind is busy is taken by the
/// first to finish; one queued by another instance, within a poll.
#[derive(Debug, Default)]
pub struct Wake {
    records: Notify,
    personas: Notify,
    reports: Notify,
}

impl Wake {
    /// A job of `kind` was queued.
    pub fn queued(&self, kind: &str) {
        if let Some(notify) = self.of(kind) {
            notify.notify_one();
        }
    }

    fn of(&self, kind: &str) -> Option<&Notify> {
        match kind {
            PROCESS_JOB => Some(&self.records),
            PERSONA_JOB => Some(&self.personas),
            GENERATE_JOB => Some(&self.reports),
            _ => None,
        }
    }
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
    pub fn start(context: Context, wake: Arc<Wake>) -> Self {
        let (shutdown, stopped) = watch::channel(false);
        let mut tasks = vec![tokio::spawn(work(
            context.clone(),
            PROCESS_JOB,
            wake.clone(),
            stopped.clone(),
        ))];
        // Personas are AI work like reports: `INSIGHT_REPORT_WORKERS=0` stops both.
        if context.settings.report_workers() > 0 {
            tasks.push(tokio::spawn(work(
                context.clone(),
                PERSONA_JOB,
                wake.clone(),
                stopped.clone(),
            )));
        }
        tasks.push(tokio::spawn(watch_interviews(context.store.clone(), stopped.clone())));
        let dispatcher = match crate::webhooks::Dispatcher::new(
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
        for _ in 0..context.settings.report_workers() {
            tasks.push(tokio::spawn(work(
                context.clone(),
                GENERATE_JOB,
                wake.clone(),
                stopped.clone(),
            )));
        }
        Self {
            shutdown,
            tasks,
            dispatcher,
        }
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
        if let Err(error) = crate::interview::close_overdue(&store).await {
            tracing::warn!(error = %format!("{error:#}"), "closing overdue interviews failed; trying again");
        }
        tokio::select! {
            () = tokio::time::sleep(INTERVIEW_WATCH) => {}
            _ = stopped.changed() => return,
        }
    }
}

async fn work(context: Context, kind: &'static str, wake: Arc<Wake>, mut stopped: watch::Receiver<bool>) {
    let Some(wake) = wake.of(kind) else {
        tracing::error!(kind, "no worker knows jobs of this kind");
        return;
    };
    let lease = chrono::Duration::seconds(i64::try_from(context.settings.job_lease_seconds).unwrap_or(60));
    loop {
        if *stopped.borrow() {
            return;
        }
        let claimed = if kind == GENERATE_JOB {
            context.store.claim_generation(lease).await
        } else {
            context
                .store
                .claim_job(kind, lease)
                .await
                .map(|job| job.map(|job| (job, None)))
        };
        match claimed {
            Ok(Some((job, report))) => run(&context, job, report, lease).await,
            Ok(None) => {
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep(POLL) => {}
                    _ = stopped.changed() => return,
                }
            }
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), kind, "claiming a job failed");
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// Runs one job with its heartbeat, then records how it went. A report generation comes
/// with its report when the claim started its attempt.
async fn run(context: &Context, job: Job, report: Option<ReportWork>, lease: chrono::Duration) {
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
    let max_attempts = i32::try_from(context.settings.job_max_attempts).unwrap_or(5);
    let outcome = match job.kind.as_str() {
        // Claimed more often than allowed: earlier attempts died with their process.
        _ if job.attempts > max_attempts => Err(JobError::Permanent(format!(
            "Gave up after {} attempts; the service stopped while working on it each time.",
            job.attempts - 1
        ))),
        PROCESS_JOB => records::process(context, &job).await,
        GENERATE_JOB => reports::generate(context, &job, report).await,
        PERSONA_JOB => personas::write(context, &job).await,
        other => Err(JobError::Permanent(format!("no worker knows jobs of kind {other}"))),
    };
    heartbeat.abort();
    let record_job = job.kind == PROCESS_JOB;
    let result = match &outcome {
        Ok(()) => "done",
        Err(JobError::Transient(_)) if job.attempts < max_attempts => "retried",
        Err(_) => "failed",
    };
    let settled = match outcome {
        Ok(()) => Ok(true),
        Err(JobError::Transient(reason)) if job.attempts < max_attempts => {
            let delay = backoff(context.settings.job_retry_base_seconds, job.attempts);
            tracing::warn!(job = %job.id, kind = %job.kind, attempt = job.attempts, %reason, retry_in = ?delay, "job failed; will retry");
            let run_at = crate::domain::now() + chrono::Duration::from_std(delay).unwrap_or_default();
            if record_job {
                context.store.requeue_record_job(&job, run_at, &reason).await
            } else if job.kind == GENERATE_JOB {
                context.store.requeue_generation(&job, run_at, &reason).await
            } else {
                context.store.retry_job(&job, run_at, &reason).await
            }
        }
        Err(JobError::Transient(reason) | JobError::Permanent(reason)) => {
            tracing::warn!(job = %job.id, kind = %job.kind, attempt = job.attempts, %reason, "job failed for good");
            if record_job {
                context.store.fail_record_job(&job, &reason).await
            } else if job.kind == GENERATE_JOB {
                context.store.fail_generation(&job, &reason).await
            } else {
                context.store.fail_job(&job, &reason).await
            }
        }
    };
    metrics::counter!("insight_jobs_total", "kind" => job.kind.clone(), "result" => result).increment(1);
    match settled {
        Ok(true) => {}
        // Its lease ran out and another worker has it now: that attempt's outcome counts.
        Ok(false) => tracing::warn!(job = %job.id, "a job's lease was lost before it finished; its outcome is dropped"),
        // The lease runs out and another attempt takes the job: nothing is lost.
        Err(error) => tracing::error!(job = %job.id, error = %format!("{error:#}"), "recording a job's outcome failed"),
    }
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

    #[tokio::test]
    async fn a_queued_job_wakes_one_worker_of_its_kind() {
        let wake = Wake::default();
        let waits = std::time::Duration::from_millis(20);
        let (reports, records) = (wake.of(GENERATE_JOB).unwrap(), wake.of(PROCESS_JOB).unwrap());
        let (first, second, record) = (reports.notified(), reports.notified(), records.notified());
        tokio::pin!(first, second, record);
        // Waiting, as idle workers do.
        for waiter in [first.as_mut(), second.as_mut(), record.as_mut()] {
            waiter.enable();
        }
        wake.queued(GENERATE_JOB);
        assert!(
            tokio::time::timeout(waits, &mut first).await.is_ok(),
            "a report worker woke"
        );
        assert!(
            tokio::time::timeout(waits, &mut second).await.is_err(),
            "one job wakes one worker"
        );
        assert!(
            tokio::time::timeout(waits, &mut record).await.is_err(),
            "other kinds sleep on"
        );
        wake.queued(PROCESS_JOB);
        assert!(tokio::time::timeout(waits, &mut record).await.is_ok());
        // A job queued while no worker waits is taken by the next that looks.
        wake.queued(PERSONA_JOB);
        let later = wake.of(PERSONA_JOB).unwrap().notified();
        assert!(tokio::time::timeout(waits, later).await.is_ok());
        assert!(wake.of("no.such.kind").is_none());
    }

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
}
