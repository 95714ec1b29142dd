//! People's names in text, offline: the names the caller knows (the record's speakers,
//! the workspace's list), given names and family names from word lists, the words after
//! a title (Mrs, Herr, Madame, Señora) or a cue (my name is, je m'appelle, me llamo),
//! and the capitalised words that continue a name found so. A word list's entry that is
//! also an ordinary word (Will, May, Rose, Baker) counts only beside another part of a
//! name or after a title or cue.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::{Finding, Kind};

struct Lists {
    given: HashSet<&'static str>,
    given_ambiguous: HashSet<&'static str>,
    family: HashSet<&'static str>,
    family_ambiguous: HashSet<&'static str>,
}

/// A word list: entries before the line `# ambiguous` and after it.
fn list(text: &'static str) -> (HashSet<&'static str>, HashSet<&'static str>) {
    let mut plain = HashSet::new();
    let mut ambiguous = HashSet::new();
    let mut after = false;
    for line in text.lines().map(str::trim) {
        if line.eq_ignore_ascii_case("# ambiguous") {
            after = true;
        } else if !line.is_empty() && !line.starts_with('#') {
            if after { &mut ambiguous } else { &mut plain }.insert(line);
        }
    }
    (plain, ambiguous)
}

static LISTS: LazyLock<Lists> = LazyLock::new(|| {
    let (given, given_ambiguous) = list(include_str!("given_names.txt"));
    let (family, family_ambiguous) = list(include_str!("surnames.txt"));
    Lists {
        given,
        given_ambiguous,
        family,
        family_ambiguous,
    }
});

/// Words after which a capitalised word is a name (lower case; `.` stripped).
const TITLES: &[&str] = &[
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "dame",
    "herr",
    "frau",
    "fräulein",
    "m",
    "mme",
    "mlle",
    "madame",
    "monsieur",
    "mademoiselle",
    "maître",
    "sr",
    "sra",
    "srta",
    "señor",
    "señora",
    "señorita",
    "don",
    "doña",
    "dña",
    "sig",
    "sig.ra",
    "signor",
    "signora",
    "uncle",
    "aunt",
    "onkel",
    "tante",
];

/// Phrases after which a capitalised word is a name (lower case).
const CUES: &[&str] = &[
    "my name is",
    "my name's",
    "name is",
    "i am called",
    "i'm called",
    "called",
    "named",
    "ask for",
    "speak to",
    "talk to",
    "talked to",
    "spoke to",
    "spoke with",
    "talked with",
    "colleague",
    "manager",
    "boss",
    "husband",
    "wife",
    "partner",
    "daughter",
    "son",
    "friend",
    "mein name ist",
    "ich heiße",
    "ich heisse",
    "heißt",
    "namens",
    "mein kollege",
    "meine kollegin",
    "mein chef",
    "meine chefin",
    "mit",
    "je m'appelle",
    "il s'appelle",
    "elle s'appelle",
    "mon collègue",
    "ma collègue",
    "mon chef",
    "ma cheffe",
    "me llamo",
    "se llama",
    "mi nombre es",
    "mi compañero",
    "mi compañera",
    "mi jefe",
    "mi jefa",
    "con",
    "avec",
];

/// Words joining the parts of a family name (van der Berg, de la Cruz, bin Said).
const PARTICLES: &[&str] = &[
    "van", "von", "der", "den", "de", "la", "le", "da", "di", "del", "dos", "das", "du", "ter", "ten", "bin", "ibn",
    "al", "el", "y", "zu", "mac", "st",
];

