//! A project's highlights as CSV, one row per highlight, for spreadsheets: quoted as
//! RFC 4180 says (commas, quotes and line breaks inside a cell), UTF-8 with a byte
//! order mark (without one, Excel reads UTF-8 as the local code page), and no cell that
//! a spreadsheet would run as a formula.

use crate::domain::highlight::Highlight;

pub const COLUMNS: [&str; 15] = [
    "highlight_id",
    "record_id",
    "record_name",
    "start_utterance_id",
    "end_utterance_id",
    "start_ms",
    "speaker",
    "is_respondent",
    "quote",
    "tags",
    "note",
    "status",
    "author_email",
    "created_at",
    "link",
];

/// A cell a spreadsheet would take for a formula (`=`, `+`, `-`, `@`, or a tab or
/// carriage return before one) gets a leading `'`, which spreadsheets show as text;
/// OWASP's advice against CSV injection.
pub fn defused(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

/// The address of the moment a highlight starts, as the console links it.
pub fn moment_link(public_url: &str, highlight: &Highlight) -> String {
    format!(
        "{}/r/{}#u{}",
        public_url.trim_end_matches('/'),
        highlight.record_id,
        highlight.start.utterance_id
    )
}

/// The highlights as a CSV document.
pub fn write(highlights: &[Highlight], public_url: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(b"\xEF\xBB\xBF".to_vec());
    out.write_record(COLUMNS)?;
    for highlight in highlights {
        let tags: Vec<&str> = highlight.tags.iter().map(|tag| tag.name.as_str()).collect();
        let row = [
            highlight.id.to_string(),
            highlight.record_id.to_string(),
            highlight.record_name.clone(),
            highlight.start.utterance_id.to_string(),
            highlight.end.utterance_id.to_string(),
            highlight.start_ms.map(|ms| ms.to_string()).unwrap_or_default(),
            highlight.speaker.clone(),
            highlight.is_respondent.to_string(),
            highlight.quote.clone(),
            tags.join("; "),
            highlight.note.clone(),
            highlight.status.as_str().to_owned(),
            highlight.author_email.clone().unwrap_or_default(),
            highlight.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            moment_link(public_url, highlight),
        ];
        out.write_record(row.iter().map(|cell| defused(cell)))?;
    }
    Ok(out.into_inner()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_defused_and_other_text_kept() {
        assert_eq!(defused("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(defused("+1"), "'+1");
        assert_eq!(defused("-2"), "'-2");
        assert_eq!(defused("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(defused("\t=1"), "'\t=1");
        assert_eq!(defused("\r=1"), "'\r=1");
        assert_eq!(defused("It costs = too much"), "It costs = too much");
        assert_eq!(defused(""), "");
    }
}
