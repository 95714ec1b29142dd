//! Token counting by OpenAI's `o200k_base` encoding, with the counts of long texts kept.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// OpenAI's `o200k_base` encoding (GPT-4o and later), built on first use.
static BPE: LazyLock<Option<tiktoken_rs::CoreBPE>> = LazyLock::new(|| tiktoken_rs::o200k_base().ok());

/// Builds the tokenizer now. Building it takes a while and every thread that counts
/// tokens waits for it: `serve` calls this before it takes requests, so that the first
/// report or chat does not stall the runtime's workers.
pub fn load_tokenizer() {
    LazyLock::force(&BPE);
}

/// Texts shorter than this are counted each time: looking them up costs about as much.
const KEPT_COUNT_MIN_BYTES: usize = 256;

/// More kept counts than this and the memo starts over, which bounds its memory (a few
/// hundred KB at most).
const MAX_KEPT_COUNTS: usize = 8_192;

/// Counts of texts seen before, by a keyed hash of the text and its length: the same
/// instructions, study and transcript chunks are counted for every report and chat turn,
/// and counting is costly. The hash's key is random per process, so no text can be made
/// to collide with another's.
static KEPT_COUNTS: LazyLock<KeptCounts> = LazyLock::new(KeptCounts::default);

#[derive(Default)]
struct KeptCounts {
    state: std::hash::RandomState,
    /// By the text's hash and length.
    counts: Mutex<HashMap<(u64, usize), usize>>,
}

/// Tokens of a text by OpenAI's `o200k_base` encoding. Other models' tokenizers count
/// differently, typically within a few tens of percent: leave a margin.
pub fn count_tokens(text: &str) -> usize {
    if text.len() < KEPT_COUNT_MIN_BYTES {
        return count_tokens_now(text);
    }
    let kept = &*KEPT_COUNTS;
    let key = (std::hash::BuildHasher::hash_one(&kept.state, text), text.len());
    let lock = || kept.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(count) = lock().get(&key) {
        return *count;
    }
    let count = count_tokens_now(text);
    let mut kept = lock();
    if kept.len() >= MAX_KEPT_COUNTS {
        kept.clear();
    }
    kept.insert(key, count);
    count
}

fn count_tokens_now(text: &str) -> usize {
    let Some(bpe) = BPE.as_ref() else {
        return text.len().div_ceil(3);
    };
    // The tokenizer's regex gives up (and tiktoken panics) on very long runs of some
    // characters: count in pieces, cut where possible at whitespace.
    const PIECE: usize = 8 * 1024;
    let mut total = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(PIECE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end < rest.len()
            && let Some(space) = rest[..end].rfind(char::is_whitespace)
            && space > PIECE / 2
        {
            end = space;
        }
        let piece = &rest[..end];
        total += std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bpe.encode_ordinary(piece).len()))
            .unwrap_or_else(|_| piece.len().div_ceil(3));
        rest = &rest[end..];
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_tokens() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        let long = "word ".repeat(5_000);
        let count = count_tokens(&long);
        assert!((4_900..=5_100).contains(&count), "{count}");
        // A long run of one character does not panic.
        assert!(count_tokens(&"^".repeat(200_000)) > 0);
    }

    #[test]
    fn a_kept_count_is_the_count() {
        let texts = [
            "The invoices arrive late and I have to chase finance every month. ".repeat(8),
            "Les factures arrivent en retard et je dois relancer la comptabilité. ".repeat(8),
            // The first's opening, other words.
            "The invoices arrive soon and I need not chase finance any month now. ".repeat(8),
        ];
        for text in &texts {
            assert!(text.len() >= KEPT_COUNT_MIN_BYTES);
            let first = count_tokens(text);
            assert_eq!(first, count_tokens_now(text));
            assert_eq!(count_tokens(text), first, "asked again");
        }
        // Texts of one length are told apart.
        let (spaced, packed) = ("a ".repeat(200), "ab".repeat(200));
        assert_eq!(count_tokens(&spaced), count_tokens_now(&spaced));
        assert_eq!(count_tokens(&packed), count_tokens_now(&packed));
        assert_ne!(count_tokens(&spaced), count_tokens(&packed));
    }
}