/// Capitalised words that never start or continue a name.
const NEVER: &[&str] = &[
    "I",
    "I'm",
    "I've",
    "I'd",
    "I'll",
    "The",
    "A",
    "An",
    "And",
    "But",
    "Or",
    "So",
    "We",
    "You",
    "He",
    "She",
    "They",
    "It",
    "This",
    "That",
    "These",
    "Those",
    "Then",
    "There",
    "Here",
    "What",
    "When",
    "Where",
    "Why",
    "How",
    "Who",
    "Yes",
    "No",
    "Ok",
    "OK",
    "Okay",
    "Well",
    "Oh",
    "Hi",
    "Hello",
    "Thanks",
    "Thank",
    "Please",
    "Sorry",
    "My",
    "Our",
    "Your",
    "His",
    "Her",
    "Their",
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Montag",
    "Dienstag",
    "Mittwoch",
    "Donnerstag",
    "Freitag",
    "Samstag",
    "Sonntag",
    "Januar",
    "Februar",
    "März",
    "Juni",
    "Juli",
    "Oktober",
    "Dezember",
    "Lundi",
    "Mardi",
    "Mercredi",
    "Jeudi",
    "Vendredi",
    "Samedi",
    "Dimanche",
    "Janvier",
    "Février",
    "Mars",
    "Avril",
    "Mai",
    "Juin",
    "Juillet",
    "Août",
    "Septembre",
    "Octobre",
    "Novembre",
    "Décembre",
    "Lunes",
    "Martes",
    "Miércoles",
    "Jueves",
    "Viernes",
    "Sábado",
    "Domingo",
    "Enero",
    "Febrero",
    "Marzo",
    "Abril",
    "Mayo",
    "Junio",
    "Julio",
    "Agosto",
    "Septiembre",
    "Octubre",
    "Noviembre",
    "Diciembre",
    "Ich",
    "Wir",
    "Sie",
    "Er",
    "Es",
    "Der",
    "Die",
    "Das",
    "Und",
    "Aber",
    "Je",
    "Nous",
    "Vous",
    "Il",
    "Elle",
    "Ils",
    "Le",
    "La",
    "Les",
    "Et",
    "Mais",
    "Yo",
    "Nosotros",
    "Él",
    "Ella",
    "El",
    "Los",
    "Las",
    "Y",
    "Pero",
    "Team",
    "Support",
    "Sales",
    "Marketing",
    "Finance",
    "Interviewer",
    "Moderator",
    "Respondent",
    "Participant",
    "Speaker",
    "Customer",
    "Client",
    "User",
    "Admin",
    "Manager",
    "CEO",
    "CTO",
    "CFO",
    "HR",
    "IT",
    "Google",
    "Microsoft",
    "Apple",
    "Amazon",
    "Excel",
    "Slack",
    "Jira",
    "Notion",
    "Salesforce",
    "HubSpot",
    "Zoom",
    "Teams",
    "Outlook",
    "Gmail",
    "SAP",
    "Oracle",
    "Shopify",
    "Stripe",
    "PayPal",
    "Visa",
    "Mastercard",
    "Berlin",
    "Paris",
    "London",
    "Madrid",
    "Munich",
    "München",
    "Hamburg",
    "Lyon",
    "Barcelona",
    "Europe",
    "Germany",
    "France",
    "Spain",
    "English",
    "German",
    "French",
    "Spanish",
    "Christmas",
    "Easter",
    "Q1",
    "Q2",
    "Q3",
    "Q4",
    // Capitalised at a sentence's start in German, French and Spanish: never a name.
    "Im",
    "Am",
    "Um",
    "Zum",
    "Zur",
    "Beim",
    "Vom",
    "Ins",
    "Auf",
    "Bei",
    "Mit",
    "Nach",
    "Vor",
    "Aus",
    "Für",
    "Über",
    "Unter",
    "Dann",
    "Wenn",
    "Weil",
    "Au",
    "Aux",
    "Des",
    "Du",
    "Dans",
    "Pour",
    "Sur",
    "Avec",
    "En",
    "Con",
    "Por",
    "Para",
    "Sin",
    "Del",
    "Al",
];

/// Speaker labels that name a role, not a person.
const ROLE_WORDS: &[&str] = &[
    "interviewer",
    "moderator",
    "respondent",
    "participant",
    "speaker",
    "host",
    "guest",
    "researcher",
    "customer",
    "user",
    "interviewee",
    "facilitator",
    "unknown",
    "assistant",
    "agent",
    "bot",
    "ai",
    "narrator",
    "q",
    "a",
    "p",
    "r",
    "i",
    "me",
    "you",
    "sprecher",
    "sprecherin",
    "teilnehmer",
    "teilnehmerin",
    "interviewerin",
    "befragter",
    "befragte",
    "intervenant",
    "intervenante",
    "enquêteur",
    "enquêtrice",
    "participante",
    "entrevistador",
    "entrevistadora",
    "entrevistado",
    "entrevistada",
    "team",
    "other",
    "all",
    "everyone",
    "audience",
];

