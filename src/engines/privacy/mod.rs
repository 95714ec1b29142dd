//! Personal data in interview material: found offline ([`Detector`]) and replaced by
//! placeholders (`[PERSON_1]`, `[EMAIL_2]`) before a model sees the text, then mapped
//! back in what the model answers ([`Pseudonyms`]). The kinds: e-mail addresses, phone
//! numbers, payment cards, IBANs, IP addresses, URLs that lead to a person, and people's
//! names (the speakers, the names a workspace lists, and those the name finder sees).
//!
//! Nothing here knows about models or the store: the model client conceals every
//! message it sends and reveals every answer (`ai::openai`), and the use cases say which
//! names are known.

pub mod corpus;
mod names;
mod structured;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use names::Known;

/// A kind of personal value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Person,
    Email,
    Phone,
    Card,
    Iban,
    Ip,
    Url,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Person,
        Kind::Email,
        Kind::Phone,
        Kind::Card,
        Kind::Iban,
        Kind::Ip,
        Kind::Url,
    ];

    /// The placeholder's word: `PERSON` in `[PERSON_1]`.
    pub fn tag(self) -> &'static str {
        match self {
            Kind::Person => "PERSON",
            Kind::Email => "EMAIL",
            Kind::Phone => "PHONE",
            Kind::Card => "CARD",
            Kind::Iban => "IBAN",
            Kind::Ip => "IP",
            Kind::Url => "URL",
        }
    }

    /// The API's name of the kind (`GET /insight/{id}/pii`).
    pub fn key(self) -> &'static str {
        match self {
            Kind::Person => "person",
            Kind::Email => "email",
            Kind::Phone => "phone",
            Kind::Card => "card",
            Kind::Iban => "iban",
            Kind::Ip => "ip",
            Kind::Url => "url",
        }
    }

    /// What an answer shows for a placeholder of this kind that stands for nothing (one
    /// the model made up): never the placeholder itself.
    pub fn stand_in(self) -> &'static str {
        match self {
            Kind::Person => "someone",
            Kind::Email => "an e-mail address",
            Kind::Phone => "a phone number",
            Kind::Card => "a card number",
            Kind::Iban => "a bank account",
            Kind::Ip => "an IP address",
            Kind::Url => "a link",
        }
    }

    fn from_tag(tag: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.tag().eq_ignore_ascii_case(tag))
    }

    /// Which of two overlapping findings wins when they are as long: the one whose
    /// shape is the more certain.
    fn rank(self) -> u8 {
        match self {
            Kind::Email => 0,
            Kind::Url => 1,
            Kind::Iban => 2,
            Kind::Card => 3,
            Kind::Ip => 4,
            Kind::Phone => 5,
            Kind::Person => 6,
        }
    }
}

/// One personal value in a text: its kind and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Finding {
    fn new(kind: Kind, start: usize, end: usize) -> Self {
        Self { kind, start, end }
    }
}

/// Finds personal values in text, with the names the caller knows.
#[derive(Debug, Clone, Default)]
pub struct Detector {
    known: Known,
}

impl Detector {
    pub fn new(known: Known) -> Self {
        Self { known }
    }

    /// Reads a text for the names in it, so that each of their other forms is found
    /// wherever it comes later (a name said whole once, then by its parts).
    pub fn learn(&mut self, text: &str) {
        let found = self.find(text);
        self.known.learn_found(text, &found);
    }

    /// The personal values of `text`, in order, none overlapping.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        structured::find(text, &mut found);
        // Longest first where two start together, then the surer kind.
        found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end), f.kind.rank()));
        let mut kept: Vec<Finding> = Vec::with_capacity(found.len());
        for finding in found {
            match kept.last() {
                Some(last) if finding.start < last.end => {}
                _ => kept.push(finding),
            }
        }
        let taken: Vec<(usize, usize)> = kept.iter().map(|f| (f.start, f.end)).collect();
        let mut people = Vec::new();
        names::find(text, &self.known, &taken, &mut people);
        if !people.is_empty() {
            kept.extend(people);
            kept.sort_by_key(|f| f.start);
        }
        kept
    }
}

