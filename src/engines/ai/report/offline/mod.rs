//! The offline engine: an extractive section made of verbatim quotes, with no model and no
//! network, for installations that run without a language model.
//!
//! [`write_section`] works in three steps, all deterministic (same input, same output):
//!
//! 1. **Ranking.** The utterances of respondents (interviewer questions are not findings; when no
//!    utterance is marked as a respondent's, all are used) with at least [`MIN_WORDS`] words are
//!    indexed with BM25 ([`crate::engines::search::bm25`]) in the brief's language, or the one the
//!    material's stop words suggest (neither: no stemming).
//!    The prompt's title and instructions are searched, without the words that describe the
//!    report rather than its subject ("respondents", "quote", "list"…); the title again, so its
//!    terms count double; the cue words of the subjects the prompt names ([`CUES`], English:
//!    "frustrations" brings "annoying", "slow", "lost"…) at half weight; and the research goals,
//!    at half weight (they are the study's, not this section's). Only utterances the prompt or
//!    its cues find are ranked (the goals alone rank when the prompt finds nothing), and those
//!    scoring below [`RELATIVE_CUTOFF`] of the best are dropped. Utterances that earlier sections
//!    of the report quoted (`quoted_before`) are left to them, so each section of a preset quotes
//!    passages of its own; when nothing else is relevant, its few best are quoted again.
//! 2. **Passages.** From each ranked utterance, in order, one passage is quoted: the whole
//!    utterance when it has at most [`MAX_QUOTE_WORDS`] words, otherwise the one to three
//!    consecutive whole sentences with the most (IDF-weighted) query terms, and for a single
//!    run-on sentence a window of [`FRAGMENT_WORDS`] words marked with `…` where it was cut.
//!    Text with double quotation marks is not quoted (it would break the quote's marks), nor is
//!    a passage already taken. At most [`MAX_PASSAGES`] passages are kept.
//! 3. **Themes** (`themes.rs`). Passages are grouped greedily: the stemmed term (from
//!    [`bm25::tokenize`]'s analysis) shared by the most unassigned passages, weighted by its IDF
//!    over the material (and halved for query terms, which every passage tends to share), makes a
//!    theme of the passages that contain it; repeat up to five times; what is left goes under
//!    "Other passages". Fillers of speech and everyday words of time and quantity ("really",
//!    "week", "time"…) and short terms do not make themes. A theme is named by a phrase of two to
//!    four words that one of its quoted passages says, holding its term, from a salient word to a
//!    salient word within a clause ("Routing tool", "Version of the spreadsheet"): the phrase most
//!    of its passages say, then one ending on a noun rather than "-ed" or "-ly" (English), then
//!    one ending on the term, then the shortest. A term whose passages have no such phrase makes
//!    no theme, so no theme is named by a lone common word; the other passages that say every
//!    salient word of the name join the theme. Themes are shown largest first,
//!    "Other passages" last. Little material can make a single theme.
//!
//! The Markdown has a fixed shape: `## {title}`, a line saying that the section is an extractive
//! summary by the offline engine, then per theme a `### Theme: …` heading, a count line
//! ("3 passages from 2 interviews") and up to [`QUOTES_PER_THEME`] quotes as
//! `> "{verbatim text}" — {speaker} [record name, mm:ss]` (preferring different records). With
//! nothing relevant it says so ([`NOT_COVERED`]). No other sentence is written: every sentence
//! is a template line or a respondent's own words (whitespace collapsed), so the quote checker
//! ([`crate::engines::ai::quotes`]) verifies every quote.
//!
//! The template lines are English whatever `brief.language` is: they are few and fixed, and the
//! quotes, which carry the content, stay in the respondents' language. A translated template
//! would need a table per language; English is what the rest of the interface speaks today.
//!
//! The brief's interview guide, context and reasoning mode are not used: they help a model
//! write, not a ranking choose.
//!
//! [`bm25::tokenize`]: crate::engines::search::bm25::tokenize

mod themes;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;
use uuid::Uuid;

use self::themes::{shown, themes};
use crate::engines::ai::text::{Spaces, normalize, one_line};
use crate::engines::ai::{Section, SectionBrief, Source, Usage, citation};
use crate::engines::search::bm25::{Analyzer, Document, Index};

/// Passages quoted at most, over all themes.
pub const MAX_PASSAGES: usize = 30;
/// Themes at most, "Other passages" included.
pub const MAX_THEMES: usize = 6;
/// Quotes shown per theme.
pub const QUOTES_PER_THEME: usize = 3;
/// Shorter utterances ("Yes, exactly.") are not findings.
pub const MIN_WORDS: usize = 4;
/// Longer utterances are quoted by their most relevant sentences.
pub const MAX_QUOTE_WORDS: usize = 80;
/// Words of the window quoted from a single sentence longer than [`MAX_QUOTE_WORDS`].
pub const FRAGMENT_WORDS: usize = 40;
/// Utterances scoring below this share of the best score are not relevant enough.
pub const RELATIVE_CUTOFF: f32 = 0.2;
/// The line under the heading.
pub const ENGINE_NOTE: &str = "_Extractive summary made by the offline engine: verbatim quotes from the transcripts, \
    selected and grouped by shared words, without a language model._";
/// The line of a section whose prompt the material does not answer.
pub const NOT_COVERED: &str = "**Not covered.** The material has nothing on this prompt.";
/// The heading of the passages that share no theme.
pub const OTHER_PASSAGES: &str = "### Other passages";