/// The names a caller knows, whole and in parts.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Whole names of more than one word, longest first.
    whole: Vec<Vec<String>>,
    /// The first words of the whole names, so most words need no look at them.
    firsts: HashSet<String>,
    /// Single words (parts of the whole names, and one-word names).
    parts: HashSet<String>,
}

impl Known {
    /// Adds a name the caller knows (a workspace's list); parts of one letter are left out.
    pub fn add(&mut self, name: &str) {
        let words: Vec<String> = words_of(name).map(str::to_owned).collect();
        for word in &words {
            if word.chars().count() >= 2 && !PARTICLES.contains(&word.to_lowercase().as_str()) {
                self.parts.insert(word.clone());
            }
        }
        if words.len() > 1 && !self.whole.contains(&words) {
            self.firsts.insert(words[0].clone());
            self.whole.push(words);
            self.whole.sort_by_key(|w| std::cmp::Reverse(w.len()));
        }
    }

    /// Adds a label that may be a name as a whole (a record's name, "Anna"): found only
    /// as written, word for word, and not by its parts.
    pub fn add_label(&mut self, label: &str) {
        let words: Vec<String> = words_of(label).map(str::to_owned).collect();
        let person = !words.is_empty()
            && !label.chars().any(|c| c.is_ascii_digit())
            && words.iter().all(|w| w.chars().next().is_some_and(char::is_uppercase));
        if person && !self.whole.contains(&words) {
            self.firsts.insert(words[0].clone());
            self.whole.push(words);
            self.whole.sort_by_key(|w| std::cmp::Reverse(w.len()));
        }
    }

    /// Adds a speaker's label unless it names a role ("Interviewer", "Speaker 2", "P1").
    pub fn add_speaker(&mut self, label: &str) {
        let words: Vec<&str> = words_of(label).collect();
        let person = !words.is_empty()
            && !label.chars().any(|c| c.is_ascii_digit())
            && words.iter().all(|w| {
                w.chars().next().is_some_and(char::is_uppercase) && !ROLE_WORDS.contains(&w.to_lowercase().as_str())
            });
        if person {
            self.add(label);
        }
    }
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphabetic() || c == '\'' || c == '’' || c == '-'))
        .map(|w| w.trim_matches(['\'', '’', '-']))
        .filter(|w| !w.is_empty())
}

/// A word of the text with where it is.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    start: usize,
    end: usize,
    /// The first word of a sentence (or of the text, or after a colon).
    starts_sentence: bool,
    /// Something other than a space lies between this word and the one before.
    after_break: bool,
}

fn words<'a>(text: &'a str, taken: &[(usize, usize)]) -> Vec<Word<'a>> {
    let mut out = Vec::new();
    let mut start = None;
    let mut sentence = true;
    let mut gap = String::new();
    let push = |out: &mut Vec<Word<'a>>, from: usize, raw_end: usize, sentence: &mut bool, gap: &mut String| {
        // A possessive is not part of the name (Takeshi's).
        let raw = &text[from..raw_end];
        let word = raw
            .strip_suffix("'s")
            .or_else(|| raw.strip_suffix("’s"))
            .unwrap_or(raw)
            .trim_end_matches(['\'', '’', '-']);
        let to = from + word.len();
        let inside_taken = taken.iter().any(|&(s, e)| from < e && to > s);
        if !word.is_empty() && !inside_taken {
            let after_break = gap.chars().any(|c| !c.is_whitespace());
            out.push(Word {
                text: word,
                start: from,
                end: to,
                starts_sentence: *sentence,
                after_break,
            });
        }
        *sentence = false;
        // What was cut off the word (a possessive) lies between it and the next.
        gap.clear();
        gap.push_str(&text[to..raw_end]);
    };
    for (i, c) in text.char_indices() {
        let in_word = c.is_alphabetic() || (start.is_some() && (c == '\'' || c == '’' || c == '-' || c == '.'));
        if in_word {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        if let Some(from) = start.take() {
            // A trailing dot ends the sentence unless the word is a title (Dr.).
            let raw = &text[from..i];
            let (word_end, ends) = match raw.strip_suffix('.') {
                Some(stripped) => (
                    from + stripped.len(),
                    !TITLES.contains(&stripped.to_lowercase().as_str()),
                ),
                None => (i, false),
            };
            push(&mut out, from, word_end, &mut sentence, &mut gap);
            if ends {
                sentence = true;
                gap.push('.');
            }
        }
        if matches!(c, '.' | '!' | '?' | ':' | '\n' | '…' | '¿' | '¡') {
            sentence = true;
        }
        gap.push(c);
    }
    if let Some(from) = start {
        let raw = &text[from..];
        let end = from + raw.trim_end_matches('.').len();
        push(&mut out, from, end, &mut sentence, &mut gap);
    }
    out
}

