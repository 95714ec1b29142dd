//! Where quotes and their citations stand in a Markdown answer: paragraphs, code left
//! out, quotation marks that pair up, and the `[record name, mm:ss]` after a quote (see
//! the rules in `quotes/mod.rs`).

use std::ops::Range;

use super::is_word_char;

/// Byte ranges of the paragraphs of `markdown` that may hold quotes: runs of lines without
/// blank lines, cut before list items, headings and table rows, code fences left out.
pub(super) fn paragraphs(markdown: &str) -> Vec<Range<usize>> {
    let mut paragraphs = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for line in markdown.split_inclusive('\n') {
        let range = offset..offset + line.trim_end_matches(['\n', '\r']).len();
        offset += line.len();
        let content = line
            .trim_start_matches(|c: char| c == '>' || c.is_whitespace())
            .trim_end();
        let fence_mark = fence_marker(content);
        if let Some((mark, len)) = fence {
            if fence_mark.is_some_and(|(m, l)| m == mark && l >= len && content.trim_start_matches(m).is_empty()) {
                fence = None;
            }
            continue;
        }
        if fence_mark.is_some() {
            paragraphs.extend(current.take());
            fence = fence_mark;
            continue;
        }
        if content.is_empty() {
            paragraphs.extend(current.take());
            continue;
        }
        match current.as_mut() {
            Some(paragraph) if !starts_block(content) => paragraph.end = range.end,
            _ => {
                paragraphs.extend(current.take());
                current = Some(range);
            }
        }
    }
    paragraphs.extend(current);
    paragraphs
}

/// The fence character and length when the line opens or closes a fenced code block.
pub(super) fn fence_marker(content: &str) -> Option<(char, usize)> {
    let mark = content.chars().next().filter(|&c| c == '`' || c == '~')?;
    let len = content.chars().take_while(|&c| c == mark).count();
    (len >= 3).then_some((mark, len))
}

/// Whether a line (without blockquote markers and indentation) starts a new block.
pub(super) fn starts_block(content: &str) -> bool {
    let digits = content.chars().take_while(char::is_ascii_digit).count();
    let after_digits = content.get(digits..).unwrap_or_default();
    content.starts_with('#')
        || content.starts_with('|')
        || ["- ", "* ", "+ "].iter().any(|marker| content.starts_with(marker))
        || matches!(content, "-" | "*" | "+")
        || (digits > 0 && (after_digits.starts_with(". ") || after_digits.starts_with(") ")))
}

/// Byte ranges of the inline code spans in `range` of `markdown`.
pub(super) fn code_spans(markdown: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let text = markdown.get(range.clone()).unwrap_or_default();
    let runs: Vec<(usize, usize)> = {
        let mut runs = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c == '`' {
                let mut len = 1;
                while chars.next_if(|&(_, c)| c == '`').is_some() {
                    len += 1;
                }
                runs.push((at, len));
            }
        }
        runs
    };
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(&(start, len)) = runs.get(i) {
        let closing = runs.iter().skip(i + 1).position(|&(_, l)| l == len);
        match closing {
            Some(k) => {
                let end_index = i + 1 + k;
                if let Some(&(end, _)) = runs.get(end_index) {
                    spans.push(range.start + start..range.start + end + len);
                }
                i = end_index + 1;
            }
            None => i += 1,
        }
    }
    spans
}

pub(super) struct Quote {
    /// The quote with its marks (an unclosed one: its opening mark and text).
    pub(super) outer: Range<usize>,
    /// Between the marks.
    pub(super) inner: Range<usize>,
}

/// The closing marks that end a quote opened by `open`.
pub(super) fn closers(open: char) -> &'static [char] {
    match open {
        '"' => &['"', '\u{201D}'],
        '\u{201C}' => &['\u{201D}', '"'],
        '\u{201E}' => &['\u{201C}', '\u{201D}', '"'],
        '\u{00AB}' => &['\u{00BB}'],
        _ => &[],
    }
}

