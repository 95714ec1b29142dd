//! Passwords: argon2id hashes in PHC strings, and the rules for a new password.
//!
//! The parameters are OWASP's argon2id memory and lanes (19 MiB, 1 lane) with more passes
//! than its minimum, so that one check costs an attacker the margin the issue asks for
//! (`docs/benchmarks.md` has the times behind the choice). Both directions
//! run off the async threads,
//! and only as many at once as there are cores, so a burst of sign-ins queues instead
//! of holding 19 MiB per request. `docs/benchmarks.md` has the time on our machine.

use std::sync::LazyLock;

use anyhow::Context;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;
use unicode_normalization::UnicodeNormalization;

/// Memory per hash in KiB (19 MiB), passes and lanes: OWASP's argon2id memory and lanes,
/// with passes raised from its minimum of 2 into the time margin.
pub const M_COST_KIB: u32 = 19 * 1024;
pub const T_COST: u32 = 10;
pub const P_COST: u32 = 1;

/// Fewest characters in a new password (NIST SP 800-63B asks 8 at least; length is
/// what makes a password hard to guess, not its mix of character classes).
pub const MIN_CHARS: usize = 10;
/// Most bytes in a password: argon2 would take far more, but hashing megabytes on
/// every sign-in attempt is a cheap way to tie up the server.
pub const MAX_BYTES: usize = 1024;

/// The hash of a random password nobody knows, made with the current parameters (so
/// with whatever they become): checking it costs what checking a real hash does.
/// `verify` checks it when there is no hash, so that an unknown address takes the same
/// time.
static DUMMY_PHC: LazyLock<String> = LazyLock::new(|| {
    let mut secret = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut secret);
    hasher()
        .hash_password(&secret)
        .map(|hash| hash.to_string())
        .expect("hashing 32 random bytes")
});

/// Hashes under way at once.
static SLOTS: LazyLock<Semaphore> =
    LazyLock::new(|| Semaphore::new(std::thread::available_parallelism().map_or(1, |cores| cores.get())));

fn hasher() -> Argon2<'static> {
    let params = Params::new(M_COST_KIB, T_COST, P_COST, None).expect("OWASP's parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// NFKC, as NIST SP 800-63B advises: the same password typed on two keyboards may
/// arrive composed (é) or decomposed (e + ´), and must hash the same.
fn normalized(password: &str) -> String {
    password.nfkc().collect()
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    let _slot = SLOTS.acquire().await.context("the password hashing slots are closed")?;
    tokio::task::spawn_blocking(work)
        .await
        .context("the password hashing task failed")
}

/// The PHC string (`$argon2id$v=19$m=19456,t=10,p=1$salt$hash`) to store for `password`,
/// with a fresh random salt.
pub async fn hash(password: String) -> anyhow::Result<String> {
    blocking(move || {
        hasher()
            .hash_password(normalized(&password).as_bytes())
            .map(|hash| hash.to_string())
            .map_err(|error| anyhow::anyhow!("cannot hash a password: {error}"))
    })
    .await?
}

/// Whether `password` matches the stored `phc`. With no hash (no such account, or one
/// that signs in elsewhere) a dummy hash is checked all the same and the answer is
/// false, so the time taken does not tell whether the account exists. A hash made with
/// older parameters still verifies (its own parameters are in it): see [`needs_rehash`].
pub async fn verify(password: String, phc: Option<String>) -> anyhow::Result<bool> {
    blocking(move || {
        let (stored, real) = match &phc {
            Some(phc) => (phc.as_str(), true),
            None => (DUMMY_PHC.as_str(), false),
        };
        let parsed = PasswordHash::new(stored)
            .map_err(|error| anyhow::anyhow!("a stored password hash is not a PHC string: {error}"))?;
        // A password this long was never accepted, but the attempt takes the usual time.
        let too_long = password.len() > MAX_BYTES;
        let candidate = if too_long { String::new() } else { normalized(&password) };
        let matched = Argon2::default().verify_password(candidate.as_bytes(), &parsed).is_ok();
        Ok(matched && real && !too_long)
    })
    .await?
}

/// Whether `phc`, which just verified, was made otherwise than [`hash`] makes one now
/// (another algorithm, version or parameters); if so, store `hash` of the password
/// the user just gave.
pub fn needs_rehash(phc: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return true;
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return true;
    };
    parsed.algorithm != Algorithm::Argon2id.ident()
        || parsed.version != Some(Version::V0x13.into())
        || params.m_cost() != M_COST_KIB
        || params.t_cost() != T_COST
        || params.p_cost() != P_COST
        || parsed
            .hash
            .is_none_or(|output| output.len() != Params::DEFAULT_OUTPUT_LEN)
}

