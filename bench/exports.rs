//! Exports: a 50-page report (sections, themes, quotes with citations, lists, a table) as
//! Word and as PDF, timed from its Markdown to the file's bytes (targets: < 500 ms each).
//!
//! `cargo bench --bench exports` (`-- --quick` for fewer runs).

#[path = "stats.rs"]
mod stats;
#[path = "words.rs"]
mod words;

use std::time::Instant;

use insight::app::exports::document::{Citations, from_markdown};
use insight::app::exports::{Document, docx, pdf};
use insight::engines::ai::citations::CitationIndex;
use uuid::Uuid;
use words::{Rng, Vocabulary, push_word};

/// Pages the report should fill.
const PAGES: usize = 50;

fn sentence(vocabulary: &Vocabulary, rng: &mut Rng, words: usize) -> String {
    let mut text = String::new();
    for i in 0..words {
        push_word(&mut text, vocabulary.draw(rng), i, words, rng);
    }
    text.push('.');
    text
}

/// A report as the engines write one: per section an introduction, themes with quotes cited
/// to moments of eight interviews, a list of takeaways; a table now and then.
fn report(rng: &mut Rng, vocabulary: &Vocabulary, records: &[(Uuid, String)], words: usize) -> String {
    let mut markdown = String::from("# Onboarding and billing: what 8 teams told us\n\n");
    let mut written = 0;
    let mut section = 0;
    while written < words {
        section += 1;
        markdown.push_str(&format!("## Section {section}: {}\n\n", vocabulary.topic(rng)));
        let intro: Vec<String> = (0..4).map(|_| sentence(vocabulary, rng, 18)).collect();
        markdown.push_str(&format!("{}\n\n", intro.join(" ")));
        for theme in 0..3 {
            markdown.push_str(&format!("### Theme {theme}: {}\n\n", vocabulary.topic(rng)));
            markdown.push_str(&format!("{}\n\n", sentence(vocabulary, rng, 30)));
            for _ in 0..3 {
                let (_, name) = &records[rng.below(records.len())];
                let minute = rng.below(50);
                markdown.push_str(&format!(
                    "> \"{}\" — **{}** [{name}, {minute:02}:{:02}]\n\n",
                    sentence(vocabulary, rng, 25),
                    name.trim_start_matches("Interview "),
                    rng.below(60)
                ));
            }
        }
        markdown.push_str("Takeaways:\n\n");
        for _ in 0..4 {
            markdown.push_str(&format!("- *{}*\n", sentence(vocabulary, rng, 14)));
        }
        markdown.push('\n');
        if section % 3 == 0 {
            markdown.push_str("| Team | Seats | Said |\n|---|---|---|\n");
            for (_, name) in records.iter().take(4) {
                markdown.push_str(&format!(
                    "| {name} | {} | {} |\n",
                    rng.below(90),
                    sentence(vocabulary, rng, 8)
                ));
            }
            markdown.push('\n');
        }
        written = markdown.split_whitespace().count();
    }
    markdown
}

fn median_ms(runs: usize, mut work: impl FnMut()) -> (f64, f64) {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (stats::percentile(&times, 50.0), stats::percentile(&times, 100.0))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 3 } else { 11 };
    let mut rng = Rng(0x5eed_0e8a_0b11_1e55);
    let vocabulary = Vocabulary::new(&mut rng);
    let records: Vec<(Uuid, String)> = (0..8)
        .map(|n| {
            (
                Uuid::from_u128(n + 1),
                format!(
                    "Interview {}",
                    ["Anna", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hiro"][n as usize]
                ),
            )
        })
        .collect();
    let mut index = CitationIndex::default();
    for (id, name) in &records {
        // An utterance starting every second of the first hour.
        index.add(*id, name, (0..3600).map(|second| (second + 1, Some(second * 1000))));
    }
    // Words per page, measured: grow the text until the PDF has PAGES pages.
    let mut words = PAGES * 400;
    let (markdown, document, pages) = loop {
        let markdown = report(&mut Rng(7), &vocabulary, &records, words);
        let document = Document {
            title: "Onboarding and billing: what 8 teams told us".into(),
            byline: vec![
                "Billing study".into(),
                "From 8 records · written 28 November 2026".into(),
            ],
            blocks: from_markdown(
                insight::app::exports::document::without_title(
                    &markdown,
                    "Onboarding and billing: what 8 teams told us",
                ),
                &Citations {
                    index: &index,
                    public_url: "https://insight.example",
                },
            ),
        };
        let (_, pages) = pdf::write_counted(&document).expect("a PDF");
        if pages >= PAGES {
            break (markdown, document, pages);
        }
        words = words * PAGES / pages.max(1) + 200;
    };
    println!(
        "report: {} words of Markdown ({} KB), {pages} pages of PDF",
        markdown.split_whitespace().count(),
        markdown.len() / 1024
    );
    let mut sizes = (0, 0);
    let (docx_median, docx_max) = median_ms(runs, || sizes.0 = docx::write(&document).expect("docx").len());
    let (pdf_median, pdf_max) = median_ms(runs, || sizes.1 = pdf::write(&document).expect("pdf").len());
    // From the Markdown, as the export does it (parsing and citations included).
    let (parse_median, _) = median_ms(runs, || {
        std::hint::black_box(from_markdown(
            &markdown,
            &Citations {
                index: &index,
                public_url: "https://insight.example",
            },
        ));
    });
    println!("markdown to blocks (citations linked): median {parse_median:.1} ms");
    println!(
        "DOCX: median {docx_median:.1} ms, slowest {docx_max:.1} ms, {} KB (target < 500 ms)",
        sizes.0 / 1024
    );
    println!(
        "PDF: median {pdf_median:.1} ms, slowest {pdf_max:.1} ms, {} KB (target < 500 ms)",
        sizes.1 / 1024
    );
}