/// The quotes of one paragraph, in order. A mark that opens a quote and is never closed
/// quotes up to the next citation, or to the paragraph's end: a model that forgets the
/// closing mark does not get its text past the check.
pub(super) fn find_quotes(markdown: &str, paragraph: Range<usize>, code: &[Range<usize>]) -> Vec<Quote> {
    let text = markdown.get(paragraph.clone()).unwrap_or_default();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let in_code = |at: usize| code.iter().any(|span| span.contains(&(paragraph.start + at)));
    let char_at = |i: Option<usize>| i.and_then(|i| chars.get(i)).map(|&(_, c)| c);
    let mut quotes = Vec::new();
    let mut i = 0;
    while let Some(&(open_at, open)) = chars.get(i) {
        let allowed = closers(open);
        let guillemet = open == '\u{00AB}';
        let is_open = !allowed.is_empty()
            && !in_code(open_at)
            && !char_at(i.checked_sub(1)).is_some_and(is_word_char)
            && char_at(Some(i + 1)).is_some_and(|c| guillemet || !c.is_whitespace());
        if !is_open {
            i += 1;
            continue;
        }
        let close = (i + 1..chars.len()).find(|&j| {
            chars.get(j).is_some_and(|&(at, c)| {
                allowed.contains(&c)
                    && !in_code(at)
                    && char_at(Some(j - 1)).is_some_and(|c| guillemet || !c.is_whitespace())
                    && !char_at(Some(j + 1)).is_some_and(is_word_char)
            })
        });
        let start = paragraph.start + open_at;
        let inner_start = start + open.len_utf8();
        match close.and_then(|j| chars.get(j).map(|&(at, c)| (j, at, c))) {
            Some((j, close_at, close)) => {
                let end = paragraph.start + close_at + close.len_utf8();
                quotes.push(Quote {
                    outer: start..end,
                    inner: inner_start..paragraph.start + close_at,
                });
                i = j + 1;
            }
            None => {
                let until = find_citation(markdown, inner_start..paragraph.end, code)
                    .map_or(paragraph.end, |citation| citation.range.start);
                let inner = markdown.get(inner_start..until).unwrap_or_default();
                let end = inner_start + inner.trim_end().len();
                if end > inner_start {
                    quotes.push(Quote {
                        outer: start..end,
                        inner: inner_start..end,
                    });
                }
                i = chars.partition_point(|&(at, _)| paragraph.start + at < until.max(end));
            }
        }
    }
    quotes
}

/// A moment a citation names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Locator {
    /// `#12`: an utterance by its id.
    Id(i64),
    /// `01:02`, in milliseconds.
    Time(i64),
    /// `01:02–01:30`, in milliseconds.
    Span(i64, i64),
}

/// One reading of a citation: a record's name and the moments it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    pub(super) name: String,
    pub(super) locators: Vec<Locator>,
}

/// A citation group after a quote: where it stands and every reading of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Citation {
    pub(super) range: Range<usize>,
    pub(super) parts: Vec<Part>,
}

/// The first citation (and the ones right after it) in `range`.
pub(super) fn find_citation(markdown: &str, range: Range<usize>, code: &[Range<usize>]) -> Option<Citation> {
    let text = markdown.get(range.clone())?;
    let mut search_from = 0;
    while let Some(found) = text.get(search_from..).and_then(|rest| rest.find('[')) {
        let open = search_from + found;
        search_from = open + 1;
        if code.iter().any(|span| span.contains(&(range.start + open))) {
            continue;
        }
        let Some((mut parts, mut end)) = citation_at(text, open) else {
            continue;
        };
        // Citations right after the first one belong to the same quote.
        loop {
            let rest = text.get(end..).unwrap_or_default();
            let skipped = rest.len()
                - rest
                    .trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
                    .trim_start_matches("and ")
                    .trim_start()
                    .len();
            match citation_at(text, end + skipped) {
                Some((more, next_end)) => {
                    parts.extend(more);
                    end = next_end;
                }
                None => break,
            }
        }
        return Some(Citation {
            range: range.start + open..range.start + end,
            parts,
        });
    }
    None
}

/// Every citation in `range`, outside code, each bracket on its own.
pub(super) fn all_citations(markdown: &str, range: Range<usize>, code: &[Range<usize>]) -> Vec<Citation> {
    let text = markdown.get(range.clone()).unwrap_or_default();
    let mut citations = Vec::new();
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find('[')) {
        let open = from + found;
        from = open + 1;
        if code.iter().any(|span| span.contains(&(range.start + open))) {
            continue;
        }
        if let Some((parts, end)) = citation_at(text, open) {
            citations.push(Citation {
                range: range.start + open..range.start + end,
                parts,
            });
            from = end;
        }
    }
    citations
}

