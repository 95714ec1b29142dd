//! The persona of one interview's respondent: written by a model ([`model`]), or
//! extracted in the respondent's own words with no model and no network (here).
//!
//! The offline steps below live in `units.rs` (1, 2), `cues.rs` and `classify.rs` (3),
//! `rank.rs`, `role.rs` and `summary.rs` (4); `markdown.rs` writes the document.
//!
//! [`offline_persona`] is extractive and deterministic (same input, same output):
//!
//! 1. **Material.** Only the utterances of respondents are read. When no utterance is marked as
//!    a respondent's, the utterances of every speaker but the one asking the most questions are
//!    read instead (with nobody asking, all of them). The persona is named after the speaker of
//!    the material with the most words (ties: who spoke first).
//! 2. **Sentences.** Each utterance is split into sentences (UAX #29); a sentence longer than
//!    [`MAX_SENTENCE_WORDS`] words (a transcript without punctuation) is cut into clauses at
//!    commas and dashes, and a clause still too long into windows of words. Fillers of speech at
//!    the start ("Um,", "So", "Yeah,") are left out; questions and sentences of fewer than
//!    [`MIN_WORDS`] words are not used. Every unit stays a verbatim slice of its utterance.
//! 3. **Cues.** Units are classified by cue phrases, matched at word boundaries in lower case
//!    with typographic apostrophes made straight: goals ("I need", "I'm trying to"), pains
//!    ("frustrating", "takes forever", "can't"), behaviours and workarounds ("every morning",
//!    "spreadsheet", "by hand"), motivations ("I care about", "matters") and the ideal solution
//!    ("ideally", "I wish", "magic wand"). A unit with an ideal-solution cue is about the ideal
//!    solution; otherwise the earliest goal, pain, behaviour or strong motivation cue decides
//!    (the main clause comes first: "I want to stop wasting time" is a goal); a unit with only a
//!    reason ("because", "so that") is a motivation. Background (team, company, experience,
//!    location) is recognised on its own, and the role from "I'm a …", "I work as …", "my role is
//!    …", "as a …" followed by a role noun (manager, dispatcher, Teamleiterin…), or "I lead / I
//!    manage …" followed by a team or an organisation; the role is the phrase cut at the end of
//!    its clause, at most [`MAX_ROLE_CHARS`] characters. Cues cover English, German, French,
//!    Spanish and Russian: a recognised `language` gets its own cues and English ones (people
//!    switch), an absent or other language gets all of them.
//! 4. **Ranking.** Each list keeps at most [`MAX_ITEMS`] units, the most informative first
//!    (distinct longer words, cue hits, numbers; very long units lose), near-duplicates dropped.
//!    Quotes ([`MIN_QUOTES`] to [`MAX_QUOTES`]) are taken in turn from pains, goals, the ideal
//!    solution, motivations and behaviours, and, when there are too few, from the remaining
//!    sentences. Jobs to be done are the goals, written "When <situation>, I want to <goal>" when
//!    an English goal sentence names its situation ("when", "whenever", "every time"), and the
//!    goal sentence as it stands otherwise.
//!
//! Every item, quote and role is the respondent's own text; only the summary and the jobs to be
//! done add a few fixed template words, and the summary says that it was extracted without a
//! model ([`EXTRACTED_NOTE`]). [`render_markdown`] writes the persona as a document with a fixed
//! set of sections, empty ones saying so ([`NOTHING_HERE`]).

mod classify;
mod cues;
mod markdown;
pub mod model;
mod rank;
mod role;
mod summary;
mod units;

use self::classify::{Kind, classify, has_listed};
use self::cues::{ORGANISATION_NOUNS, cue_sets};
pub use self::markdown::render_markdown;
use self::rank::{choose_quotes, informative, join, rank, similar};
use self::role::find_role;
use self::summary::{job_statement, summary};
use self::units::{Unit, main_speaker, material, units};
use crate::domain::persona::Persona;
use crate::domain::record::Utterance;
use crate::engines::ai::text::{Spaces, one_line};

/// Items per list at most (goals, pains, behaviours, motivations, jobs to be done).
pub const MAX_ITEMS: usize = 6;
/// Quotes at most.
pub const MAX_QUOTES: usize = 6;
/// Quotes at least, when the respondent said that many sentences.
pub const MIN_QUOTES: usize = 3;
/// Characters of the role phrase at most.
pub const MAX_ROLE_CHARS: usize = 80;
/// Sentences with fewer words ("Yes, exactly.") say nothing about the respondent.
pub const MIN_WORDS: usize = 3;
/// Longer sentences are cut into clauses.
pub const MAX_SENTENCE_WORDS: usize = 50;
/// The last sentence of every summary.
pub const EXTRACTED_NOTE: &str = "Extracted from the interview's own words; no model was used.";
/// What an empty section of the Markdown says.
pub const NOTHING_HERE: &str = "Nothing in the interview speaks to this.";
/// The name of a respondent whom the transcript does not name.
pub const UNNAMED: &str = "Respondent";