/// Whether `password` may be set as a new one; if not, a sentence for the person
/// choosing it. Only length and one repeated character are refused, as OWASP and NIST
/// advise: rules on character classes make passwords weaker and harder to remember.
pub fn check_new_password(password: &str) -> Result<(), &'static str> {
    if password.chars().count() < MIN_CHARS {
        return Err("Please choose a password of at least 10 characters.");
    }
    if password.len() > MAX_BYTES {
        return Err("Please choose a shorter password: at most 1024 bytes (about 1000 letters).");
    }
    let mut chars = password.chars();
    let first = chars.next();
    if chars.all(|c| Some(c) == first) {
        return Err("Please choose a password that is not one character repeated.");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_password_verifies_against_its_own_hash_only() {
        let phc = hash("correct horse battery".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=10,p=1$"), "{phc}");
        assert!(verify("correct horse battery".into(), Some(phc.clone())).await.unwrap());
        assert!(
            !verify("correct horse battery!".into(), Some(phc.clone()))
                .await
                .unwrap()
        );
        assert!(!needs_rehash(&phc));
        let again = hash("correct horse battery".into()).await.unwrap();
        assert_ne!(phc, again, "each hash has its own salt");
    }

    #[tokio::test]
    async fn composed_and_decomposed_accents_are_the_same_password() {
        let phc = hash("caf\u{e9} au lait, s'il vous pla\u{ee}t".into()).await.unwrap();
        assert!(
            verify("cafe\u{301} au lait, s'il vous plai\u{302}t".into(), Some(phc))
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn no_hash_checks_the_dummy_and_says_no() {
        assert!(!needs_rehash(&DUMMY_PHC), "the dummy costs what a real hash costs");
        assert!(!verify(String::new(), None).await.unwrap());
        assert!(!verify("correct horse battery".into(), None).await.unwrap());
    }

    #[tokio::test]
    async fn a_password_over_the_limit_never_verifies() {
        let long = "ab".repeat(MAX_BYTES);
        let phc = hasher().hash_password(long.as_bytes()).unwrap().to_string();
        assert!(!verify(long, Some(phc)).await.unwrap());
    }

    #[tokio::test]
    async fn a_hash_with_older_parameters_verifies_and_asks_to_be_redone() {
        let weaker = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(4096, 3, 1, None).unwrap(),
        );
        let phc = weaker.hash_password(b"an older password hash").unwrap().to_string();
        assert!(
            verify("an older password hash".into(), Some(phc.clone()))
                .await
                .unwrap()
        );
        assert!(needs_rehash(&phc));
        let argon2i = Argon2::new(Algorithm::Argon2i, Version::V0x13, Params::default());
        let phc = argon2i.hash_password(b"an older password hash").unwrap().to_string();
        assert!(
            verify("an older password hash".into(), Some(phc.clone()))
                .await
                .unwrap()
        );
        assert!(needs_rehash(&phc));
        assert!(needs_rehash("not a hash"));
    }

    #[tokio::test]
    async fn a_damaged_stored_hash_is_an_error_not_a_mismatch() {
        let error = verify("whatever it is".into(), Some("$argon2id$broken".into()))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("PHC"), "{error}");
    }

    #[test]
    fn new_passwords_need_length_not_composition() {
        assert!(check_new_password("correct horse").is_ok());
        assert!(
            check_new_password("abcdefghij").is_ok(),
            "10 lower-case letters will do"
        );
        assert!(check_new_password("éééééééééè").is_ok());
        assert_eq!(
            check_new_password("abcdefghi"),
            Err("Please choose a password of at least 10 characters.")
        );
        // 9 characters of 2 bytes each: characters are counted, not bytes.
        assert!(check_new_password("ééééééééé").is_err());
        assert!(check_new_password(&"ab".repeat(512)).is_ok());
        assert!(check_new_password(&"ab".repeat(513)).unwrap_err().contains("1024"));
        assert!(check_new_password("aaaaaaaaaaaa").unwrap_err().contains("repeated"));
        assert!(check_new_password(&" ".repeat(12)).is_err());
        for rule in [
            check_new_password(""),
            check_new_password(&"x".repeat(2000)),
            check_new_password("zzzzzzzzzzzz"),
        ] {
            let sentence = rule.unwrap_err();
            assert!(sentence.starts_with("Please") && sentence.ends_with('.'), "{sentence}");
        }
    }
}