/// How many distinct values of each kind a text holds.
pub fn counts(detector: &Detector, texts: &[&str]) -> HashMap<Kind, usize> {
    let mut pseudonyms = Pseudonyms::new(detector.clone());
    for text in texts {
        pseudonyms.learn(text);
    }
    for text in texts {
        pseudonyms.conceal(text);
    }
    Kind::ALL
        .into_iter()
        .map(|kind| (kind, pseudonyms.next[kind as usize] as usize))
        .collect()
}

/// The placeholders of one text or conversation: each value gets one when first seen,
/// numbered per kind, and keeps it.
#[derive(Debug, Clone, Default)]
pub struct Pseudonyms {
    detector: Detector,
    placeholders: HashMap<(Kind, String), String>,
    values: HashMap<String, String>,
    next: [u32; 7],
}

impl Pseudonyms {
    pub fn new(detector: Detector) -> Self {
        Self {
            detector,
            ..Self::default()
        }
    }

    /// Reads a text for the names in it, so that each of their other forms is found
    /// wherever it comes later (a name said whole once, then by its parts).
    pub fn learn(&mut self, text: &str) {
        self.detector.learn(text);
    }

    /// The text with every personal value in it replaced by its placeholder; the names
    /// found in it are remembered as [`Pseudonyms::learn`] does.
    pub fn conceal(&mut self, text: &str) -> String {
        self.reserve(text);
        let found = self.detector.find(text);
        self.detector.known.learn_found(text, &found);
        if found.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for finding in found {
            out.push_str(&text[at..finding.start]);
            out.push_str(&self.placeholder(finding.kind, &text[finding.start..finding.end]));
            at = finding.end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// Placeholders the text already holds (a redacted record's) keep their number and
    /// stand for themselves, so that no value found later takes one of them.
    fn reserve(&mut self, text: &str) {
        if !text.contains('_') {
            return;
        }
        let mut search = 0;
        while let Some(written) = next_placeholder(text, search) {
            search = written.end;
            if let Some(number) = written.number
                && !self.values.contains_key(&written.canonical)
            {
                let next = &mut self.next[written.kind as usize];
                *next = (*next).max(number);
                let literal = text[written.start..written.end].to_owned();
                self.values.insert(written.canonical, literal);
            }
        }
    }

    fn placeholder(&mut self, kind: Kind, value: &str) -> String {
        if let Some(placeholder) = self.placeholders.get(&(kind, value.to_owned())) {
            return placeholder.clone();
        }
        let number = &mut self.next[kind as usize];
        *number += 1;
        let placeholder = format!("[{}_{}]", kind.tag(), number);
        self.placeholders.insert((kind, value.to_owned()), placeholder.clone());
        self.values.insert(placeholder.clone(), value.to_owned());
        placeholder
    }

    /// Whether any value was concealed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The text with the placeholders it holds mapped back to their values. A model may
    /// write one as `[PERSON_1]`, `[Person 1]` or `PERSON_1`; one that stands for nothing
    /// (the model made it up) becomes its kind's [stand-in](Kind::stand_in).
    /// With `json`, the values are escaped as JSON string content.
    pub fn reveal(&self, text: &str, json: bool) -> String {
        if !text.contains('_') && !text.contains('[') {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut search = 0;
        while let Some(Written {
            start,
            end,
            kind,
            canonical,
            ..
        }) = next_placeholder(text, search)
        {
            let value = self.values.get(&canonical).map_or(kind.stand_in(), String::as_str);
            out.push_str(&text[at..start]);
            if json {
                let quoted = serde_json::to_string(value).unwrap_or_default();
                out.push_str(&quoted[1..quoted.len() - 1]);
            } else {
                out.push_str(value);
            }
            at = end;
            search = end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// A placeholder as a text writes it: where, of what kind and number, and its canonical
/// form (`[PERSON_1]`).
struct Written {
    start: usize,
    end: usize,
    kind: Kind,
    number: Option<u32>,
    canonical: String,
}

/// The next placeholder-like word at or after `from`.
fn next_placeholder(text: &str, from: usize) -> Option<Written> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let word_end = i + bytes[i..].iter().take_while(|b| b.is_ascii_alphabetic()).count();
            if let Some(kind) = Kind::from_tag(&text[i..word_end]) {
                let mut j = word_end;
                if j < bytes.len() && (bytes[j] == b'_' || bytes[j] == b' ') {
                    j += 1;
                    let digits = bytes[j..].iter().take_while(|b| b.is_ascii_digit()).count();
                    let after = j + digits;
                    if digits > 0 && (after >= bytes.len() || !bytes[after].is_ascii_alphanumeric()) {
                        let number = &text[j..after];
                        let bracketed = i > 0 && bytes[i - 1] == b'[' && after < bytes.len() && bytes[after] == b']';
                        let underscore = bytes[word_end] == b'_';
                        // `Person 1` alone is too likely to be prose; brackets or `_` say it is ours.
                        if bracketed || underscore {
                            let (start, end) = if bracketed { (i - 1, after + 1) } else { (i, after) };
                            return Some(Written {
                                start,
                                end,
                                kind,
                                number: number.parse().ok(),
                                canonical: format!("[{}_{}]", kind.tag(), number),
                            });
                        }
                    }
                }
            }
            i = word_end;
        } else {
            i += 1;
        }
    }
    None
}

/// Text as a model may see it: concealed by the workspace's pseudonymisation (or sent as
/// it is where the workspace turned that off). Only a [`Cloak`] makes one, and the model
/// client sends nothing else, so no feature can hand a model raw material by mistake.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Cloaked(String);

impl Cloaked {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Pseudonyms shared by the model calls of one piece of work (a report's sections, a
/// chat turn), so that a value keeps its placeholder across them. `None` inside when
/// the workspace turned pseudonymisation off.
#[derive(Debug, Clone)]
pub struct Cloak {
    inner: Option<Arc<Mutex<Pseudonyms>>>,
}

impl Cloak {
    /// Conceals with these names known; seed with the material's texts, in order, so
    /// that the numbering is the material's own whatever part of it a call sends.
    pub fn new(known: Known, seed: &[&str]) -> Self {
        let mut pseudonyms = Pseudonyms::new(Detector::new(known));
        // Twice: a name said whole late in the material is found by its parts early too.
        for text in seed {
            pseudonyms.learn(text);
        }
        for text in seed {
            pseudonyms.conceal(text);
        }
        Self {
            inner: Some(Arc::new(Mutex::new(pseudonyms))),
        }
    }

    /// Conceals what the shapes and the name lists find, with no names known: the cloak of
    /// a model call that no workspace's settings speak for.
    pub fn unknown() -> Self {
        Self::new(Known::default(), &[])
    }

    /// Sends everything as it is: only for a workspace that turned pseudonymisation off.
    pub fn off() -> Self {
        Self { inner: None }
    }

    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    pub fn conceal(&self, text: &str) -> String {
        match &self.inner {
            Some(inner) => inner.lock().unwrap_or_else(|e| e.into_inner()).conceal(text),
            None => text.to_owned(),
        }
    }

    /// The text as a model may see it (see [`Cloaked`]).
    pub fn seal(&self, text: &str) -> Cloaked {
        Cloaked(self.conceal(text))
    }

    pub fn reveal(&self, text: &str, json: bool) -> String {
        match &self.inner {
            Some(inner) => inner.lock().unwrap_or_else(|e| e.into_inner()).reveal(text, json),
            None => text.to_owned(),
        }
    }

    /// How many distinct values of each kind have a placeholder so far.
    pub fn counts(&self) -> HashMap<Kind, usize> {
        let next = match &self.inner {
            Some(inner) => inner.lock().unwrap_or_else(|e| e.into_inner()).next,
            None => [0; 7],
        };
        Kind::ALL
            .into_iter()
            .map(|kind| (kind, next[kind as usize] as usize))
            .collect()
    }

    /// A revealer for a streamed answer.
    pub fn stream(&self) -> StreamReveal {
        StreamReveal {
            cloak: self.clone(),
            pending: String::new(),
        }
    }
}

/// Reveals a streamed answer piece by piece, holding back the end of a piece that may be
/// the start of a placeholder until the next piece says.
#[derive(Debug)]
pub struct StreamReveal {
    cloak: Cloak,
    pending: String,
}

/// The longest placeholder form held back (`[PERSON_12345]`).
const LONGEST_PLACEHOLDER: usize = 16;

impl StreamReveal {
    /// What can be shown of the answer so far, after this piece.
    pub fn push(&mut self, piece: &str) -> String {
        if !self.cloak.is_on() {
            return piece.to_owned();
        }
        self.pending.push_str(piece);
        let hold = held_tail(&self.pending);
        let ready: String = self.pending[..self.pending.len() - hold].to_owned();
        self.pending.drain(..ready.len());
        self.cloak.reveal(&ready, false)
    }

    /// The rest, once the answer ended.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.cloak.reveal(&rest, false)
    }

    /// An attempt was void: forget what was held.
    pub fn restart(&mut self) {
        self.pending.clear();
    }
}

/// How many bytes at the end of `text` could begin a placeholder.
fn held_tail(text: &str) -> usize {
    let tail_start = text.len().saturating_sub(LONGEST_PLACEHOLDER);
    let tail_start = (tail_start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let tail = &text[tail_start..];
    // From the last `[` or the last run of capitals, digits and `_` to the end.
    let from_bracket = tail.rfind('[').filter(|&at| !tail[at..].contains(']'));
    let word_start = tail
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_' || *c == ' ')
        .last()
        .map(|(at, _)| at);
    let word_start = word_start.filter(|&at| tail[at..].trim_start().starts_with(|c: char| c.is_ascii_uppercase()));
    match (from_bracket, word_start) {
        (Some(a), Some(b)) => tail.len() - a.min(b),
        (Some(a), None) | (None, Some(a)) => tail.len() - a,
        (None, None) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloak(speakers: &[&str]) -> Cloak {
        let mut known = Known::default();
        for speaker in speakers {
            known.add_speaker(speaker);
        }
        Cloak::new(known, &[])
    }

    #[test]
    fn conceals_and_reveals_in_any_order_and_form() {
        let cloak = cloak(&["Anna Schmidt"]);
        let sent = cloak.conceal("Anna Schmidt: write to anna@example.org or +44 20 7946 0958.");
        assert_eq!(sent, "[PERSON_1]: write to [EMAIL_1] or [PHONE_1].");
        assert_eq!(cloak.conceal("Anna Schmidt again"), "[PERSON_1] again");
        assert_eq!(
            cloak.reveal(
                "[PHONE_1], then PERSON_1 and [Person_1]; [EMAIL_1] [EMAIL_1] [URL_9]",
                false
            ),
            "+44 20 7946 0958, then Anna Schmidt and Anna Schmidt; anna@example.org anna@example.org a link"
        );
        assert_eq!(
            cloak.reveal("{\"q\": \"[PERSON_1]\"}", true),
            "{\"q\": \"Anna Schmidt\"}"
        );
        assert_eq!(Cloak::off().conceal("anna@example.org"), "anna@example.org");
    }

    #[test]
    fn a_stream_is_revealed_across_its_pieces() {
        let cloak = cloak(&["Anna"]);
        cloak.conceal("Anna and bob@example.org");
        let mut stream = cloak.stream();
        let mut shown = String::new();
        for piece in ["Said by [PER", "SON_1] to [EM", "AIL_1", "]. PERSON", "_1 done [", "x]"] {
            shown.push_str(&stream.push(piece));
        }
        shown.push_str(&stream.finish());
        assert_eq!(shown, "Said by Anna to bob@example.org. Anna done [x]");
    }

    #[test]
    fn placeholders_in_the_material_keep_their_meaning() {
        // A redacted record already says [PERSON_1]: a name found later is not given it.
        let cloak = cloak(&["Tom Becker"]);
        let sent = cloak.conceal("[PERSON_1] said Tom Becker would call [PERSON_2].");
        assert_eq!(sent, "[PERSON_1] said [PERSON_3] would call [PERSON_2].");
        assert_eq!(
            cloak.reveal("[PERSON_3] and [PERSON_1]", false),
            "Tom Becker and [PERSON_1]"
        );
        // One the model made up is never shown as a placeholder.
        assert_eq!(
            cloak.reveal("ask [PERSON_7] at [EMAIL_4]", false),
            "ask someone at an e-mail address"
        );
        assert_eq!(cloak.reveal("no placeholders here", false), "no placeholders here");
    }
}