/// Words per clause when a long sentence is cut.
const CLAUSE_WORDS: usize = 30;
/// Background sentences at most.
const MAX_BACKGROUND: usize = 3;
/// Ideal-solution sentences at most.
const MAX_IDEAL: usize = 2;
/// Words of a goal or pain quoted in the summary.
const SUMMARY_WORDS: usize = 30;
/// Words of a role phrase at most.
const ROLE_WORDS: usize = 12;
/// Characters that end a clause.
const CLAUSE_PUNCTUATION: [char; 16] = [
    ',', '.', ';', ':', '!', '?', '(', ')', '[', ']', '"', '—', '–', '…', '«', '»',
];

/// The persona of the record's respondent(s), from what they said (see the module docs).
pub fn offline_persona(record_name: &str, utterances: &[Utterance], language: Option<&str>) -> Persona {
    let sets = cue_sets(language);
    let material = material(utterances);
    let main = main_speaker(&material);
    let name = main
        .or_else(|| utterances.iter().find(|u| u.is_respondent).map(|u| u.speaker.as_str()))
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or(UNNAMED)
        .to_owned();

    let units = units(&material);
    if units.is_empty() {
        let said = if material.iter().any(|u| !u.text.trim().is_empty()) {
            format!("{name} said too little in this interview to describe who they are.")
        } else {
            let record = one_line(record_name, Spaces::Collapsed);
            if record.is_empty() {
                "There is nothing the respondent said in this interview, so there is nothing to describe.".to_owned()
            } else {
                format!("There is nothing the respondent said in \"{record}\", so there is nothing to describe.")
            }
        };
        return Persona {
            name,
            role: None,
            summary: format!("{said} {EXTRACTED_NOTE}"),
            demographics: None,
            goals: Vec::new(),
            pains: Vec::new(),
            behaviors: Vec::new(),
            motivations: Vec::new(),
            quotes: Vec::new(),
            jobs_to_be_done: Vec::new(),
            ideal_solution: None,
        };
    }

    // The main respondent's sentences first: the role is theirs.
    let by_main: Vec<&Unit> = units
        .iter()
        .filter(|unit| Some(unit.speaker) == main)
        .chain(units.iter().filter(|unit| Some(unit.speaker) != main))
        .collect();
    let role = find_role(&by_main, &sets);

    let mut goals = Vec::new();
    let mut pains = Vec::new();
    let mut behaviors = Vec::new();
    let mut motivations = Vec::new();
    let mut ideal = Vec::new();
    let mut background = Vec::new();
    for unit in &units {
        let class = classify(unit, &sets);
        let is_role = role.as_ref().is_some_and(|role| role.order == unit.order);
        let role_place = role.as_ref().is_some_and(|role| role.place);
        if class.background || (is_role && (role_place || has_listed(unit, ORGANISATION_NOUNS))) {
            background.push(unit);
        }
        let Some((kind, hits)) = class.kind else {
            continue;
        };
        let entry = (unit, informative(unit, hits));
        match kind {
            Kind::Goal => goals.push(entry),
            Kind::Pain => pains.push(entry),
            Kind::Behavior => behaviors.push(entry),
            Kind::Motivation => motivations.push(entry),
            Kind::Ideal => ideal.push(entry),
        }
    }
    let goals = rank(goals, MAX_ITEMS);
    let pains = rank(pains, MAX_ITEMS);
    let behaviors = rank(behaviors, MAX_ITEMS);
    let motivations = rank(motivations, MAX_ITEMS);
    let mut ideal = rank(ideal, MAX_IDEAL);
    ideal.sort_by_key(|unit| unit.order);
    let mut kept: Vec<&Unit> = Vec::new();
    for unit in background {
        if kept.len() < MAX_BACKGROUND && !kept.iter().any(|other| similar(other, unit)) {
            kept.push(unit);
        }
    }
    let demographics = join(&kept);
    let ideal_solution = join(&ideal);

    let quotes = choose_quotes(&units, [&pains, &goals, &ideal, &motivations, &behaviors]);
    let mut jobs: Vec<String> = Vec::new();
    for unit in &goals {
        let job = job_statement(unit).unwrap_or_else(|| unit.text.to_owned());
        if !jobs.contains(&job) {
            jobs.push(job);
        }
    }

    let summary = summary(
        &name,
        record_name,
        role.as_ref(),
        goals.first().map(|unit| unit.text),
        pains.first().map(|unit| unit.text),
        behaviors.first().map(|unit| unit.text),
    );
    let texts = |list: &[&Unit]| list.iter().map(|unit| unit.text.to_owned()).collect::<Vec<_>>();
    Persona {
        name,
        role: role.map(|role| role.text),
        summary,
        demographics,
        goals: texts(&goals),
        pains: texts(&pains),
        behaviors: texts(&behaviors),
        motivations: texts(&motivations),
        quotes,
        jobs_to_be_done: jobs,
        ideal_solution,
    }
}

#[cfg(test)]
mod tests {
    use unicode_segmentation::UnicodeSegmentation;

    use super::units::most_questions;
    use super::*;
    use crate::domain::persona::PersonaQuote;

    fn utterance(id: i64, speaker: &str, is_respondent: bool, text: &str) -> Utterance {
        Utterance {
            id,
            is_respondent,
            speaker: speaker.to_owned(),
            start_ms: Some(id * 15_000),
            end_ms: Some(id * 15_000 + 14_000),
            text: text.to_owned(),
        }
    }

