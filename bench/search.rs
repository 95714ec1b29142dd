//! BM25 index build and query cost at project scale. Run with `cargo bench --bench search`.
//!
//! Generates 100 synthetic English interview transcripts of 30,000 words each (a fixed-seed
//! xorshift generator: 55% function words, 25% domain words, the rest a long tail of 20,000
//! invented names and inflections, each class Zipf-distributed), split into utterances of 3 to 80 words keyed by `(Uuid, i64)` as the service keys them.
//! It then measures:
//!
//! 1. building the index of one transcript (median of 11 runs);
//! 2. building the index of all 100 transcripts (3,000,000 words; median of 3 runs), with the
//!    heap the index keeps afterwards and the peak heap during the build, counted by a global
//!    allocator wrapper (the generated text itself is not counted);
//! 3. 100 queries of 4 to 12 words (a question as a person or a report prompt would phrase it)
//!    against both indexes, top 20 hits, with mean, median, 95th percentile and maximum.
//!
//! This is a report, not a test: it prints figures and exits 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use insight::engines::search::bm25::{Document, Index};
use uuid::Uuid;

mod words;
use words::{Rng, Vocabulary};

const TRANSCRIPTS: usize = 100;
const WORDS_PER_TRANSCRIPT: usize = 30_000;
const QUERIES: usize = 100;
const LIMIT: usize = 20;

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One transcript: utterances of 3 to 80 words, with capitals and punctuation.
fn transcript(vocabulary: &Vocabulary, rng: &mut Rng) -> Vec<String> {
    let mut utterances = Vec::new();
    let mut words = 0;
    while words < WORDS_PER_TRANSCRIPT {
        let len = (3 + rng.below(78)).min(WORDS_PER_TRANSCRIPT - words);
        let mut text = String::new();
        for i in 0..len {
            let word = vocabulary.draw(rng);
            words::push_word(&mut text, word, i, len, rng);
        }
        text.push(if rng.below(5) == 0 { '?' } else { '.' });
        words += len;
        utterances.push(text);
    }
    utterances
}

fn query(vocabulary: &Vocabulary, rng: &mut Rng) -> String {
    let len = 4 + rng.below(9);
    let mut words: Vec<&str> = vec!["what", "did", "customers", "say", "about"];
    words.truncate(rng.below(words.len() + 1));
    while words.len() < len {
        words.push(if rng.below(2) == 0 {
            vocabulary.topic(rng)
        } else {
            vocabulary.draw(rng)
        });
    }
    words.join(" ") + "?"
}

fn documents(transcripts: &[Vec<String>]) -> impl Iterator<Item = Document<'_, (Uuid, i64)>> {
    transcripts.iter().enumerate().flat_map(|(record, utterances)| {
        let record = Uuid::from_u128(0x5eed_0000_0000_0000_0000_0000_0000_0000 + record as u128);
        utterances
            .iter()
            .enumerate()
            .map(move |(i, text)| Document::new((record, i as i64), text.as_str()))
    })
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn report_queries(name: &str, index: &Index<(Uuid, i64)>, queries: &[String]) {
    // One untimed pass to warm caches, then one timed pass per query.
    for query in queries {
        black_box(index.search(query, LIMIT));
    }
    let mut hits = 0;
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|query| {
            let start = Instant::now();
            let found = black_box(index.search(query, LIMIT));
            let elapsed = start.elapsed();
            hits += found.len();
            elapsed
        })
        .collect();
    let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
    times.sort_unstable();
    let p95 = times.get(times.len() * 95 / 100).copied().unwrap_or_default();
    let max = times.last().copied().unwrap_or_default();
    println!(
        "  {name}: {} queries, top {LIMIT}: mean {:.3} ms, median {:.3} ms, p95 {:.3} ms, max {:.3} ms ({} hits)",
        queries.len(),
        ms(mean),
        ms(median(&mut times)),
        ms(p95),
        ms(max),
        hits
    );
}

fn main() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let vocabulary = Vocabulary::new(&mut rng);
    let transcripts: Vec<Vec<String>> = (0..TRANSCRIPTS).map(|_| transcript(&vocabulary, &mut rng)).collect();
    let queries: Vec<String> = (0..QUERIES).map(|_| query(&vocabulary, &mut rng)).collect();
    let utterances: usize = transcripts.iter().map(Vec::len).sum();
    let bytes: usize = transcripts.iter().flatten().map(String::len).sum();
    println!(
        "corpus: {TRANSCRIPTS} transcripts x {WORDS_PER_TRANSCRIPT} words = {} words, {utterances} utterances, {:.1} MiB of text",
        TRANSCRIPTS * WORDS_PER_TRANSCRIPT,
        mib(bytes)
    );
    println!("example utterance: {:?}", transcripts[0][1]);
    println!("example query: {:?}", queries[0]);

    // 1. One transcript.
    let one = &transcripts[..1];
    let mut times: Vec<Duration> = (0..11)
        .map(|_| {
            let start = Instant::now();
            black_box(Index::build(documents(one), Some("en")));
            start.elapsed()
        })
        .collect();
    let small = Index::build(documents(one), Some("en"));
    println!(
        "build, 1 transcript ({} utterances, {} words): median {:.1} ms, min {:.1} ms; {} terms",
        small.len(),
        WORDS_PER_TRANSCRIPT,
        ms(median(&mut times)),
        ms(times.first().copied().unwrap_or_default()),
        small.vocabulary_len()
    );

    // 2. All transcripts, with memory.
    let mut times = Vec::new();
    let mut kept = 0;
    let mut peak = 0;
    let mut index = None;
    for _ in 0..3 {
        drop(index.take());
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let start = Instant::now();
        let built = Index::build(documents(&transcripts), Some("en"));
        times.push(start.elapsed());
        kept = LIVE.load(Ordering::Relaxed).saturating_sub(before);
        peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        index = Some(built);
    }
    let Some(index) = index else { return };
    println!(
        "build, {TRANSCRIPTS} transcripts ({} utterances, {} words): median {:.0} ms ({:.2} M words/s); {} terms, avgdl {:.1}",
        index.len(),
        TRANSCRIPTS * WORDS_PER_TRANSCRIPT,
        ms(median(&mut times)),
        (TRANSCRIPTS * WORDS_PER_TRANSCRIPT) as f64 / median(&mut times).as_secs_f64() / 1e6,
        index.vocabulary_len(),
        index.average_length()
    );
    println!(
        "memory, {TRANSCRIPTS} transcripts: index keeps {:.1} MiB ({:.0} bytes per utterance, {:.1} per word of text; the text is {:.1} MiB), peak during build {:.1} MiB",
        mib(kept),
        kept as f64 / index.len().max(1) as f64,
        kept as f64 / (TRANSCRIPTS * WORDS_PER_TRANSCRIPT) as f64,
        mib(bytes),
        mib(peak)
    );

    // 3. Queries.
    println!("queries:");
    report_queries("1 transcript", &small, &queries);
    report_queries(&format!("{TRANSCRIPTS} transcripts"), &index, &queries);
}
