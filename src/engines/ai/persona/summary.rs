//! The few sentences made from templates: jobs to be done and the summary.

use unicode_segmentation::UnicodeSegmentation;

use super::classify::find_cue;
use super::role::{Role, RoleKind};
use super::units::Unit;
use super::{EXTRACTED_NOTE, SUMMARY_WORDS};
use crate::engines::ai::text::{Spaces, one_line};

/// "When <situation>, I want to <goal>." from an English goal sentence that names its
/// situation; `None` when it does not.
pub(super) fn job_statement(unit: &Unit) -> Option<String> {
    const GOALS: [(&str, &str); 15] = [
        ("i need to", "I"),
        ("i really need to", "I"),
        ("i want to", "I"),
        ("i have to", "I"),
        ("i'd like to", "I"),
        ("i would like to", "I"),
        ("i'm trying to", "I"),
        ("i am trying to", "I"),
        ("i try to", "I"),
        ("i've got to", "I"),
        ("we need to", "we"),
        ("we want to", "we"),
        ("we have to", "we"),
        ("we're trying to", "we"),
        ("we'd like to", "we"),
    ];
    const SITUATIONS: [&str; 5] = ["whenever", "when", "every time", "each time", "any time"];
    let len = unit.folded.len();
    for (cue, subject) in GOALS {
        let Some(goal) = find_cue(&unit.folded, cue) else {
            continue;
        };
        for situation in SITUATIONS {
            let Some(at) = find_cue(&unit.folded, situation) else {
                continue;
            };
            let (situation, wanted) = if at.end <= goal.start {
                (at.end..goal.start, goal.end..len)
            } else if at.start >= goal.end {
                (at.end..len, goal.end..at.start)
            } else {
                continue;
            };
            let situation = strip_connective(trim_job(unit.original(situation)));
            let wanted = trim_job(unit.original(wanted));
            let enough = |text: &str| text.unicode_words().nth(1).is_some();
            if !enough(situation) || !enough(wanted) || situation.contains(['.', '!', '?', ';']) {
                continue;
            }
            return Some(format!("When {situation}, {subject} want to {wanted}."));
        }
    }
    None
}

pub(super) fn trim_job(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '.' | '!' | '…' | '-' | '—' | '–'))
}

/// A situation without the "then" or "so" that leads on to the goal.
pub(super) fn strip_connective(text: &str) -> &str {
    for word in [" then", " so", " and"] {
        if let Some(cut) = text.len().checked_sub(word.len())
            && text.get(cut..).is_some_and(|end| end.eq_ignore_ascii_case(word))
        {
            return trim_job(text.get(..cut).unwrap_or_default());
        }
    }
    text
}

/// Two or three sentences: who, what they want and what holds them back, and how this was made.
pub(super) fn summary(
    name: &str,
    record_name: &str,
    role: Option<&Role>,
    goal: Option<&str>,
    pain: Option<&str>,
    behavior: Option<&str>,
) -> String {
    let mut out = match role {
        Some(Role {
            text,
            kind: RoleKind::Noun,
            ..
        }) => format!(
            "{name}, {}.",
            one_line(text, Spaces::Collapsed).trim_end_matches(['.', ','])
        ),
        Some(Role { text, .. }) => format!("{name}, who says: \"{}\".", one_line(text, Spaces::Collapsed)),
        None => {
            let record = one_line(record_name, Spaces::Collapsed);
            if record.is_empty() {
                format!("{name}, the respondent of this interview.")
            } else {
                format!("{name}, the respondent in \"{record}\".")
            }
        }
    };
    let said = |text: &str| short(one_line(text, Spaces::Collapsed).trim_end_matches(['.', '!', '…', ',', ';', ':']));
    match (goal, pain) {
        (Some(goal), Some(pain)) => out.push_str(&format!(
            " Wants: \"{}\"; held back by: \"{}\".",
            said(goal),
            said(pain)
        )),
        (Some(goal), None) => out.push_str(&format!(" Wants: \"{}\".", said(goal))),
        (None, Some(pain)) => out.push_str(&format!(" Held back by: \"{}\".", said(pain))),
        (None, None) => match behavior {
            Some(behavior) => out.push_str(&format!(" Works like this today: \"{}\".", said(behavior))),
            None => out.push_str(" States no goal or pain in so many words."),
        },
    }
    out.push(' ');
    out.push_str(EXTRACTED_NOTE);
    out
}

/// At most [`SUMMARY_WORDS`] words of `text`, with `…` where it was cut.
pub(super) fn short(text: &str) -> String {
    match text.unicode_word_indices().nth(SUMMARY_WORDS) {
        Some((at, _)) => format!("{} …", text.get(..at).unwrap_or_default().trim_end()),
        None => text.to_owned(),
    }
}