/// Sentences per quoted window of a long utterance.
const MAX_WINDOW_SENTENCES: usize = 3;
/// Shared themes before "Other passages".
const MAX_SHARED_THEMES: usize = MAX_THEMES - 1;
/// Terms shorter than this (in characters) make no theme.
const MIN_TERM_CHARS: usize = 3;
/// Weight of the research goals' scores in the ranking (the prompt's and the title's: 1).
const GOALS_FACTOR: f32 = 0.5;
/// Text of the material its language is guessed from, when the brief names none.
const SAMPLE_BYTES: usize = 16 * 1024;
/// Weight of the cue words' scores in the ranking.
const CUE_FACTOR: f32 = 0.5;
/// Theme weight factor of a term of the query.
const QUERY_TERM_FACTOR: f32 = 0.5;

/// Words of prompts that describe the report, not its subject (English: the prompts are), in
/// lower case and separated by spaces.
const META_WORDS: &str = "\
    answer answers asked cite compare count describe described each evidence example explain finding \
    findings give group groups identify interview interviewee interviewees interviews lead list many mention \
    mentioned merge note often order paragraph participant participants point quote quoted quotes rank report \
    representative respondent respondents said say says section sentence separate show source sources state \
    statement statements summarise summarize summary support supporting tell told verbatim words write";

/// What people say when they speak of a subject a prompt names: for each subject, the
/// prompt words that name it and the cue words of speech about it (English, lower case).
/// They let a prompt find the passages on its subject that share none of its words.
const CUES: &[(&str, &str)] = &[
    (
        "pain pains problem problems frustration frustrations frustrates issue issues severe severity struggle",
        "annoying frustrating frustrated hate hard difficult slow lost losing waste wasted chaos mess painful \
         problem broken fails failed stuck wrong nobody manually worst",
    ),
    (
        "workaround workarounds cope behaviours behaviors routines habits",
        "instead manually hand spreadsheet export copy paste workaround ourselves every usually",
    ),
    (
        "feature features request requests requested wish wishes priorities recommendations",
        "wish wished missing could should would ideally automatically save better",
    ),
    (
        "works well easy pleasant positives love",
        "love like easy fast great helpful nice works simple quick",
    ),
    (
        "surprising surprises surprised assumptions contradicted unclear",
        "surprised surprising actually expected turns realised realized thought",
    ),
    (
        "switch switching forces hire hiring fire firing criteria adopt",
        "switched tried chose picked replaced moved decided gave price cost trial",
    ),
    (
        "goals goal motivations motivation jobs job outcome",
        "trying goal able want need faster sure",
    ),
    ("cause causes root why", "because reason means since"),
];

/// Fillers of spoken English and everyday words of time and quantity that make poor theme
/// names, in lower case and separated by spaces.
const FILLERS: &str = "\
    actually also always back basically bit come could day days definitely even every first five four get go \
    going got guess half hello honestly hour hours just kind know last like little lot lots make maybe mean \
    minute minutes month months much need never new next ok okay one people per pretty probably really right \
    said say see six someone something sort still stuff sure take ten thank thanks thing things think three \
    time times today totally two uh um via want way week weeks well would yeah year years yes";

/// Writes a section for `brief` from `sources` (all utterances of the report's records) by
/// quoting them (see the module docs). Uses no tokens.
pub fn write_section(brief: &SectionBrief, sources: &[Source]) -> Section {
    let analyzer = analyzer_for(brief.language.as_deref(), sources);
    let material = Material::new(sources, &analyzer);
    let query = Query::new(brief, &material, &analyzer);
    let passages = material.passages(&query, &analyzer, &brief.quoted_before);

    let mut markdown = format!("## {}\n\n{ENGINE_NOTE}\n", one_line(&brief.title, Spaces::Collapsed));
    if passages.is_empty() {
        markdown.push('\n');
        markdown.push_str(NOT_COVERED);
        markdown.push('\n');
    }
    for theme in themes(&passages, &material, &query) {
        markdown.push('\n');
        markdown.push_str(&theme.heading);
        markdown.push_str("\n\n");
        let records: BTreeSet<Uuid> = theme
            .members
            .iter()
            .filter_map(|&n| passages.get(n))
            .map(|passage| passage.source.record_id)
            .collect();
        markdown.push_str(&format!(
            "{} {} from {} {}\n",
            theme.members.len(),
            plural(theme.members.len(), "passage", "passages"),
            records.len(),
            plural(records.len(), "interview", "interviews"),
        ));
        for n in shown(&theme.members, &passages) {
            let Some(passage) = passages.get(n) else {
                continue;
            };
            let speaker = one_line(&passage.source.speaker, Spaces::Collapsed);
            markdown.push_str(&format!("\n> \"{}\" — ", passage.quote));
            if !speaker.is_empty() {
                markdown.push_str(&speaker);
                markdown.push(' ');
            }
            markdown.push_str(&citation(passage.source));
            markdown.push('\n');
        }
    }
    Section {
        markdown,
        usage: Usage::default(),
        quoted: passages
            .iter()
            .map(|passage| (passage.source.record_id, passage.source.utterance_id))
            .collect(),
    }
}

/// The analysis of `language`, or (none asked for) of the material's language, as its stop
/// words tell.
fn analyzer_for(language: Option<&str>, sources: &[Source]) -> Analyzer {
    let language = language.map(str::to_owned).or_else(|| {
        let mut sample = String::new();
        for source in sources {
            if sample.len() >= SAMPLE_BYTES {
                break;
            }
            sample.push_str(&source.text);
            sample.push('\n');
        }
        crate::engines::search::bm25::guess_language(&sample).map(str::to_owned)
    });
    Analyzer::new(language.as_deref())
}