    /// `(speaker, text)` turns, numbered from 1; everyone but `interviewer` is a respondent.
    fn interview(turns: &[(&str, &str)], interviewer: &str) -> Vec<Utterance> {
        turns
            .iter()
            .zip(1..)
            .map(|(&(speaker, text), id)| utterance(id, speaker, speaker != interviewer, text))
            .collect()
    }

    fn dispatch() -> Vec<Utterance> {
        interview(
            &[
                (
                    "Interviewer",
                    "Thanks for joining. Could you tell me a bit about your role?",
                ),
                (
                    "Dana Whitfield",
                    "Sure. I'm a dispatch lead at Northwind Logistics, a regional delivery company. We're a team of \
                     twelve dispatchers based in Leeds, and I've been doing this for 8 years.",
                ),
                (
                    "Interviewer",
                    "What does a typical morning look like? I want to understand your day.",
                ),
                (
                    "Dana Whitfield",
                    "Every morning I export the orders from our ERP into a spreadsheet and build the routes by hand. \
                     It takes forever, usually two hours before the first truck leaves. Honestly the biggest problem \
                     is that the routing tool doesn't know our depots, so I end up fixing every route manually.",
                ),
                (
                    "Interviewer",
                    "That sounds frustrating. Why does that matter so much to you?",
                ),
                (
                    "Dana Whitfield",
                    "Because if the trucks leave late, our customers call me, not the sales team. I care about my \
                     drivers getting home on time.",
                ),
                (
                    "Sam Ortiz",
                    "We use WhatsApp groups to tell the drivers about changes during the day.",
                ),
                (
                    "Interviewer",
                    "What would you like to be different? If you had a magic wand?",
                ),
                (
                    "Dana Whitfield",
                    "When a driver calls in sick, I need to reshuffle all the routes in under ten minutes. I want to \
                     see every truck and every depot on one screen. Ideally the tool would learn our depots once and \
                     never ask again.",
                ),
                ("Dana Whitfield", "Yeah."),
                (
                    "Dana Whitfield",
                    "Honestly, it's frustrating that I can't trust the ETA numbers in the customer portal.",
                ),
            ],
            "Interviewer",
        )
    }

    /// A call transcribed without respondents marked: the researcher asks, Ada answers.
    fn unmarked() -> Vec<Utterance> {
        interview(
            &[
                ("Researcher", "How do you handle invoices today?"),
                (
                    "Ada",
                    "I work as a freelance bookkeeper for about fifteen small shops. Right now I copy every invoice \
                     into Excel by hand on Sunday evenings.",
                ),
                ("Researcher", "What is the hardest part? Where does it go wrong?"),
                (
                    "Ada",
                    "The VAT rates are confusing and I waste half a day each month fixing mistakes. I'd like to \
                     send my clients a clean report every Monday without retyping anything, so I can finally take \
                     weekends off.",
                ),
                ("Researcher", "And if anything were possible?"),
                ("Ada", "I wish the bank feed and the invoices matched themselves."),
            ],
            "nobody",
        )
        .into_iter()
        .map(|mut u| {
            u.is_respondent = false;
            u
        })
        .collect()
    }

    fn german() -> Vec<Utterance> {
        interview(
            &[
                ("Interviewerin", "Erzählen Sie doch kurz, was Sie machen?"),
                (
                    "Jana Krüger",
                    "Ich bin Disponentin bei einer Spedition in Hamburg, wir sind ein Team von zwölf Leuten. Seit \
                     acht Jahren mache ich das jetzt.",
                ),
                ("Interviewerin", "Wie sieht ein normaler Morgen aus?"),
                (
                    "Jana Krüger",
                    "Normalerweise plane ich die Touren in einer Excel-Tabelle, jeden Morgen ab sechs Uhr. Das \
                     Problem ist, dass die Fahrer ständig anrufen und ich alles von Hand umplanen muss. Das ist \
                     wirklich mühsam und dauert ewig.",
                ),
                ("Interviewerin", "Was bräuchten Sie?"),
                (
                    "Jana Krüger",
                    "Ich brauche eine Übersicht über alle Touren auf einem Bildschirm. Mir ist wichtig, dass die \
                     Kunden pünktlich beliefert werden. Idealerweise würde das System Staus selbst erkennen und die \
                     Touren neu planen.",
                ),
            ],
            "Interviewerin",
        )
    }

    fn french() -> Vec<Utterance> {
        interview(
            &[
                ("Enquêteur", "Pouvez-vous vous présenter ?"),
                (
                    "Claire",
                    "Je suis cheffe de projet chez un éditeur de logiciels à Lyon. J’ai besoin de suivre les \
                     demandes des clients sans relancer tout le monde. Le problème, c’est que les tickets se perdent \
                     entre trois outils. D’habitude je note tout dans un tableur. Idéalement, tout serait au même \
                     endroit.",
                ),
            ],
            "Enquêteur",
        )
    }

