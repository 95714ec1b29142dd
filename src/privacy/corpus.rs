//! Measuring the detector against a labelled corpus (`tests/fixtures/pii/corpus.txt`):
//! each line a language, a tab and a sentence whose personal values are marked
//! `⟦KIND:value⟧`. A finding counts as found when it covers exactly a marked value of its
//! kind; the recall test and `cargo bench --bench privacy` print the same figures.

use std::collections::BTreeMap;

use super::{Detector, Kind};

/// One sentence, unmarked, with its labelled values (kind and byte range).
#[derive(Debug, Clone)]
pub struct Sentence {
    pub language: String,
    pub text: String,
    pub labels: Vec<(Kind, usize, usize)>,
}

/// The corpus's sentences; a line that is not `lang<TAB>sentence` with well-formed marks
/// is an error naming its line.
pub fn parse(corpus: &str) -> Result<Vec<Sentence>, String> {
    let mut sentences = Vec::new();
    for (n, line) in corpus.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (language, marked) = line
            .split_once('\t')
            .ok_or_else(|| format!("line {}: no tab after the language", n + 1))?;
        let mut text = String::with_capacity(marked.len());
        let mut labels = Vec::new();
        let mut rest = marked;
        while let Some(open) = rest.find('⟦') {
            text.push_str(&rest[..open]);
            let after = &rest[open + '⟦'.len_utf8()..];
            let close = after
                .find('⟧')
                .ok_or_else(|| format!("line {}: an unclosed mark", n + 1))?;
            let (kind, value) = after[..close]
                .split_once(':')
                .ok_or_else(|| format!("line {}: a mark without a kind", n + 1))?;
            let kind = Kind::from_tag(kind).ok_or_else(|| format!("line {}: unknown kind {kind}", n + 1))?;
            labels.push((kind, text.len(), text.len() + value.len()));
            text.push_str(value);
            rest = &after[close + '⟧'.len_utf8()..];
        }
        text.push_str(rest);
        sentences.push(Sentence {
            language: language.to_owned(),
            text,
            labels,
        });
    }
    Ok(sentences)
}

/// Counts of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    pub labelled: usize,
    pub found: usize,
    pub right: usize,
}

impl Score {
    pub fn precision(&self) -> f64 {
        if self.found == 0 {
            1.0
        } else {
            self.right as f64 / self.found as f64
        }
    }

    pub fn recall(&self) -> f64 {
        if self.labelled == 0 {
            1.0
        } else {
            self.right as f64 / self.labelled as f64
        }
    }
}

/// What the detector found in each sentence against its labels, per kind, with the
/// sentences it got wrong (for a reader tuning it).
pub fn score(detector: &Detector, sentences: &[Sentence]) -> (BTreeMap<Kind, Score>, Vec<String>) {
    let mut scores: BTreeMap<Kind, Score> = Kind::ALL.into_iter().map(|k| (k, Score::default())).collect();
    let mut wrong = Vec::new();
    for sentence in sentences {
        let found = detector.find(&sentence.text);
        for &(kind, start, end) in &sentence.labels {
            let score = scores.get_mut(&kind).expect("every kind");
            score.labelled += 1;
            if found.iter().any(|f| f.kind == kind && f.start == start && f.end == end) {
                score.right += 1;
            } else {
                wrong.push(format!(
                    "missed {:?} {:?} in: {}",
                    kind,
                    &sentence.text[start..end],
                    sentence.text
                ));
            }
        }
        for f in &found {
            scores.get_mut(&f.kind).expect("every kind").found += 1;
            if !sentence
                .labels
                .iter()
                .any(|&(k, s, e)| k == f.kind && s == f.start && e == f.end)
            {
                wrong.push(format!(
                    "wrongly {:?} {:?} in: {}",
                    f.kind,
                    &sentence.text[f.start..f.end],
                    sentence.text
                ));
            }
        }
    }
    (scores, wrong)
}

/// The scores as a table, a kind per line, as the test and the benchmark print them.
pub fn table(scores: &BTreeMap<Kind, Score>) -> String {
    let mut table = format!(
        "{:<7} {:>9} {:>6} {:>6} {:>10} {:>7}\n",
        "kind", "labelled", "found", "right", "precision", "recall"
    );
    for (kind, s) in scores {
        table.push_str(&format!(
            "{:<7} {:>9} {:>6} {:>6} {:>10.3} {:>7.3}\n",
            kind.tag(),
            s.labelled,
            s.found,
            s.right,
            s.precision(),
            s.recall()
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORPUS: &str = include_str!("../../tests/fixtures/pii/corpus.txt");

    #[test]
    fn the_detector_finds_the_structured_kinds_of_the_corpus() {
        let sentences = parse(CORPUS).expect("the corpus parses");
        assert!(sentences.len() >= 200, "{} sentences", sentences.len());
        let (scores, wrong) = score(&Detector::default(), &sentences);
        for line in &wrong {
            println!("{line}");
        }
        print!("{}", table(&scores));
        for kind in [Kind::Email, Kind::Phone, Kind::Card, Kind::Iban, Kind::Ip, Kind::Url] {
            let s = scores[&kind];
            assert!(s.labelled >= 20, "{kind:?} has {} labelled values", s.labelled);
            assert!(s.recall() >= 0.95, "{kind:?} recall {:.3} < 0.95", s.recall());
        }
        let people = scores[&Kind::Person];
        assert!(people.labelled >= 40);
        // The name finder's figures are printed above and in docs/benchmarks.md; this
        // only guards against a collapse.
        assert!(people.recall() >= 0.85, "person recall {:.3}", people.recall());
        assert!(people.precision() >= 0.85, "person precision {:.3}", people.precision());
    }

    #[test]
    fn marks_are_parsed_to_byte_ranges() {
        let parsed = parse("# a comment\n\nen\tMail ⟦EMAIL:a@b.io⟧ or ⟦PERSON:Zoë⟧.\n").expect("parses");
        assert_eq!(parsed.len(), 1);
        let s = &parsed[0];
        assert_eq!(s.text, "Mail a@b.io or Zoë.");
        assert_eq!(s.labels, vec![(Kind::Email, 5, 11), (Kind::Person, 15, 19)]);
        assert!(parse("en no tab").is_err());
        assert!(parse("en\t⟦EMAIL:x").is_err());
    }
}