/// Groups short texts (highlights) into themes as a section's passages are grouped (see
/// the module docs, step 3): each theme's label and the positions of its texts, largest
/// first. Texts that share no theme are in none.
pub fn group(texts: &[String], language: Option<&str>) -> Vec<(String, Vec<usize>)> {
    let sources: Vec<Source> = texts
        .iter()
        .enumerate()
        .map(|(n, text)| Source {
            record_id: Uuid::nil(),
            record_name: String::new(),
            utterance_id: n as i64,
            speaker: String::new(),
            is_respondent: true,
            start_ms: None,
            text: text.clone(),
        })
        .collect();
    let analyzer = analyzer_for(language, &sources);
    let material = Material::of(sources.iter().collect(), &analyzer);
    let query = Query::none();
    let passages: Vec<Passage> = sources
        .iter()
        .map(|source| {
            let quote = one_line(&source.text, Spaces::Collapsed);
            let terms = salient_terms(&quote, &analyzer);
            Passage { source, quote, terms }
        })
        .collect();
    let (themes, _) = themes::shared_themes(&passages, &material, &query);
    themes
        .into_iter()
        .filter_map(|theme| {
            let label = theme.heading.strip_prefix("### Theme: ")?.to_owned();
            Some((label, theme.members))
        })
        .collect()
}

/// The utterances that may be quoted, indexed.
struct Material<'a> {
    candidates: Vec<&'a Source>,
    index: Index<usize>,
}

impl<'a> Material<'a> {
    fn new(sources: &'a [Source], analyzer: &Analyzer) -> Self {
        let any_respondent = sources.iter().any(|source| source.is_respondent);
        let candidates: Vec<&Source> = sources
            .iter()
            .filter(|source| source.is_respondent || !any_respondent)
            .filter(|source| source.text.unicode_words().nth(MIN_WORDS - 1).is_some())
            .collect();
        Self::of(candidates, analyzer)
    }

    fn of(candidates: Vec<&'a Source>, analyzer: &Analyzer) -> Self {
        let index = Index::build(
            candidates
                .iter()
                .enumerate()
                .map(|(n, source)| Document::new(n, source.text.as_str())),
            analyzer.language(),
        );
        Self { candidates, index }
    }

    fn analyzer(&self) -> &Analyzer {
        self.index.analyzer()
    }

