//! Waiting for what the service does in the background: one poller, [`eventually`], that
//! every wait of the suite goes through.

use std::fmt::Display;
use std::time::{Duration, Instant};

/// The pause after the first try; each later pause is twice the one before, up to
/// [`LONGEST_PAUSE`]: what comes at once is seen at once, and a long wait asks no more
/// than twenty times a second.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// Tries `probe` until it answers `Ok`, and gives that value. `Err(seen)` is "not yet",
/// with what the probe saw. Once `within` has passed since the first try, the next
/// `Err` fails the test with `failure` and that last `seen` (left out when it says
/// nothing). A probe may assert as it goes: what must hold on every try fails at once.
pub async fn eventually<T, E: Display>(
    within: Duration,
    failure: impl Display,
    mut probe: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let deadline = Instant::now() + within;
    let mut pause = FIRST_PAUSE;
    loop {
        let seen = match probe().await {
            Ok(value) => return value,
            Err(seen) => seen.to_string(),
        };
        if Instant::now() >= deadline {
            if seen.is_empty() {
                panic!("{failure} (waited {within:?})");
            }
            panic!("{failure} (waited {within:?}): {seen}");
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

#[tokio::test]
async fn eventually_gives_the_first_ok_and_fails_with_what_it_last_saw() {
    let mut tries = 0;
    let third = eventually(Duration::from_secs(5), "never three", async || {
        tries += 1;
        if tries == 3 { Ok(tries) } else { Err(tries) }
    })
    .await;
    assert_eq!(third, 3);

    let failed = tokio::spawn(eventually(Duration::from_millis(30), "never done", async || {
        Err::<(), _>("still waiting")
    }))
    .await
    .expect_err("it fails");
    let message = failed.into_panic();
    let message = message.downcast_ref::<String>().map(String::as_str).unwrap_or_default();
    assert!(
        message.starts_with("never done (waited 30ms): still waiting"),
        "{message}"
    );
}
