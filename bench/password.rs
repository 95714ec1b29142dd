//! Password checks. Run with `cargo bench --bench password`.
//!
//! Times one sign-in's password check (`accounts::password::verify`, argon2id with
//! OWASP's parameters, on the blocking pool) one after another, after a few warm-up
//! rounds, and prints its p50 and p95; the same for the check against the dummy hash
//! (an address without an account), which should take the same time, and for `hash`.
//! Target: a verification of 50–250 ms, slow for a guesser, quick for a person.
//! Then, for choosing parameters, one verification's p50 with others (argon2id).
//!
//! Settings: `INSIGHT_BENCH_VERIFICATIONS` (40). A report, not a test: it exits 0
//! unless the run fails.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

use insight::app::accounts::password;

mod stats;
use stats::percentile;

const PASSWORD: &str = "correct horse battery staple";

async fn time(rounds: usize, mut once: impl AsyncFnMut() -> anyhow::Result<()>) -> anyhow::Result<Vec<f64>> {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        once().await?;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples)
}

fn report(what: &str, samples: &[f64]) {
    println!(
        "  {what:<28} p50 {:6.1} ms   p95 {:6.1} ms   ({} runs)",
        percentile(samples, 50.0),
        percentile(samples, 95.0),
        samples.len()
    );
}

async fn run() -> anyhow::Result<()> {
    let rounds = match std::env::var("INSIGHT_BENCH_VERIFICATIONS") {
        Ok(value) => value
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .context("INSIGHT_BENCH_VERIFICATIONS must be a whole number above 0")?,
        Err(_) => 40,
    };
    let phc = password::hash(PASSWORD.into()).await?;
    println!(
        "password checks (argon2id m={} KiB, t={}, p={}), one at a time:",
        password::M_COST_KIB,
        password::T_COST,
        password::P_COST
    );
    // Warm-up: the blocking pool's thread and the allocator's first 19 MiB.
    time(3, async || {
        password::verify(PASSWORD.into(), Some(phc.clone())).await.map(drop)
    })
    .await?;

    let verify = time(rounds, async || {
        anyhow::ensure!(password::verify(PASSWORD.into(), Some(phc.clone())).await?);
        Ok(())
    })
    .await?;
    report("verify (right password)", &verify);
    let dummy = time(rounds, async || {
        anyhow::ensure!(!password::verify(PASSWORD.into(), None).await?);
        Ok(())
    })
    .await?;
    report("verify (no account)", &dummy);
    let hash = time(rounds, async || password::hash(PASSWORD.into()).await.map(drop)).await?;
    report("hash", &hash);

    let p50 = percentile(&verify, 50.0);
    let verdict = if (50.0..=250.0).contains(&p50) {
        "within"
    } else {
        "OUTSIDE"
    };
    println!("  verification p50 {p50:.1} ms: {verdict} the 50-250 ms target");

    println!("other argon2id parameters, one verification (p50 of 10):");
    // OWASP's minimum with more passes, OWASP's 46 MiB choice, RFC 9106's second choice.
    for (m_kib, t) in [(19_456, 4), (19_456, 8), (47_104, 1), (65_536, 3)] {
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::new(m_kib, t, 1, None)?);
        let phc = argon2
            .hash_password(PASSWORD.as_bytes())
            .map_err(|error| anyhow::anyhow!("{error}"))?
            .to_string();
        let parsed = PasswordHash::new(&phc).map_err(|error| anyhow::anyhow!("{error}"))?;
        let mut samples = (0..10)
            .map(|_| {
                let started = Instant::now();
                let ok = Argon2::default().verify_password(PASSWORD.as_bytes(), &parsed).is_ok();
                (ok, started.elapsed().as_secs_f64() * 1000.0)
            })
            .map(|(ok, ms)| if ok { Ok(ms) } else { Err(anyhow::anyhow!("no match")) })
            .collect::<anyhow::Result<Vec<f64>>>()?;
        samples.sort_by(f64::total_cmp);
        println!("  m={m_kib:>6} KiB t={t}   p50 {:6.1} ms", percentile(&samples, 50.0));
    }
    Ok(())
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("password benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