    /// The BM25 inverse document frequency, over the candidates, of the term of `word` (one word
    /// without apostrophes, as [`salient_terms`] splits them).
    fn idf(&self, word: &str) -> f32 {
        let n = self.candidates.len() as f32;
        let df = self.index.search(word, usize::MAX).len() as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The passages to quote, most relevant first: those the section's own prompt finds (its
    /// title, its words and their cues), the research goals only adding weight; by the goals
    /// alone when the prompt finds nothing. Utterances in `quoted_before` are left to the
    /// sections that quoted them; when nothing else is relevant, the few best are quoted again.
    fn passages(&self, query: &Query, analyzer: &Analyzer, quoted_before: &[(Uuid, i64)]) -> Vec<Passage<'a>> {
        let scores = |queries: &[(&String, f32)]| {
            let mut scores = vec![0.0_f32; self.candidates.len()];
            for &(text, factor) in queries {
                for hit in self.index.search(text, usize::MAX) {
                    if let Some(score) = scores.get_mut(hit.key) {
                        *score += factor * hit.score;
                    }
                }
            }
            scores
        };
        let own = scores(&[(&query.text, 1.0), (&query.title, 1.0)]);
        let cues = scores(&[(&query.cues, CUE_FACTOR)]);
        let goals = scores(&[(&query.goals, GOALS_FACTOR)]);
        let prompt_finds = own.iter().chain(&cues).any(|&score| score > 0.0);
        let mut ranked: Vec<(f32, usize)> = Vec::new();
        let mut best = 0.0_f32;
        for (n, ((&own, &cues), &goals)) in own.iter().zip(&cues).zip(&goals).enumerate() {
            if (prompt_finds && own + cues > 0.0) || (!prompt_finds && goals > 0.0) {
                ranked.push((own + cues + goals, n));
                // The cutoff is relative to the best match of the prompt's and goals' own
                // words: cues reorder, but do not raise the bar.
                best = best.max(own + goals);
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let relevant: Vec<(f32, usize)> = ranked
            .into_iter()
            .filter(|&(score, _)| score >= best * RELATIVE_CUTOFF)
            .collect();
        let earlier: HashSet<(Uuid, i64)> = quoted_before.iter().copied().collect();
        let is_fresh = |n: usize| {
            self.candidates
                .get(n)
                .is_some_and(|source| !earlier.contains(&(source.record_id, source.utterance_id)))
        };
        let any_fresh = relevant.iter().any(|&(_, n)| is_fresh(n));
        // Quoted before and nothing else: the few best again, as the section's evidence.
        let most = if any_fresh { MAX_PASSAGES } else { QUOTES_PER_THEME };

        let mut passages = Vec::new();
        let mut seen = HashSet::new();
        for (_, n) in relevant {
            if passages.len() == most {
                break;
            }
            let Some(&source) = self.candidates.get(n) else {
                continue;
            };
            if any_fresh && !is_fresh(n) {
                continue;
            }
            let Some(quote) = quote(&source.text, query, analyzer) else {
                continue;
            };
            if !seen.insert(normalize(&quote)) {
                continue;
            }
            let terms = salient_terms(&quote, analyzer);
            passages.push(Passage { source, quote, terms });
        }
        passages
    }
}

/// What to quote of an utterance: all of it, its best sentences, or its best words.
fn quote(text: &str, query: &Query, analyzer: &Analyzer) -> Option<String> {
    if text.unicode_words().nth(MAX_QUOTE_WORDS).is_none() && !has_quotation_mark(text) {
        return Some(one_line(text, Spaces::Collapsed));
    }
    let weight = |slice: &str| -> f32 {
        let mut terms = analyzer.tokenize(slice);
        terms.sort_unstable();
        terms.dedup();
        terms.iter().filter_map(|term| query.terms.get(term)).sum()
    };

    // Whole sentences: the best window of one to three.
    let sentences: Vec<Range<usize>> = text
        .split_sentence_bound_indices()
        .filter_map(|(at, sentence)| {
            let start = at + (sentence.len() - sentence.trim_start().len());
            let end = at + sentence.trim_end().len();
            (start < end).then_some(start..end)
        })
        .collect();
    let mut best: Option<(f32, usize, Range<usize>)> = None;
    for first in 0..sentences.len() {
        for count in 1..=MAX_WINDOW_SENTENCES {
            let (Some(from), Some(to)) = (sentences.get(first), sentences.get(first + count - 1)) else {
                break;
            };
            let range = from.start..to.end;
            let Some(slice) = text.get(range.clone()) else {
                continue;
            };
            let words = slice.unicode_words().count();
            if !(MIN_WORDS..=MAX_QUOTE_WORDS).contains(&words) || has_quotation_mark(slice) {
                continue;
            }
            let score = weight(slice);
            // Better: a higher score, then fewer sentences, then earlier (the loop order).
            let better = |(best, best_count, _): &(f32, usize, Range<usize>)| {
                score > *best || (score == *best && count < *best_count)
            };
            if score > 0.0 && best.as_ref().is_none_or(better) {
                best = Some((score, count, range));
            }
        }
    }
    if let Some((_, _, range)) = best {
        return text.get(range).map(|text| one_line(text, Spaces::Collapsed));
    }

    // A run-on sentence: the best window of words, marked where it was cut.
    let words: Vec<Range<usize>> = text
        .unicode_word_indices()
        .map(|(at, word)| at..at + word.len())
        .collect();
    let mut best: Option<(f32, Range<usize>, bool, bool)> = None;
    for first in 0..words.len().saturating_sub(FRAGMENT_WORDS - 1).max(1) {
        let Some(last) = (first + FRAGMENT_WORDS).min(words.len()).checked_sub(1) else {
            break;
        };
        let (Some(from), Some(to)) = (words.get(first), words.get(last)) else {
            break;
        };
        let range = from.start..to.end;
        let Some(slice) = text.get(range.clone()) else {
            continue;
        };
        if last + 1 - first < MIN_WORDS || has_quotation_mark(slice) {
            continue;
        }
        let score = weight(slice);
        if score > 0.0 && best.as_ref().is_none_or(|(best, ..)| score > *best) {
            best = Some((score, range, first > 0, last + 1 < words.len()));
        }
    }
    let (_, range, cut_before, cut_after) = best?;
    let slice = one_line(text.get(range)?, Spaces::Collapsed);
    Some(format!(
        "{}{slice}{}",
        if cut_before { "… " } else { "" },
        if cut_after { " …" } else { "" }
    ))
}

/// What the section is to be about.
struct Query {
    /// Title and prompt, without meta words.
    text: String,
    title: String,
    /// Words that often say what the prompt asks about ([`CUES`]).
    cues: String,
    goals: String,
    /// Their terms, and the research goals', with their IDF over the material (cues' at
    /// [`CUE_FACTOR`]).
    terms: HashMap<String, f32>,
}

impl Query {
    /// No query: every passage is as relevant as another.
    fn none() -> Self {
        Self {
            text: String::new(),
            title: String::new(),
            cues: String::new(),
            goals: String::new(),
            terms: HashMap::new(),
        }
    }

    fn new(brief: &SectionBrief, material: &Material, analyzer: &Analyzer) -> Self {
        let strip = |text: &str| -> String {
            text.unicode_words()
                .filter(|word| !is_listed(META_WORDS, word))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let title = strip(&brief.title);
        let text = format!("{title}\n{}", strip(&brief.prompt));
        let goals = strip(&brief.research_goals);
        let cues = if matches!(analyzer.language(), None | Some("en")) {
            cues_of(&format!("{} {}", brief.title, brief.prompt))
        } else {
            String::new()
        };
        let mut terms = HashMap::new();
        for word in text.unicode_words().chain(goals.unicode_words()) {
            for part in word.split(is_apostrophe) {
                for term in analyzer.tokenize(part) {
                    terms.entry(term).or_insert_with(|| material.idf(part));
                }
            }
        }
        for word in cues.split_whitespace() {
            for term in analyzer.tokenize(word) {
                terms.entry(term).or_insert_with(|| material.idf(word) * CUE_FACTOR);
            }
        }
        Self {
            text,
            title,
            cues,
            goals,
            terms,
        }
    }
}

/// The cue words of the subjects `prompt` asks about (English), separated by spaces.
fn cues_of(prompt: &str) -> String {
    let words: HashSet<String> = prompt.unicode_words().map(str::to_lowercase).collect();
    CUES.iter()
        .filter(|(triggers, _)| triggers.split_whitespace().any(|trigger| words.contains(trigger)))
        .map(|(_, cues)| *cues)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A quote chosen for the section.
struct Passage<'a> {
    source: &'a Source,
    /// Verbatim (whitespace collapsed, `…` where a run-on sentence was cut).
    quote: String,
    /// Salient terms of the quote with the words they come from, in order.
    terms: Vec<(String, String)>,
}

/// The terms of `text` that may name a theme, each with the word it comes from.
fn salient_terms(text: &str, analyzer: &Analyzer) -> Vec<(String, String)> {
    let fillers = matches!(analyzer.language(), None | Some("en"));
    let mut terms = Vec::new();
    for word in text.unicode_words() {
        for part in word.split(is_apostrophe) {
            if fillers && is_listed(FILLERS, part) {
                continue;
            }
            for term in analyzer.tokenize(part) {
                if term.chars().count() >= MIN_TERM_CHARS && term.chars().any(char::is_alphabetic) {
                    terms.push((term, part.to_owned()));
                }
            }
        }
    }
    terms
}

/// Whether `word`, in lower case, is in the space-separated `list`.
fn is_listed(list: &str, word: &str) -> bool {
    let word = word.to_lowercase();
    list.split_whitespace().any(|listed| listed == word)
}

/// The apostrophes at which [`crate::engines::search::bm25`] splits words.
fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02BC}' | '\u{FF07}')
}

fn has_quotation_mark(text: &str) -> bool {
    text.contains([
        '"', '\u{201C}', '\u{201D}', '\u{201E}', '\u{201F}', '\u{00AB}', '\u{00BB}',
    ])
}

fn plural<'s>(n: usize, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::domain::report::ReasoningMode;
    use crate::engines::ai::quotes::check_quotes;