fn capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase)
        && word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        // ALL CAPS words are acronyms (NASA, CRM), not names.
        && chars.any(char::is_lowercase)
}

fn lower_key(word: &str) -> String {
    word.trim_end_matches('.').to_lowercase()
}

/// Where the text's names are, the known ones first.
pub(super) fn find(text: &str, known: &Known, taken: &[(usize, usize)], out: &mut Vec<Finding>) {
    let lists = &*LISTS;
    let words = words(text, taken);
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        // A known whole name, word by word.
        let may_start_whole = known.firsts.contains(word.text);
        if let Some(len) = known.whole.iter().filter(|_| may_start_whole).find_map(|whole| {
            let fits = whole.len() <= words.len() - i
                && whole.iter().zip(&words[i..]).all(|(a, b)| a == b.text)
                && words[i + 1..i + whole.len()].iter().all(|w| !w.after_break);
            fits.then_some(whole.len())
        }) {
            out.push(Finding::new(Kind::Person, word.start, words[i + len - 1].end));
            i += len;
            continue;
        }
        // Most words are lower case and start nothing (a particle may, after a title).
        if !word.text.starts_with(char::is_uppercase)
            && !PARTICLES.contains(&word.text)
            && !known.parts.contains(word.text)
            && !known.firsts.contains(word.text)
        {
            i += 1;
            continue;
        }
        // A title is not part of the name it introduces (Don Andrés, Herr von Bülow).
        let next_capitalised = words
            .get(i + 1)
            .is_some_and(|next| !next.after_break && (capitalised(next.text) || PARTICLES.contains(&next.text)));
        if TITLES.contains(&lower_key(word.text).as_str()) && next_capitalised {
            i += 1;
            continue;
        }
        let cued = i > 0 && (after_title(&words, i) || after_cue(text, &words, i));
        let is_family = lists.family.contains(word.text);
        let particle_after_title =
            i > 0 && after_title(&words, i) && PARTICLES.contains(&word.text) && next_capitalised;
        let start_kind = if known.parts.contains(word.text) || particle_after_title {
            Some(true)
        } else if !capitalised(word.text) || NEVER.contains(&word.text) {
            None
        } else if lists.given.contains(word.text) || cued || (is_family && !word.starts_sentence) {
            Some(true)
        } else if is_family || lists.given_ambiguous.contains(word.text) || lists.family_ambiguous.contains(word.text) {
            // An ordinary word too, or a family name opening a sentence: a name only with
            // another part of a name after it.
            Some(false)
        } else {
            None
        };
        let Some(sure) = start_kind else {
            i += 1;
            continue;
        };
        // A given name that no list holds, just before a family name (Amélie Girard).
        let mut first = i;
        if is_family && i > 0 && !word.after_break {
            let before = words[i - 1];
            if capitalised(before.text)
                && !NEVER.contains(&before.text)
                && !common_word(before.text)
                && !TITLES.contains(&lower_key(before.text).as_str())
                && out.last().is_none_or(|f: &Finding| f.end < before.start)
            {
                first = i - 1;
            }
        }
        // The name goes on through the capitalised words that are parts of names (and
        // the particles between them); after a given name, through one more capitalised
        // word that is no ordinary word (a family name no list holds).
        let mut last = i;
        let mut j = i + 1;
        let mut unlisted = 0;
        while j < words.len() && j - i <= 4 {
            let next = words[j];
            if next.after_break || next.starts_sentence {
                break;
            }
            let listed = |w: &str| {
                known.parts.contains(w)
                    || lists.family.contains(w)
                    || lists.family_ambiguous.contains(w)
                    || lists.given.contains(w)
            };
            // van der Berg, García y Pérez: a particle joins family names only.
            if PARTICLES.contains(&next.text)
                && words.get(j + 1).is_some_and(|after| {
                    !after.after_break
                        && (lists.family.contains(after.text) || lists.family_ambiguous.contains(after.text))
                })
            {
                j += 1;
                continue;
            }
            if !capitalised(next.text) || NEVER.contains(&next.text) {
                break;
            }
            if !listed(next.text) {
                let after_given = lists.given.contains(words[last].text)
                    || known.parts.contains(words[last].text)
                    || (last == i && cued);
                if unlisted > 0 || !after_given || common_word(next.text) {
                    break;
                }
                unlisted += 1;
            }
            last = j;
            j += 1;
        }
        let whole = last > i || first < i;
        if sure || whole {
            // A lone word that merely starts a sentence needs the list to be sure of it.
            let lone_sentence_start = !whole && word.starts_sentence && !known.parts.contains(word.text) && !cued;
            if !lone_sentence_start || lists.given.contains(word.text) {
                out.push(Finding::new(Kind::Person, words[first].start, words[last].end));
            }
        }
        i = last + 1;
    }
}