    fn spanish() -> Vec<Utterance> {
        interview(
            &[
                ("Entrevistador", "¿A qué te dedicas?"),
                (
                    "Lucía",
                    "Soy gerente de operaciones en una cadena de panaderías. Necesito saber cada mañana cuánto pan \
                     sobró en cada tienda. El problema es que los encargados mandan las cifras por WhatsApp y se \
                     pierden. Normalmente lo paso todo a mano a una hoja de cálculo. Sería genial tener un panel \
                     con todas las tiendas.",
                ),
            ],
            "Entrevistador",
        )
    }

    fn russian() -> Vec<Utterance> {
        interview(
            &[
                ("Интервьюер", "Расскажите, чем вы занимаетесь?"),
                (
                    "Ольга",
                    "Я руководитель отдела поддержки в интернет-магазине. Мне нужно видеть все обращения клиентов \
                     в одном месте. Проблема в том, что письма теряются между почтой и чатом. Обычно я вручную \
                     переношу их в таблицу. В идеале система сама бы распределяла обращения по сотрудникам.",
                ),
            ],
            "Интервьюер",
        )
    }

    /// Every fixture with its language.
    fn fixtures() -> Vec<(Vec<Utterance>, Option<&'static str>)> {
        vec![
            (dispatch(), Some("en")),
            (dispatch(), None),
            (unmarked(), None),
            (german(), Some("de")),
            (german(), None),
            (french(), Some("fr-FR")),
            (spanish(), Some("es")),
            (russian(), Some("ru")),
        ]
    }

    /// The utterances a persona may be made of: the respondents', or, with none marked,
    /// everyone's but the one who asks the most.
    fn allowed(utterances: &[Utterance]) -> Vec<&Utterance> {
        material(utterances)
    }

    /// Whether `text` is sentences joined by spaces, each a slice of one of `sources`.
    fn covered(text: &str, sources: &[&Utterance]) -> bool {
        let mut rest = text;
        while !rest.is_empty() {
            let ends = rest
                .char_indices()
                .filter(|&(_, c)| c == ' ')
                .map(|(at, _)| at)
                .chain([rest.len()]);
            let Some(cut) = ends
                .filter(|&at| sources.iter().any(|u| u.text.contains(&rest[..at])))
                .max()
            else {
                return false;
            };
            rest = rest[cut..].trim_start();
        }
        true
    }

    fn items(persona: &Persona) -> Vec<&String> {
        persona
            .goals
            .iter()
            .chain(&persona.pains)
            .chain(&persona.behaviors)
            .chain(&persona.motivations)
            .collect()
    }

    /// The respondent's own words everywhere they should be (see the module docs).
    fn assert_own_words(persona: &Persona, utterances: &[Utterance]) {
        let sources = allowed(utterances);
        for item in items(persona) {
            assert!(
                sources.iter().any(|u| u.text.contains(item.as_str())),
                "not verbatim: {item:?}\n{persona:#?}"
            );
        }
        if let Some(role) = &persona.role {
            assert!(sources.iter().any(|u| u.text.contains(role.as_str())), "{role:?}");
            assert!(role.chars().count() <= MAX_ROLE_CHARS, "{role:?}");
        }
        for text in persona.demographics.iter().chain(&persona.ideal_solution) {
            assert!(covered(text, &sources), "not verbatim: {text:?}\n{persona:#?}");
        }
        for job in &persona.jobs_to_be_done {
            let own = persona.goals.contains(job);
            let template = job.starts_with("When ") && (job.contains(", I want to ") || job.contains(", we want to "));
            assert!(own || template, "{job:?}");
        }
        for quote in &persona.quotes {
            let utterance = sources
                .iter()
                .find(|u| u.id == quote.utterance_id)
                .unwrap_or_else(|| panic!("no such utterance: {quote:?}"));
            assert!(
                utterance.text.contains(&quote.text),
                "{quote:?} not in {:?}",
                utterance.text
            );
        }
        for list in [&persona.goals, &persona.pains, &persona.behaviors, &persona.motivations] {
            assert!(list.len() <= MAX_ITEMS);
        }
        assert!(persona.jobs_to_be_done.len() <= MAX_ITEMS);
        assert!(persona.quotes.len() <= MAX_QUOTES);
        assert!(persona.summary.ends_with(EXTRACTED_NOTE), "{}", persona.summary);
    }

