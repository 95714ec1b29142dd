//! Pseudonymisation: the detector's precision and recall per kind on the labelled corpus
//! (`tests/fixtures/pii/corpus.txt`), its throughput on one core over synthetic speech
//! sprinkled with personal values (target ≥ 20 MB/s), and the time to conceal a 3-hour
//! interview (target < 10 ms).
//!
//! `cargo bench --bench privacy` (`-- --quick` for a shorter run).

#[path = "words.rs"]
mod words;

use std::time::Instant;

use insight::engines::privacy::corpus::{parse, score, table};
use insight::engines::privacy::{Detector, Known, Pseudonyms};

/// Words a speaker says in three hours (150 words a minute).
const THREE_HOURS_WORDS: usize = 27_000;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let corpus = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pii/corpus.txt"))
        .expect("read the corpus");
    let sentences = parse(&corpus).expect("the corpus parses");
    let (scores, _) = score(&Detector::default(), &sentences);
    println!("corpus: {} sentences", sentences.len());
    print!("{}", table(&scores));
    for language in ["en", "de", "fr", "es"] {
        let some: Vec<_> = sentences.iter().filter(|s| s.language == language).cloned().collect();
        let (scores, _) = score(&Detector::default(), &some);
        let (labelled, found, right) = scores
            .values()
            .fold((0, 0, 0), |(l, f, r), s| (l + s.labelled, f + s.found, r + s.right));
        println!(
            "{language}: {} sentences, all kinds: precision {:.3} recall {:.3}",
            some.len(),
            if found == 0 { 1.0 } else { right as f64 / found as f64 },
            if labelled == 0 {
                1.0
            } else {
                right as f64 / labelled as f64
            }
        );
    }

    // A 3-hour interview: synthetic speech with a personal value every ~200 words, and
    // the speakers' names known.
    let (text, utterances) = interview(THREE_HOURS_WORDS);
    let mut known = Known::default();
    known.add_speaker("Anna Schmidt");
    known.add_speaker("Interviewer");
    let detector = Detector::new(known);
    let runs = if quick { 5 } else { 30 };
    let mut times = Vec::with_capacity(runs);
    let mut concealed_values = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let mut pseudonyms = Pseudonyms::new(detector.clone());
        for utterance in &utterances {
            std::hint::black_box(pseudonyms.conceal(utterance));
        }
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        concealed_values = usize::from(!pseudonyms.is_empty());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "3-hour interview ({} words, {:.0} KiB, {} utterances): median {median:.2} ms, worst {:.2} ms (target < 10 ms)",
        THREE_HOURS_WORDS,
        text.len() as f64 / 1024.0,
        utterances.len(),
        times[times.len() - 1],
    );
    assert_eq!(concealed_values, 1, "the interview's values were concealed");

    // Throughput: the same speech, 20 MB of it, through one detector on one thread.
    let target_bytes = if quick { 5_000_000 } else { 20_000_000 };
    let mut big = String::with_capacity(target_bytes + text.len());
    while big.len() < target_bytes {
        big.push_str(&text);
    }
    let lines: Vec<&str> = big.lines().collect();
    let started = Instant::now();
    let mut found = 0;
    for line in &lines {
        found += detector.find(line).len();
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "throughput: {:.1} MB in {:.2} s = {:.1} MB/s on one core ({} values found) (target ≥ 20 MB/s)",
        big.len() as f64 / 1e6,
        seconds,
        big.len() as f64 / 1e6 / seconds,
        found
    );
}

/// Synthetic speech of `words` words in utterances of 10–60 words, alternating between
/// the interviewer and a respondent, with personal values now and then.
fn interview(words: usize) -> (String, Vec<String>) {
    let mut rng = words::Rng(0x5eed_1234);
    let vocabulary = words::Vocabulary::new(&mut rng);
    let values = [
        "you can reach me at anna.schmidt@example.org",
        "my number is +49 30 1234567",
        "I paid with 4111 1111 1111 1111",
        "the IBAN is DE89 3704 0044 0532 0130 00",
        "it logged 81.2.69.160",
        "my profile is linkedin.com/in/anna-schmidt",
        "I asked Maria González about it",
        "my manager Tom Becker said so",
    ];
    let mut utterances = Vec::new();
    let mut text = String::new();
    let mut said = 0;
    let mut turn = 0;
    while said < words {
        let length = 10 + rng.below(50);
        let speaker = if turn % 2 == 0 { "Interviewer" } else { "Anna Schmidt" };
        let mut line = format!("{speaker}: ");
        for n in 0..length {
            let word = vocabulary.draw(&mut rng).to_owned();
            words::push_word(&mut line, &word, n, length, &mut rng);
        }
        if rng.below(4) == 0 {
            line.push_str(", ");
            line.push_str(values[rng.below(values.len())]);
        }
        line.push('.');
        said += length;
        turn += 1;
        text.push_str(&line);
        text.push('\n');
        utterances.push(line);
    }
    (text, utterances)
}
