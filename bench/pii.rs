//! Personal data that would reach a model: the detector over the labelled interviews
//! (`tests/fixtures/pii/interviews.jsonl`, written by `bench/pii/make_corpus.py`), each
//! interview as one text (title, blank line, `speaker: text` per utterance) with its
//! speakers known, as the product knows them. Prints, per kind and per form, how many
//! labelled values reached the model (any letter or digit left uncovered by the
//! findings), and how many ordinary words (products, months, plan names, versions…) were
//! wrongly replaced. `bench/pii/presidio.py` prints the same table for Microsoft
//! Presidio; `bench/pii/run` runs both.
//!
//! `cargo bench --bench pii` (`-- --misses` also prints every leaked value and replaced
//! word with its context; `INSIGHT_BENCH_PII_CORPUS` reads another corpus file).

use std::time::Instant;

use insight::engines::privacy::corpus::{Miss, leaks, parse_interviews};
use insight::engines::privacy::{Detector, Known};

fn main() {
    let misses = std::env::args().any(|a| a == "--misses");
    let path = std::env::var("INSIGHT_BENCH_PII_CORPUS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pii/interviews.jsonl").to_owned());
    let corpus = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let interviews = parse_interviews(&corpus).unwrap_or_else(|e| panic!("{path}: {e}"));

    let started = Instant::now();
    let report = leaks(&interviews, |interview, text| {
        let mut known = Known::default();
        for speaker in interview.speakers() {
            known.add_speaker(&speaker);
        }
        // As a piece of work's cloak reads its material: learn, then find.
        let mut detector = Detector::new(known);
        detector.learn(text);
        detector.find(text)
    });
    let elapsed = started.elapsed();
    println!(
        "insight: {} interviews, {} bytes of text, speakers known ({:.1} ms)",
        report.interviews,
        report.bytes,
        elapsed.as_secs_f64() * 1000.0
    );
    print!("{}", report.table());
    if misses {
        print_misses("reached the model", &report.leaked);
        print_misses("wrongly replaced", &report.replaced);
    }
}

fn print_misses(what: &str, misses: &[Miss]) {
    println!("\n{} {what}:", misses.len());
    for miss in misses {
        let by = if miss.by.is_empty() {
            String::new()
        } else {
            let kinds: Vec<&str> = miss.by.iter().map(|k| k.tag()).collect();
            format!(" (as {})", kinds.join(", "))
        };
        println!(
            "{} {} {:?}{by}: {}",
            miss.interview, miss.mark, miss.value, miss.context
        );
    }
}