    const PAIN_POINTS: &str = "List the problems and frustrations respondents described. For each pain point: what \
       happens, when it happens, what it costs them (time, money, stress), how often it was mentioned, and verbatim \
       quotes. Order by severity.";
    const JOBS: &str = "Identify the jobs respondents are trying to get done. Write each as a job statement: 'When \
       <situation>, I want to <motivation>, so I can <expected outcome>.' Separate functional, emotional and social \
       jobs, and support each with quotes.";
    const FEATURES: &str = "List the features and changes respondents asked for, explicitly or implicitly. For each: \
       the request in a sentence, who asked, the underlying need (why they want it), and quotes. Merge duplicates \
       and count them.";
    const GOALS: &str = "Understand how dispatch, product and support teams handle incoming orders, tickets and \
       releases, where work gets lost or takes too long, and what they would change.";

    fn brief(title: &str, prompt: &str, goals: &str) -> SectionBrief {
        SectionBrief {
            title: title.to_owned(),
            prompt: prompt.to_owned(),
            research_goals: goals.to_owned(),
            interview_guide: String::new(),
            context: None,
            context_expand: None,
            language: Some("en".to_owned()),
            mode: ReasoningMode::Balanced,
            quoted_before: Vec::new(),
        }
    }

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    }

    fn utterance(record: u8, name: &str, id: usize, speaker: &str, interviewer: &str, start_ms: Option<i64>) -> Source {
        Source {
            record_id: Uuid::from_bytes([record; 16]),
            record_name: name.to_owned(),
            utterance_id: id as i64,
            speaker: speaker.to_owned(),
            is_respondent: speaker != interviewer,
            start_ms,
            text: String::new(),
        }
    }

    /// `Speaker: text` lines of the given speakers; other lines continue the last utterance.
    fn plain(record: u8, name: &str, text: &str, speakers: &[&str], interviewer: &str) -> Vec<Source> {
        let mut sources: Vec<Source> = Vec::new();
        for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
            let turn = line.split_once(": ").filter(|(speaker, _)| speakers.contains(speaker));
            match (turn, sources.last_mut()) {
                (Some((speaker, text)), _) => {
                    let mut source = utterance(record, name, sources.len() + 1, speaker, interviewer, None);
                    source.text = text.to_owned();
                    sources.push(source);
                }
                (None, Some(last)) => {
                    last.text.push('\n');
                    last.text.push_str(line);
                }
                (None, None) => {}
            }
        }
        sources
    }

    /// WebVTT cues as Zoom (`Name: text`) and Teams (`<v Name>text</v>`) write them.
    fn vtt(record: u8, name: &str, text: &str, interviewer: &str) -> Vec<Source> {
        let mut sources = Vec::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some((start, _)) = line.split_once(" --> ") else {
                continue;
            };
            let ms = start.split([':', '.']).fold(0_i64, |acc, part| {
                let value: i64 = part.trim().parse().unwrap_or_default();
                if part.len() == 3 {
                    acc * 1000 + value
                } else {
                    acc * 60 + value
                }
            });
            let cue = lines.next().unwrap_or_default();
            let (speaker, text) = match cue.strip_prefix("<v ") {
                Some(rest) => rest.trim_end_matches("</v>").split_once('>').unwrap_or_default(),
                None => cue.split_once(": ").unwrap_or_default(),
            };
            let mut source = utterance(record, name, sources.len() + 1, speaker, interviewer, Some(ms));
            source.text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            sources.push(source);
        }
        sources
    }

    fn material() -> Vec<Source> {
        let mut sources = plain(
            1,
            "Northwind Logistics",
            &fixture("text_plain_interview.txt"),
            &["Interviewer", "Respondent"],
            "Interviewer",
        );
        sources.extend(vtt(2, "Anna Schmidt (Zoom)", &fixture("vtt_zoom.vtt"), "Ben Okafor"));
        sources.extend(vtt(3, "Priya Raman (Teams)", &fixture("vtt_teams.vtt"), "Ben Okafor"));
        sources
    }

    /// The quote and the rest of a quote line, `> "{quote}" — {rest}`.
    fn quote_line(line: &str) -> Option<(&str, &str)> {
        let (quote, rest) = line.strip_prefix("> \"")?.rsplit_once("\" — ")?;
        Some((quote, rest))
    }

    fn is_count_line(line: &str) -> bool {
        let words: Vec<&str> = line.split(' ').collect();
        matches!(
            words.as_slice(),
            [n, "passage" | "passages", "from", m, "interview" | "interviews"]
                if n.parse::<usize>().is_ok_and(|n| n > 0) && m.parse::<usize>().is_ok_and(|m| m > 0)
        )
    }

    /// Checks the shape of a section and that every quote is verbatim with the right citation;
    /// returns the number of themes.
    fn assert_well_formed(section: &Section, title: &str, sources: &[Source]) -> usize {
        let markdown = &section.markdown;
        assert_eq!(section.usage, Usage::default());
        let mut lines = markdown.lines().filter(|line| !line.trim().is_empty());
        assert_eq!(lines.next(), Some(format!("## {title}").as_str()), "{markdown}");
        assert_eq!(lines.next(), Some(ENGINE_NOTE), "{markdown}");
        let (mut themes, mut quotes) = (0, 0);
        // The theme being read: its label and whether one of its quotes says it.
        let mut label: Option<(String, bool)> = None;
        let named = |label: &Option<(String, bool)>| {
            if let Some((label, said)) = label {
                assert!(said, "a theme is named by a phrase of its quotes: {label}\n{markdown}");
            }
        };
        for line in lines {
            if let Some(name) = line.strip_prefix("### Theme: ") {
                themes += 1;
                named(&label);
                let words: Vec<&str> = name.unicode_words().collect();
                assert!(
                    (2..=4).contains(&words.len()),
                    "a phrase of 2 to 4 words: {line}\n{markdown}"
                );
                assert!(
                    words.iter().any(|word| !is_listed(FILLERS, word)),
                    "not only common words: {line}"
                );
                label = Some((name.to_lowercase(), false));
            } else if line == OTHER_PASSAGES {
                themes += 1;
                named(&label);
                label = None;
            } else if is_count_line(line) || line == NOT_COVERED {
            } else if let Some((quote, rest)) = quote_line(line) {
                quotes += 1;
                if let Some((name, said)) = &mut label {
                    *said |= quote.to_lowercase().contains(name.as_str());
                }
                let pieces: Vec<&str> = quote.split('…').map(str::trim).filter(|p| !p.is_empty()).collect();
                assert!(!pieces.is_empty());
                let found = sources.iter().any(|source| {
                    let text = one_line(&source.text, Spaces::Collapsed);
                    pieces.iter().all(|piece| text.contains(piece))
                        && source.is_respondent
                        && rest == format!("{} {}", source.speaker, citation(source))
                });
                assert!(found, "not verbatim or wrongly cited: {line}\n{markdown}");
            } else {
                panic!("a line that is neither a template line nor a quote: {line:?}\n{markdown}");
            }
        }
        named(&label);
        let checked = check_quotes(markdown, sources);
        assert_eq!(checked.removed, 0, "{markdown}");
        assert_eq!(checked.verified, quotes);
        assert_eq!(&checked.markdown, markdown);
        assert!(themes <= MAX_THEMES);
        themes
    }

    #[test]
    fn sections_from_the_fixtures_quote_respondents_verbatim() {
        let sources = material();
        assert!(sources.len() > 30, "the fixtures parsed: {}", sources.len());
        for (title, prompt) in [
            ("Pain points", PAIN_POINTS),
            ("Frustrations", "What frustrates users?"),
            ("Jobs and job statements", JOBS),
            ("Requested features", FEATURES),
        ] {
            let section = write_section(&brief(title, prompt, GOALS), &sources);
            let themes = assert_well_formed(&section, title, &sources);
            assert!(themes >= 1, "{}", section.markdown);
            assert!(!section.markdown.contains(NOT_COVERED));
            assert!(!section.markdown.contains("Ben Okafor ["), "{}", section.markdown);
            assert!(!section.markdown.contains("Interviewer ["), "{}", section.markdown);
        }
    }

    #[test]
    fn the_sections_of_a_preset_quote_passages_of_their_own() {
        let sources = material();
        for preset in crate::domain::system_presets::SYSTEM_PRESETS {
            let mut quoted_before: Vec<(Uuid, i64)> = Vec::new();
            let mut passages = 0;
            for prompt in preset.prompts {
                let mut brief = brief(prompt.title, prompt.text, GOALS);
                brief.quoted_before = quoted_before.clone();
                let section = write_section(&brief, &sources);
                assert_well_formed(&section, prompt.title, &sources);
                let quotes = section.markdown.lines().filter_map(quote_line).count();
                assert_eq!(quotes.min(QUOTES_PER_THEME), section.quoted.len().min(QUOTES_PER_THEME));
                let repeated = section.quoted.iter().filter(|q| quoted_before.contains(q)).count();
                // Another section's passages only when nothing else answers, and then a few.
                assert!(
                    repeated == 0 || (repeated == section.quoted.len() && repeated <= QUOTES_PER_THEME),
                    "{}: {repeated} of {} passages quoted before\n{}",
                    preset.title,
                    section.quoted.len(),
                    section.markdown
                );
                passages += section.quoted.len() - repeated;
                quoted_before.extend(section.quoted);
            }
            assert!(passages >= preset.prompts.len(), "{}", preset.title);
        }
    }

    #[test]
    fn pain_points_find_the_pains_of_the_fixtures() {
        let sources = material();
        let goals = "Learn what slows teams down and what problems cost them time.";
        let section = write_section(&brief("Pain points", PAIN_POINTS, goals), &sources);
        assert_well_formed(&section, "Pain points", &sources);
        let markdown = &section.markdown;
        // The dispatcher's hand sorting and the tester's failed routing tool.
        assert!(
            markdown.contains("The problem was: it didn't know our depots."),
            "{markdown}"
        );
        assert!(markdown.contains("[Northwind Logistics, #"), "{markdown}");
    }

    #[test]
    fn themes_group_passages_by_shared_words() {
        let mut sources = Vec::new();
        let texts = [
            (
                "Ada",
                "The invoices always show the wrong VAT rate for our Austrian customers.",
            ),
            (
                "Ada",
                "Pricing is confusing, nobody understands the tiers on the pricing page.",
            ),
            (
                "Bo",
                "Our invoices arrive late and the VAT number is missing from half of them.",
            ),
            (
                "Bo",
                "The pricing tiers changed twice this year without any warning at all.",
            ),
            ("Cy", "Fixing the invoices by hand costs my team a full day each month."),
            ("Cy", "I like the new dashboard colours, they look fresh."),
        ];
        for (n, (speaker, text)) in texts.iter().enumerate() {
            let record = if *speaker == "Cy" { 2 } else { 1 };
            let mut source = utterance(record, &format!("Call {record}"), n + 1, speaker, "Interviewer", None);
            source.text = (*text).to_owned();
            sources.push(source);
        }
        let brief = brief(
            "Billing problems",
            "What problems do customers have with invoices, VAT and pricing?",
            "",
        );
        let section = write_section(&brief, &sources);
        let themes = assert_well_formed(&section, "Billing problems", &sources);
        let markdown = &section.markdown;
        assert!(themes >= 2, "{markdown}");
        // Named by a phrase its passages say, never by a lone word.
        assert!(
            markdown.contains("### Theme: Fixing the invoices\n\n3 passages from 2 interviews\n"),
            "{markdown}"
        );
        assert!(
            markdown.contains("### Theme: Pricing tiers\n\n2 passages from 1 interview\n"),
            "{markdown}"
        );
        // Not relevant to the prompt.
        assert!(!markdown.contains("dashboard colours"), "{markdown}");
    }

    #[test]
    fn output_is_deterministic() {
        let sources = material();
        let brief = brief("Pain points", PAIN_POINTS, GOALS);
        let first = write_section(&brief, &sources);
        for _ in 0..5 {
            assert_eq!(write_section(&brief, &sources), first);
        }
    }

    #[test]
    fn nothing_relevant_says_so() {
        let brief = brief("Pain points", PAIN_POINTS, GOALS);
        let section = write_section(&brief, &[]);
        assert_eq!(
            section.markdown,
            format!("## Pain points\n\n{ENGINE_NOTE}\n\n{NOT_COVERED}\n")
        );
        assert!(section.markdown.contains("The material has nothing on this prompt."));
        assert_well_formed(&section, "Pain points", &[]);

        // Material about other things, only interviewer questions, only short answers.
        let sources = material();
        let pricing = self::brief("Pricing", "What do respondents think of the subscription price?", "");
        let section = write_section(&pricing, &sources);
        assert!(section.markdown.contains(NOT_COVERED), "{}", section.markdown);
        assert_well_formed(&section, "Pricing", &sources);

        let mut question = utterance(1, "Call", 1, "Interviewer", "Interviewer", None);
        question.text = "What are your biggest pain points with invoices?".to_owned();
        let mut short = utterance(1, "Call", 2, "Ada", "Interviewer", None);
        short.text = "Invoices, mostly.".to_owned();
        let section = write_section(
            &self::brief("Invoices", "Pain points with invoices", ""),
            &[question, short],
        );
        assert!(section.markdown.contains(NOT_COVERED), "{}", section.markdown);
    }

    #[test]
    fn long_utterances_are_quoted_by_whole_sentences() {
        let filler = "We talked about the weather and the holidays for a while before getting to work. ";
        let text = format!(
            "{}The export to Excel breaks every time a report has more than ten thousand rows. {}",
            filler.repeat(6),
            filler.repeat(6)
        );
        let mut source = utterance(1, "Call", 1, "Ada", "Interviewer", Some(61_000));
        source.text = text;
        // Quotation marks in a short utterance: the sentence without them is quoted.
        let mut marks = utterance(1, "Call", 2, "Ada", "Interviewer", Some(90_000));
        marks.text = "They call it the \"fast\" export. The Excel export is slow for large reports.".to_owned();
        let sources = vec![source, marks];
        let section = write_section(&brief("Export", "Problems with the Excel export", ""), &sources);
        assert_well_formed(&section, "Export", &sources);
        let markdown = &section.markdown;
        assert!(
            markdown.contains(
                "> \"The export to Excel breaks every time a report has more than ten thousand rows.\" \
                — Ada [Call, 01:01]"
            ),
            "{markdown}"
        );
        assert!(
            markdown.contains("> \"The Excel export is slow for large reports.\" — Ada [Call, 01:30]"),
            "{markdown}"
        );
    }

    #[test]
    fn run_on_utterances_are_quoted_by_a_marked_window() {
        let words = "and then we went through the whole list again ".repeat(10);
        let text = format!("{words}until the export crashed on the big customer file {words}");
        let mut source = utterance(1, "Call", 1, "Ada", "Interviewer", None);
        source.text = text;
        let sources = vec![source];
        let section = write_section(&brief("Export", "Export crashes", ""), &sources);
        assert_well_formed(&section, "Export", &sources);
        let (quote, _) = section
            .markdown
            .lines()
            .find_map(quote_line)
            .unwrap_or_else(|| panic!("no quote: {}", section.markdown));
        assert!(quote.starts_with("… ") && quote.ends_with(" …"), "{quote}");
        assert!(quote.contains("the export crashed"), "{quote}");
        assert_eq!(quote.trim_matches(['…', ' ']).unicode_words().count(), FRAGMENT_WORDS);
    }

    #[test]
    fn respondents_come_first_but_material_without_any_still_counts() {
        // No utterance marked as a respondent's: all are used.
        let mut a = utterance(1, "Notes", 1, "Team", "Team", None);
        a.text = "The onboarding checklist is too long for new drivers.".to_owned();
        let section = write_section(&brief("Onboarding", "Onboarding problems", ""), &[a.clone()]);
        assert!(
            section.markdown.contains("too long for new drivers"),
            "{}",
            section.markdown
        );
        // With respondents, the interviewer is never quoted.
        let mut b = utterance(1, "Notes", 2, "Ada", "Team", None);
        b.text = "Onboarding took me a week, which felt fine.".to_owned();
        let section = write_section(&brief("Onboarding", "Onboarding problems", ""), &[a, b]);
        assert!(
            !section.markdown.contains("too long for new drivers"),
            "{}",
            section.markdown
        );
        assert!(
            section.markdown.contains("Onboarding took me a week"),
            "{}",
            section.markdown
        );
    }

    #[test]
    fn other_languages_are_stemmed_and_keep_english_template_lines() {
        let texts = [
            "Die Rechnungen kommen jeden Monat zu spät bei uns an.",
            "Mit der Rechnung stimmt die Mehrwertsteuer fast nie.",
            "Das Wetter war schön, wir waren im Urlaub.",
        ];
        let sources: Vec<Source> = texts
            .iter()
            .enumerate()
            .map(|(n, text)| {
                let mut source = utterance(1, "Gespräch", n + 1, "Jana", "Interviewer", Some(n as i64 * 30_000));
                source.text = (*text).to_owned();
                source
            })
            .collect();
        let mut brief = brief("Rechnungen", "Welche Probleme gibt es mit Rechnungen?", "");
        brief.language = Some("de".to_owned());
        let section = write_section(&brief, &sources);
        assert_well_formed(&section, "Rechnungen", &sources);
        let markdown = &section.markdown;
        assert!(markdown.contains("2 passages from 1 interview"), "{markdown}");
        // Spelled as in the quotes: German nouns keep their capital.
        assert!(markdown.contains("### Theme: Rechnungen kommen\n"), "{markdown}");
        assert!(!markdown.contains("Wetter"), "{markdown}");
    }

    #[test]
    fn thirty_thousand_words_are_fast() {
        let vocabulary = [
            "invoice",
            "pricing",
            "export",
            "dashboard",
            "report",
            "team",
            "customer",
            "slow",
            "broken",
            "manual",
            "spreadsheet",
            "weekly",
            "support",
            "ticket",
            "release",
            "planning",
            "driver",
            "route",
            "depot",
            "order",
            "frustrating",
            "problem",
            "hours",
            "money",
            "the",
            "and",
            "we",
            "it",
            "is",
            "really",
            "because",
            "every",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut sources = Vec::new();
        let mut words = 0;
        while words < 30_000 {
            let n = 4 + (next() % 60) as usize;
            let mut text = String::new();
            for i in 0..n {
                text.push_str(vocabulary[(next() % vocabulary.len() as u64) as usize]);
                text.push_str(if i % 12 == 11 { ". " } else { " " });
            }
            words += n;
            let record = (sources.len() / 300) as u8;
            let speaker = if sources.len() % 2 == 0 { "Interviewer" } else { "Ada" };
            let mut source = utterance(
                record,
                &format!("Call {record}"),
                sources.len(),
                speaker,
                "Interviewer",
                None,
            );
            source.text = text.trim_end().to_owned();
            sources.push(source);
        }
        let brief = brief("Pain points", PAIN_POINTS, GOALS);
        let _ = write_section(&brief, &sources);
        let started = Instant::now();
        let section = write_section(&brief, &sources);
        let elapsed = started.elapsed();
        assert_well_formed(&section, "Pain points", &sources);
        // Unoptimised test builds are several times slower than release builds.
        let limit = if cfg!(debug_assertions) {
            Duration::from_millis(500)
        } else {
            Duration::from_millis(100)
        };
        assert!(elapsed < limit, "{elapsed:?}");
        eprintln!("30,000 words: {elapsed:?}");
    }
}
