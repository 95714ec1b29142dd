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
    /// The quote with its marks.
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

/// The quotes of one paragraph, in order.
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
        match close.and_then(|j| chars.get(j).map(|&(at, c)| (j, at, c))) {
            Some((j, close_at, close)) => {
                let start = paragraph.start + open_at;
                let end = paragraph.start + close_at + close.len_utf8();
                quotes.push(Quote {
                    outer: start..end,
                    inner: start + open.len_utf8()..paragraph.start + close_at,
                });
                i = j + 1;
            }
            None => i += 1,
        }
    }
    quotes
}

/// The record names cited by the first citation (and the ones right after it) in `range`.
pub(super) fn find_citation(markdown: &str, range: Range<usize>, code: &[Range<usize>]) -> Option<Vec<String>> {
    let text = markdown.get(range.clone())?;
    let mut search_from = 0;
    while let Some(found) = text.get(search_from..).and_then(|rest| rest.find('[')) {
        let open = search_from + found;
        search_from = open + 1;
        if code.iter().any(|span| span.contains(&(range.start + open))) {
            continue;
        }
        let Some((mut names, mut end)) = citation_at(text, open) else {
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
                    names.extend(more);
                    end = next_end;
                }
                None => break,
            }
        }
        return Some(names);
    }
    None
}

/// The record names and end of a citation whose `[` is at `open` of `text`.
pub(super) fn citation_at(text: &str, open: usize) -> Option<(Vec<String>, usize)> {
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
    let names = parse_citation(content)?;
    Some((names, open + close + 1))
}

/// The record names a citation's content may mean: `name, 01:02`, `name, #12`,
/// `name, 01:02, 01:30`, `name, 01:02–01:30` or several of these separated by `;`. Record names
/// may themselves hold commas, times and semicolons, so every reading is offered: a name that
/// is no record's matches nothing.
pub(super) fn parse_citation(content: &str) -> Option<Vec<String>> {
    if content.contains('\n') {
        return None;
    }
    let mut names: Vec<String> = strip_locators(content).into_iter().map(str::to_owned).collect();
    if names.is_empty() {
        return None;
    }
    if content.contains(';') {
        let parts: Option<Vec<Vec<&str>>> = content
            .split(';')
            .map(|part| Some(strip_locators(part)).filter(|names| !names.is_empty()))
            .collect();
        names.extend(parts.into_iter().flatten().flatten().map(str::to_owned));
    }
    Some(names)
}

/// The names `name, locator[, locator…]` may mean, one per trailing locator stripped (a record
/// may be named `Call, 01:00`); none without a locator or a name.
pub(super) fn strip_locators(part: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut name = part.trim();
    while let Some((head, tail)) = name.rsplit_once(',') {
        if !is_locator(tail.trim()) || head.trim().is_empty() {
            break;
        }
        name = head.trim_end();
        names.push(name);
    }
    names
}

/// `mm:ss`, `h:mm:ss`, `#12`, or a range of times.
pub(super) fn is_locator(text: &str) -> bool {
    if let Some(id) = text.strip_prefix('#') {
        return !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    }
    let is_time = |t: &str| {
        let parts: Vec<&str> = t.trim().split(':').collect();
        (2..=3).contains(&parts.len())
            && parts.iter().enumerate().all(|(n, part)| {
                let len_ok = if n == 0 {
                    (1..=2).contains(&part.len())
                } else {
                    part.len() == 2
                };
                len_ok && part.bytes().all(|b| b.is_ascii_digit())
            })
    };
    let mut times = text.split(['-', '\u{2013}', '\u{2014}']);
    match (times.next(), times.next(), times.next()) {
        (Some(time), None, None) => is_time(time),
        (Some(from), Some(to), None) => is_time(from) && is_time(to),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators() {
        for ok in ["00:53", "1:02:03", "#12", "00:53-01:04", "00:53 – 01:04"] {
            assert!(is_locator(ok), "{ok}");
        }
        for bad in ["", "#", "#a", "53", "00:5", "1:2:3", "soon", "00:53-", "12:00:00:00"] {
            assert!(!is_locator(bad), "{bad}");
        }
        let names = |names: &[&str]| Some(names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>());
        assert_eq!(parse_citation("A, 00:53"), names(&["A"]));
        assert_eq!(parse_citation("Interview [draft], #3"), names(&["Interview [draft]"]));
        assert_eq!(parse_citation("A, B, 00:53, 01:10"), names(&["A, B, 00:53", "A, B"]));
        assert_eq!(parse_citation("A, 00:53; B, 01:10"), names(&["A, 00:53; B", "A", "B"]));
        assert_eq!(parse_citation("A, 00:53; see notes"), None);
        assert_eq!(parse_citation("see above"), None);
        assert_eq!(parse_citation("A"), None);
        assert_eq!(parse_citation(", 00:53"), None);
    }
}
