//! The instance's secret key, and the values derived from it.
//!
//! An interview link must be shown to its owner again and again, yet no token may be
//! stored in clear. So a link is not stored at all: it is an HMAC-SHA256 of the room's
//! random nonce under this key, computed again whenever it is shown, and found by its
//! SHA-256 when a respondent opens it. Whoever reads the database learns neither the
//! links nor how to make them. Instances that share a database must share the key
//! (`INSIGHT_SECRET_KEY`, or the same `INSIGHT_DATA_DIR`).

use std::fmt;
use std::path::Path;

use anyhow::Context;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Key material as the operator gave it; never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyMaterial(String);

impl KeyMaterial {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// Whether `given` is this secret, compared by their SHA-256 so the time taken says
    /// nothing about how much of it was right.
    pub fn matches(&self, given: &str) -> bool {
        use sha2::Digest;
        Sha256::digest(given.as_bytes()) == Sha256::digest(self.0.as_bytes())
    }

    /// The secret itself, for the one client that must send it (e.g. the OpenID Connect
    /// client secret); never for a message or a log.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyMaterial([redacted])")
    }
}

/// The key every derived value comes from.
#[derive(Clone)]
pub struct SecretKey(Vec<u8>);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey([redacted])")
    }
}

/// The file, in the data folder, that keeps a generated key.
const KEY_FILE: &str = "secret.key";

impl SecretKey {
    /// The configured key, or the one in `data_dir/secret.key`, made (32 random bytes,
    /// readable by the owner only) when there is none yet.
    pub fn load(configured: Option<&KeyMaterial>, data_dir: &Path) -> anyhow::Result<Self> {
        if let Some(KeyMaterial(value)) = configured {
            return Ok(Self(value.as_bytes().to_vec()));
        }
        let path = data_dir.join(KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let key = URL_SAFE_NO_PAD
                    .decode(text.trim())
                    .ok()
                    .filter(|key| key.len() >= 32)
                    .with_context(|| {
                        format!(
                            "{} is not a key this service wrote; restore it or set INSIGHT_SECRET_KEY",
                            path.display()
                        )
                    })?;
                Ok(Self(key))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut key = vec![0u8; 32];
                rand::rng().fill_bytes(&mut key);
                write_private(&path, URL_SAFE_NO_PAD.encode(&key).as_bytes())
                    .with_context(|| format!("cannot write the secret key to {}", path.display()))?;
                Ok(Self(key))
            }
            Err(error) => Err(error).with_context(|| format!("cannot read the secret key {}", path.display())),
        }
    }

    /// A key for tests and benchmarks.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Self(bytes.to_vec())
    }

    /// HMAC-SHA256 of `parts` (each length-prefixed, so no two lists give the same
    /// input) for one `purpose`.
    pub fn derive_bytes(&self, purpose: &str, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        for part in std::iter::once(purpose.as_bytes()).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// [`derive_bytes`](Self::derive_bytes), URL-safe base64 of its first `bytes` bytes.
    pub fn derive(&self, purpose: &str, parts: &[&[u8]], bytes: usize) -> String {
        let digest = self.derive_bytes(purpose, parts);
        URL_SAFE_NO_PAD.encode(&digest[..bytes.min(digest.len())])
    }
}

/// Creates `path` with `contents`, readable and writable by its owner only; fails when
/// it exists (another instance made it first: its key is the one to use).
fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_is_kept_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let first = SecretKey::load(None, dir.path()).unwrap();
        let again = SecretKey::load(None, dir.path()).unwrap();
        assert_eq!(first.derive("t", &[b"x"], 16), again.derive("t", &[b"x"], 16));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = SecretKey::load(None, tempfile::tempdir().unwrap().path()).unwrap();
        assert_ne!(first.derive("t", &[b"x"], 16), other.derive("t", &[b"x"], 16));
    }

    #[test]
    fn a_configured_key_wins_and_a_damaged_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), "short").unwrap();
        let error = SecretKey::load(None, dir.path()).unwrap_err().to_string();
        assert!(error.contains("INSIGHT_SECRET_KEY"), "{error}");
        let configured = KeyMaterial::new("a".repeat(40));
        let key = SecretKey::load(Some(&configured), dir.path()).unwrap();
        assert_eq!(
            key.derive("t", &[b"x"], 16),
            SecretKey::from_bytes("a".repeat(40).as_bytes()).derive("t", &[b"x"], 16)
        );
        assert_eq!(format!("{configured:?}"), "KeyMaterial([redacted])");
    }

    #[test]
    fn derived_values_depend_on_purpose_and_on_how_parts_split() {
        let key = SecretKey::from_bytes(b"k");
        let a = key.derive("room", &[b"ab", b"c"], 24);
        assert_eq!(a.len(), 32);
        assert_ne!(a, key.derive("room", &[b"a", b"bc"], 24));
        assert_ne!(a, key.derive("session", &[b"ab", b"c"], 24));
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    }
}