/// The readings and end of a citation whose `[` is at `open` of `text`.
pub(super) fn citation_at(text: &str, open: usize) -> Option<(Vec<Part>, usize)> {
    let rest = text.get(open..)?;
    if !rest.starts_with('[') {
        return None;
    }
    let mut depth = 0_usize;
    let mut close = None;
    for (at, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = Some(at);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let content = rest.get(1..close)?;
    let parts = parse_citation(content)?;
    Some((parts, open + close + 1))
}

/// What a citation's content may mean: `name, 01:02`, `name, #12`, `name, 01:02, 01:30`,
/// `name, 01:02–01:30` or several of these separated by `;`. Record names may themselves
/// hold commas, times and semicolons, so every reading is offered: a name that is no
/// record's matches nothing.
pub(super) fn parse_citation(content: &str) -> Option<Vec<Part>> {
    if content.contains('\n') {
        return None;
    }
    let mut parts = strip_locators(content);
    if parts.is_empty() {
        return None;
    }
    if content.contains(';') {
        let each: Option<Vec<Vec<Part>>> = content
            .split(';')
            .map(|part| Some(strip_locators(part)).filter(|parts| !parts.is_empty()))
            .collect();
        parts.extend(each.into_iter().flatten().flatten());
    }
    Some(parts)
}

/// The readings of `name, locator[, locator…]`, one per trailing locator stripped (a record
/// may be named `Call, 01:00`); none without a locator or a name.
pub(super) fn strip_locators(part: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut locators = Vec::new();
    let mut name = part.trim();
    while let Some((head, tail)) = name.rsplit_once(',') {
        let Some(locator) = locator(tail.trim()) else { break };
        if head.trim().is_empty() {
            break;
        }
        locators.insert(0, locator);
        name = head.trim_end();
        parts.push(Part {
            name: name.to_owned(),
            locators: locators.clone(),
        });
    }
    parts
}

/// `mm:ss`, `h:mm:ss`, `#12`, or a range of times.
pub(super) fn locator(text: &str) -> Option<Locator> {
    if let Some(id) = text.strip_prefix('#') {
        return id
            .parse()
            .ok()
            .filter(|_| id.bytes().all(|b| b.is_ascii_digit()))
            .map(Locator::Id);
    }
    let time = |t: &str| -> Option<i64> {
        let parts: Vec<&str> = t.trim().split(':').collect();
        let well_formed = (2..=3).contains(&parts.len())
            && parts.iter().enumerate().all(|(n, part)| {
                let len_ok = if n == 0 {
                    (1..=2).contains(&part.len())
                } else {
                    part.len() == 2
                };
                len_ok && part.bytes().all(|b| b.is_ascii_digit())
            });
        well_formed.then(|| {
            parts
                .iter()
                .fold(0_i64, |total, part| total * 60 + part.parse::<i64>().unwrap_or(0))
                * 1000
        })
    };
    let mut times = text.split(['-', '\u{2013}', '\u{2014}']);
    match (times.next(), times.next(), times.next()) {
        (Some(at), None, None) => time(at).map(Locator::Time),
        (Some(from), Some(to), None) => Some(Locator::Span(time(from)?, time(to)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators() {
        assert_eq!(locator("00:53"), Some(Locator::Time(53_000)));
        assert_eq!(locator("1:02:03"), Some(Locator::Time(3_723_000)));
        assert_eq!(locator("#12"), Some(Locator::Id(12)));
        assert_eq!(locator("00:53-01:04"), Some(Locator::Span(53_000, 64_000)));
        assert_eq!(locator("00:53 – 01:04"), Some(Locator::Span(53_000, 64_000)));
        for bad in [
            "",
            "#",
            "#a",
            "#+1",
            "53",
            "00:5",
            "1:2:3",
            "soon",
            "00:53-",
            "12:00:00:00",
        ] {
            assert_eq!(locator(bad), None, "{bad}");
        }
        let names =
            |content: &str| parse_citation(content).map(|parts| parts.into_iter().map(|p| p.name).collect::<Vec<_>>());
        let owned = |names: &[&str]| Some(names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>());
        assert_eq!(names("A, 00:53"), owned(&["A"]));
        assert_eq!(names("Interview [draft], #3"), owned(&["Interview [draft]"]));
        assert_eq!(names("A, B, 00:53, 01:10"), owned(&["A, B, 00:53", "A, B"]));
        assert_eq!(names("A, 00:53; B, 01:10"), owned(&["A, 00:53; B", "A", "B"]));
        assert_eq!(names("A, 00:53; see notes"), None);
        assert_eq!(names("see above"), None);
        assert_eq!(names("A"), None);
        assert_eq!(names(", 00:53"), None);
        let parts = parse_citation("A, 00:53, 01:10").expect("parts");
        assert_eq!(parts[1].locators, vec![Locator::Time(53_000), Locator::Time(70_000)]);
    }
}