/// Whether a capitalised word is likely an ordinary word rather than a name: one of the
/// stop words of the languages we read.
fn common_word(word: &str) -> bool {
    static STOP: LazyLock<HashSet<String>> = LazyLock::new(|| {
        let mut set = HashSet::new();
        for code in ["en", "de", "fr", "es", "it", "nl", "pt"] {
            set.extend(
                stop_words::lookup(code)
                    .unwrap_or_default()
                    .iter()
                    .map(|w| w.to_lowercase()),
            );
        }
        set
    });
    STOP.contains(&word.to_lowercase())
}

fn after_title(words: &[Word<'_>], i: usize) -> bool {
    !words[i].after_break && TITLES.contains(&lower_key(words[i - 1].text).as_str())
}

fn after_cue(text: &str, words: &[Word<'_>], i: usize) -> bool {
    // The longest cue is under 40 bytes: only the end of the text before the word counts.
    let start = words[i].start;
    let from = (start.saturating_sub(40)..=start)
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(start);
    let before = text[from..start].trim_end_matches([' ', ',']).to_lowercase();
    CUES.iter().any(|cue| {
        before.ends_with(cue)
            && before[..before.len() - cue.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphabetic())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, known: &Known) -> Vec<String> {
        let mut out = Vec::new();
        find(text, known, &[], &mut out);
        out.into_iter().map(|f| text[f.start..f.end].to_owned()).collect()
    }

    #[test]
    fn known_names_lists_titles_and_cues() {
        let mut known = Known::default();
        known.add_speaker("Anna Schmidt");
        known.add_speaker("Interviewer");
        known.add_speaker("Speaker 2");
        assert_eq!(
            names("Anna Schmidt said Anna would call.", &known),
            ["Anna Schmidt", "Anna"]
        );
        assert!(names("The Interviewer asked.", &known).is_empty());
        let none = Known::default();
        assert_eq!(
            names("I spoke with Maria González yesterday.", &none),
            ["Maria González"]
        );
        assert_eq!(names("Then Mrs Patel and Dr. Weber came.", &none), ["Patel", "Weber"]);
        assert_eq!(names("My name is Zbigniew, hi.", &none), ["Zbigniew"]);
        assert_eq!(names("Mein Kollege Jonas hat das gemacht.", &none), ["Jonas"]);
        assert!(names("We will use Excel in May in Berlin.", &none).is_empty());
        assert!(names("Will it work? May be.", &none).is_empty());
    }
}