    #[test]
    fn an_english_interview_sorts_the_respondents_sentences() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(persona.name, "Dana Whitfield");
        assert_eq!(persona.role.as_deref(), Some("dispatch lead at Northwind Logistics"));
        assert_eq!(
            persona.goals,
            [
                "When a driver calls in sick, I need to reshuffle all the routes in under ten minutes.",
                "I want to see every truck and every depot on one screen.",
            ]
        );
        assert_eq!(
            persona.pains,
            [
                "Honestly the biggest problem is that the routing tool doesn't know our depots, so I end up fixing \
                 every route manually.",
                "Honestly, it's frustrating that I can't trust the ETA numbers in the customer portal.",
                "It takes forever, usually two hours before the first truck leaves.",
            ]
        );
        assert_eq!(
            persona.behaviors,
            [
                "Every morning I export the orders from our ERP into a spreadsheet and build the routes by hand.",
                // The second respondent's words count too.
                "We use WhatsApp groups to tell the drivers about changes during the day.",
            ]
        );
        assert_eq!(
            persona.motivations,
            [
                "Because if the trucks leave late, our customers call me, not the sales team.",
                "I care about my drivers getting home on time.",
            ]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("Ideally the tool would learn our depots once and never ask again.")
        );
        let demographics = persona.demographics.as_deref().unwrap_or_default();
        assert!(demographics.contains("a regional delivery company"), "{demographics}");
        assert!(
            demographics
                .contains("We're a team of twelve dispatchers based in Leeds, and I've been doing this for 8 years."),
            "{demographics}"
        );
        assert!(
            persona
                .summary
                .starts_with("Dana Whitfield, dispatch lead at Northwind Logistics. Wants: \"When a driver")
        );
        assert!(
            persona
                .summary
                .contains("; held back by: \"Honestly the biggest problem"),
            "{}",
            persona.summary
        );
        assert_own_words(&persona, &dispatch());
    }

    #[test]
    fn jobs_to_be_done_name_the_situation_only_when_the_respondent_does() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(
            persona.jobs_to_be_done,
            [
                "When a driver calls in sick, I want to reshuffle all the routes in under ten minutes.",
                "I want to see every truck and every depot on one screen.",
            ]
        );
        let utterances = interview(
            &[
                ("Ana", "I need to call every driver myself when the ferry is late."),
                (
                    "Ana",
                    "Whenever a new client signs, we need to set up their depots by hand.",
                ),
                ("Ana", "I want a single login for all of it."),
            ],
            "Interviewer",
        );
        let persona = offline_persona("Call", &utterances, Some("en"));
        let mut jobs = persona.jobs_to_be_done.clone();
        jobs.sort();
        assert_eq!(
            jobs,
            [
                "I want a single login for all of it.",
                "When a new client signs, we want to set up their depots by hand.",
                "When the ferry is late, I want to call every driver myself.",
            ]
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn quotes_are_verbatim_slices_of_the_respondents_utterances() {
        for (utterances, language) in fixtures() {
            let persona = offline_persona("Call", &utterances, language);
            assert!(
                (MIN_QUOTES..=MAX_QUOTES).contains(&persona.quotes.len()),
                "{:#?}",
                persona.quotes
            );
            for quote in &persona.quotes {
                let utterance = utterances
                    .iter()
                    .find(|u| u.id == quote.utterance_id)
                    .unwrap_or_else(|| panic!("{quote:?}"));
                assert!(utterance.text.contains(&quote.text), "{quote:?}");
                assert!(
                    utterance.is_respondent || !utterances.iter().any(|u| u.is_respondent),
                    "{quote:?}"
                );
                assert!(!quote.text.trim().is_empty());
            }
        }
        // Pains and goals come first.
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(persona.quotes.first().map(|q| q.utterance_id), Some(4));
        assert!(
            persona
                .quotes
                .iter()
                .any(|q| q.text.starts_with("When a driver calls in sick"))
        );
    }

    #[test]
    fn nothing_the_interviewer_said_appears_anywhere() {
        for (utterances, language) in fixtures() {
            let persona = offline_persona("Call", &utterances, language);
            let markdown = render_markdown(&persona);
            let interviewer = most_questions(&utterances).unwrap_or_default();
            let mut everything = vec![markdown.clone(), persona.summary.clone()];
            everything.extend(items(&persona).into_iter().cloned());
            everything.extend(persona.jobs_to_be_done.iter().cloned());
            everything.extend(persona.quotes.iter().map(|q| q.text.clone()));
            everything.extend(persona.role.iter().cloned());
            everything.extend(persona.demographics.iter().cloned());
            everything.extend(persona.ideal_solution.iter().cloned());
            for utterance in utterances.iter().filter(|u| u.speaker == interviewer) {
                for (_, sentence) in utterance.text.split_sentence_bound_indices() {
                    let sentence = sentence.trim().trim_end_matches(['?', '.', '!']);
                    if sentence.unicode_words().count() < 3 {
                        continue;
                    }
                    for text in &everything {
                        assert!(!text.contains(sentence), "{sentence:?} in {text:?}");
                    }
                }
            }
            assert!(!markdown.contains(interviewer), "{markdown}");
        }
        // The interviewer's own cue phrases ("frustrating", "I want to", "magic wand") were left alone.
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        let markdown = render_markdown(&persona);
        assert!(!markdown.contains("sounds frustrating"));
        assert!(!markdown.contains("understand your day"));
        assert!(!markdown.contains("magic wand"));
    }

    #[test]
    fn output_is_deterministic() {
        for (utterances, language) in fixtures() {
            let first = offline_persona("Call", &utterances, language);
            let markdown = render_markdown(&first);
            for _ in 0..3 {
                let again = offline_persona("Call", &utterances, language);
                assert_eq!(again, first);
                assert_eq!(render_markdown(&again), markdown);
            }
        }
    }

    #[test]
    fn markdown_has_every_section_in_order() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        let markdown = render_markdown(&persona);
        assert!(markdown.starts_with("# Dana Whitfield\n\n**Role:** dispatch lead at Northwind Logistics\n"));
        let headings: Vec<&str> = markdown.lines().filter(|line| line.starts_with('#')).collect();
        assert_eq!(
            headings,
            [
                "# Dana Whitfield",
                "## Summary",
                "## Background",
                "## Jobs to be done",
                "## Motivations",
                "## Pains",
                "## Behaviours and workarounds",
                "## Ideal solution",
                "## Quotes",
            ]
        );
        assert!(!markdown.contains(NOTHING_HERE), "{markdown}");
        let section = |title: &str| -> String {
            let start = markdown
                .find(&format!("## {title}\n"))
                .unwrap_or_else(|| panic!("{title}"));
            let rest = &markdown[start + title.len() + 4..];
            rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
        };
        // Quoted pains show where they were said; the others are list items.
        let pains = section("Pains");
        assert!(
            pains.contains(
                "> \"Honestly the biggest problem is that the routing tool doesn't know our depots, so I end up \
                 fixing every route manually.\" (#4)"
            ),
            "{pains}"
        );
        assert!(
            pains.contains("- It takes forever, usually two hours before the first truck leaves.\n"),
            "{pains}"
        );
        let quotes = section("Quotes");
        let lines: Vec<&str> = quotes.lines().filter(|line| !line.is_empty()).collect();
        assert_eq!(lines.len(), persona.quotes.len());
        for (line, quote) in lines.iter().zip(&persona.quotes) {
            assert_eq!(*line, format!("> \"{}\" (#{})", quote.text, quote.utterance_id));
        }
        assert!(section("Background").contains("- **About them:** I'm a dispatch lead"));
        assert!(section("Jobs to be done").contains("- When a driver calls in sick, I want to reshuffle"));
        assert!(section("Ideal solution").contains("Ideally the tool would learn our depots"));
        assert!(section("Summary").contains(EXTRACTED_NOTE));
    }

    #[test]
    fn empty_sections_say_so_and_line_breaks_stay_in_the_quote() {
        let persona = Persona {
            name: "Speaker 1".to_owned(),
            role: None,
            summary: "Speaker 1. Extracted from the interview's own words; no model was used.".to_owned(),
            demographics: None,
            goals: Vec::new(),
            pains: vec!["The export\nbreaks.".to_owned(), "Nobody answers the phone.".to_owned()],
            behaviors: Vec::new(),
            motivations: Vec::new(),
            quotes: vec![
                PersonaQuote {
                    text: "The export\nbreaks.".to_owned(),
                    utterance_id: 3,
                },
                PersonaQuote {
                    text: "Nobody answers the phone when the export breaks, ever.".to_owned(),
                    utterance_id: 7,
                },
            ],
            jobs_to_be_done: Vec::new(),
            ideal_solution: None,
        };
        let markdown = render_markdown(&persona);
        assert_eq!(markdown.matches(NOTHING_HERE).count(), 5, "{markdown}");
        for title in [
            "Background",
            "Jobs to be done",
            "Motivations",
            "Behaviours and workarounds",
            "Ideal solution",
        ] {
            assert!(
                markdown.contains(&format!("## {title}\n\n{NOTHING_HERE}\n")),
                "{title}\n{markdown}"
            );
        }
        // A line break stays inside the blockquote.
        assert!(markdown.contains("> \"The export\n> breaks.\" (#3)\n"), "{markdown}");
        // A pain that is not itself a quote gets the quotes that show it.
        assert!(
            markdown.contains(
                "- Nobody answers the phone.\n  > \"Nobody answers the phone when the export breaks, ever.\" (#7)\n"
            ),
            "{markdown}"
        );
    }

    #[test]
    fn without_marked_respondents_the_one_asking_is_left_out() {
        let utterances = unmarked();
        let persona = offline_persona("Bookkeeping call", &utterances, None);
        assert_eq!(persona.name, "Ada");
        assert_eq!(
            persona.role.as_deref(),
            Some("freelance bookkeeper for about fifteen small shops")
        );
        assert_eq!(
            persona.pains,
            ["The VAT rates are confusing and I waste half a day each month fixing mistakes."]
        );
        assert_eq!(
            persona.behaviors,
            ["Right now I copy every invoice into Excel by hand on Sunday evenings."]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("I wish the bank feed and the invoices matched themselves.")
        );
        assert!(persona.goals[0].starts_with("I'd like to send my clients a clean report"));
        let markdown = render_markdown(&persona);
        assert!(
            !markdown.contains("Researcher") && !markdown.contains("hardest part"),
            "{markdown}"
        );
        assert!(
            persona.quotes.iter().all(|q| q.utterance_id % 2 == 0),
            "{:?}",
            persona.quotes
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn nothing_said_gives_an_empty_persona_that_says_so() {
        let only_questions = vec![
            utterance(1, "Interviewer", false, "Hello, can you hear me?"),
            utterance(2, "Interviewer", false, "Are you there?"),
        ];
        let blank = vec![
            utterance(1, "Interviewer", false, "What tools do you use?"),
            utterance(2, "Speaker 2", true, "   "),
        ];
        for (utterances, name) in [(Vec::new(), UNNAMED), (only_questions, UNNAMED), (blank, "Speaker 2")] {
            let persona = offline_persona("Silent call", &utterances, Some("en"));
            assert_eq!(persona.name, name);
            assert!(items(&persona).is_empty() && persona.quotes.is_empty() && persona.jobs_to_be_done.is_empty());
            assert_eq!((persona.role, persona.demographics.clone()), (None, None));
            assert_eq!(persona.ideal_solution, None);
            assert_eq!(
                persona.summary,
                format!(
                    "There is nothing the respondent said in \"Silent call\", so there is nothing to describe. \
                     {EXTRACTED_NOTE}"
                )
            );
        }
        // Said something, but too little to use.
        let short = vec![
            utterance(1, "Interviewer", false, "Do you use the export?"),
            utterance(2, "Participant 2", true, "Yes."),
        ];
        let persona = offline_persona("Short call", &short, None);
        assert_eq!(persona.name, "Participant 2");
        assert!(
            persona.summary.starts_with("Participant 2 said too little"),
            "{}",
            persona.summary
        );
        assert!(items(&persona).is_empty() && persona.quotes.is_empty());

        let markdown = render_markdown(&offline_persona("Silent call", &[], None));
        assert!(markdown.starts_with("# Respondent\n"), "{markdown}");
        // Every section but the summary is empty.
        assert_eq!(markdown.matches(NOTHING_HERE).count(), 7, "{markdown}");
    }

    #[test]
    fn a_german_interview_uses_german_cues() {
        let utterances = german();
        let persona = offline_persona("Disposition", &utterances, Some("de-DE"));
        assert_eq!(persona.name, "Jana Krüger");
        assert_eq!(
            persona.role.as_deref(),
            Some("Disponentin bei einer Spedition in Hamburg")
        );
        assert_eq!(
            persona.goals,
            ["Ich brauche eine Übersicht über alle Touren auf einem Bildschirm."]
        );
        assert_eq!(
            persona.pains,
            [
                "Das Problem ist, dass die Fahrer ständig anrufen und ich alles von Hand umplanen muss.",
                "Das ist wirklich mühsam und dauert ewig.",
            ]
        );
        assert_eq!(
            persona.behaviors,
            ["Normalerweise plane ich die Touren in einer Excel-Tabelle, jeden Morgen ab sechs Uhr."]
        );
        assert_eq!(
            persona.motivations,
            ["Mir ist wichtig, dass die Kunden pünktlich beliefert werden."]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("Idealerweise würde das System Staus selbst erkennen und die Touren neu planen.")
        );
        let demographics = persona.demographics.as_deref().unwrap_or_default();
        assert!(
            demographics.contains("wir sind ein Team von zwölf Leuten"),
            "{demographics}"
        );
        assert!(
            demographics.contains("Seit acht Jahren mache ich das jetzt."),
            "{demographics}"
        );
        // Not English: the goal stays as it was said.
        assert_eq!(persona.jobs_to_be_done, persona.goals);
        // Without a language, all cues are tried: the same persona.
        assert_eq!(offline_persona("Disposition", &utterances, None), persona);
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn french_spanish_and_russian_cues_find_role_goal_pain_and_ideal() {
        let cases = [
            (
                french(),
                "fr",
                "cheffe de projet chez un éditeur de logiciels à Lyon",
                "J’ai besoin de suivre les demandes des clients sans relancer tout le monde.",
                "Le problème, c’est que les tickets se perdent entre trois outils.",
                "D’habitude je note tout dans un tableur.",
                "Idéalement, tout serait au même endroit.",
            ),
            (
                spanish(),
                "es",
                "gerente de operaciones en una cadena de panaderías",
                "Necesito saber cada mañana cuánto pan sobró en cada tienda.",
                "El problema es que los encargados mandan las cifras por WhatsApp y se pierden.",
                "Normalmente lo paso todo a mano a una hoja de cálculo.",
                "Sería genial tener un panel con todas las tiendas.",
            ),
            (
                russian(),
                "ru",
                "руководитель отдела поддержки в интернет-магазине",
                "Мне нужно видеть все обращения клиентов в одном месте.",
                "Проблема в том, что письма теряются между почтой и чатом.",
                "Обычно я вручную переношу их в таблицу.",
                "В идеале система сама бы распределяла обращения по сотрудникам.",
            ),
        ];
        for (utterances, language, role, goal, pain, behavior, ideal) in cases {
            for language in [Some(language), None] {
                let persona = offline_persona("Call", &utterances, language);
                assert_eq!(persona.role.as_deref(), Some(role), "{persona:#?}");
                assert_eq!(persona.goals, [goal], "{persona:#?}");
                assert_eq!(persona.pains, [pain], "{persona:#?}");
                assert_eq!(persona.behaviors, [behavior], "{persona:#?}");
                assert_eq!(persona.ideal_solution.as_deref(), Some(ideal), "{persona:#?}");
                assert_own_words(&persona, &utterances);
            }
        }
    }

    #[test]
    fn roles_are_cut_at_the_end_of_their_phrase_or_not_taken() {
        let role = |text: &str| {
            let utterances = [utterance(1, "Kim", true, text)];
            offline_persona("Call", &utterances, None).role
        };
        assert_eq!(
            role("I'm a senior product manager at a logistics startup, and I own the routing roadmap.").as_deref(),
            Some("senior product manager at a logistics startup")
        );
        assert_eq!(
            role("I manage a team of five dispatchers and two drivers.").as_deref(),
            Some("I manage a team of five dispatchers")
        );
        assert_eq!(
            role("My role is head of customer operations.").as_deref(),
            Some("head of customer operations")
        );
        assert_eq!(
            role("As a result we lost the client, and as an engineering manager I felt responsible.").as_deref(),
            Some("engineering manager")
        );
        assert_eq!(role("I'm a bit tired of all these tools, to be honest."), None);
        assert_eq!(role("I'm the one who calls every driver in the morning."), None);
        assert_eq!(role("I manage to get it done somehow, most days."), None);
        let long = role(
            "I work as a regional operations coordinator for the northern distribution centres of a very large \
             national grocery retailer with stores everywhere.",
        )
        .unwrap_or_default();
        assert!(
            long.starts_with("regional operations coordinator for the northern"),
            "{long}"
        );
        assert!(long.chars().count() <= MAX_ROLE_CHARS, "{long}");
        assert!(
            !long.ends_with(" a") && !long.ends_with(" of") && !long.ends_with(" the"),
            "{long}"
        );
    }

    #[test]
    fn run_on_sentences_are_cut_into_clauses() {
        let text = "so yeah we get the orders in the morning and then we look at the trucks and the drivers and \
                    the depots and everything, and honestly the problem is that the planning tool keeps crashing \
                    whenever we load more than two hundred stops, and then somebody has to redo the whole plan in \
                    a spreadsheet by hand which takes the whole morning and the drivers wait and wait and the \
                    customers keep calling us about where their parcels are";
        let utterances = [
            utterance(1, "Interviewer", false, "Walk me through it?"),
            utterance(2, "Lee", true, text),
        ];
        let persona = offline_persona("Call", &utterances, Some("en"));
        assert!(!persona.pains.is_empty(), "{persona:#?}");
        for item in items(&persona) {
            assert!(item.unicode_words().count() <= MAX_SENTENCE_WORDS, "{item}");
        }
        assert!(
            persona
                .pains
                .iter()
                .any(|pain| pain.contains("the problem is that the planning tool keeps crashing")),
            "{persona:#?}"
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn repeated_sentences_are_kept_once() {
        let utterances = interview(
            &[
                ("Interviewer", "What do you need?"),
                ("Mo", "I need to see all the open tickets on one page."),
                ("Interviewer", "Anything else?"),
                ("Mo", "Well, I need to see all the open tickets on one page!"),
                ("Mo", "It's frustrating to click through five tabs every single time."),
            ],
            "Interviewer",
        );
        let persona = offline_persona("Call", &utterances, Some("en"));
        assert_eq!(persona.goals, ["I need to see all the open tickets on one page."]);
        let texts: Vec<&str> = persona.quotes.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(
            texts.iter().filter(|t| t.contains("open tickets")).count(),
            1,
            "{texts:?}"
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn generated_transcripts_keep_to_the_respondents_words() {
        let answers = [
            "I need to export the report every Friday.",
            "The problem is that nobody updates the sheet.",
            "We use a shared spreadsheet for the roster, mostly.",
            "Ideally everything would sync by itself!",
            "Because our clients pay late, cash is always tight.",
            "I'm an office manager at a dental practice in Porto.",
            "It's frustrating, really, really frustrating…",
            "Ich brauche einen Überblick über alle Termine.",
            "Das Problem ist die doppelte Eingabe.",
            "Я хочу видеть все заказы сразу.",
            "Uh, yeah.",
            "???",
            "",
            "  \n  ",
            "I care about my team — they deserve better tools.",
            "When the scanner fails, I have to type every code manually.",
            "Mr. Smith said the app \"just works\" but it can't handle returns.",
            "emoji 🚚🚚 and CJK 配送が遅い and tabs\tand\nnew lines that I hate.",
        ];
        let questions = [
            "What do you need?",
            "Why is that hard?",
            "I want to know more, what do you use?",
            "If you had a magic wand, what would you change?",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..40 {
            let mut utterances = Vec::new();
            let marked = round % 4 != 0;
            for id in 1..=(2 + next(14)) as i64 {
                let interviewer = id % 2 == 1;
                let text = if interviewer {
                    questions[next(questions.len())].to_owned()
                } else {
                    (0..1 + next(3))
                        .map(|_| answers[next(answers.len())])
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let speaker = if interviewer {
                    "Interviewer"
                } else if next(4) == 0 {
                    "Speaker 3"
                } else {
                    "Speaker 2"
                };
                utterances.push(utterance(id, speaker, marked && !interviewer, &text));
            }
            let language = [Some("en"), Some("de"), None, Some("xx")][next(4)];
            let persona = offline_persona("Generated", &utterances, language);
            assert_own_words(&persona, &utterances);
            assert_eq!(offline_persona("Generated", &utterances, language), persona);
            let markdown = render_markdown(&persona);
            for question in questions {
                assert!(!markdown.contains(question), "{question}\n{markdown}");
            }
            assert!(markdown.contains("\n## Quotes\n"));
        }
    }
}
