//! Results as a chat answer gets them: http(s) URLs, each once, titles and snippets
//! cleaned of HTML tags and entities and cut to a length; and the query cut to what
//! providers take.

use std::collections::HashSet;

use reqwest::Url;

use super::WebResult;

/// Longest query sent, in characters and in words (Brave refuses longer ones).
const MAX_QUERY_CHARS: usize = 400;
const MAX_QUERY_WORDS: usize = 50;

/// How long a result's title and snippet may be, in characters.
const MAX_TITLE_CHARS: usize = 300;
const MAX_SNIPPET_CHARS: usize = 500;

/// The query trimmed, its whitespace collapsed, cut to [`MAX_QUERY_WORDS`] words and
/// [`MAX_QUERY_CHARS`] characters.
pub(super) fn shorten_query(query: &str) -> String {
    let query = query
        .split_whitespace()
        .take(MAX_QUERY_WORDS)
        .collect::<Vec<_>>()
        .join(" ");
    match query.char_indices().nth(MAX_QUERY_CHARS) {
        None => query,
        Some((end, _)) => {
            let cut = &query[..end];
            cut.rsplit_once(' ')
                .map_or(cut, |(words, _)| words)
                .trim_end()
                .to_owned()
        }
    }
}

/// The results with a usable http(s) URL, each URL once, cleaned, at most `limit`.
pub(super) fn clean_results(items: Vec<(String, String, String)>, limit: usize) -> Vec<WebResult> {
    let mut seen = HashSet::new();
    let mut results = Vec::new();
    for (url, title, snippet) in items {
        if results.len() == limit {
            break;
        }
        let url = url.trim();
        let Ok(parsed) = Url::parse(url) else {
            continue;
        };
        let Some(host) = parsed
            .host_str()
            .filter(|_| matches!(parsed.scheme(), "http" | "https"))
        else {
            continue;
        };
        if !seen.insert(dedupe_key(&parsed)) {
            continue;
        }
        let mut title = shorten(&clean_text(&title), MAX_TITLE_CHARS);
        if title.is_empty() {
            title = host.to_owned();
        }
        results.push(WebResult {
            url: url.to_owned(),
            title,
            snippet: shorten(&clean_text(&snippet), MAX_SNIPPET_CHARS),
        });
    }
    results
}

/// What two URLs of one page share: the host, port, path (without a final `/`) and
/// query; not the scheme or the fragment.
fn dedupe_key(url: &Url) -> String {
    format!(
        "{}:{}{}?{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default(),
        url.path().trim_end_matches('/'),
        url.query().unwrap_or_default()
    )
}

/// Text from a snippet of HTML: tags dropped (with the content of `<script>` and
/// `<style>`), entities decoded, whitespace collapsed.
pub(super) fn clean_text(html: &str) -> String {
    let text = decode_entities(&strip_tags(html));
    text.split_whitespace()
        .map(|word| word.replace(|c: char| c.is_control(), ""))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Elements that end a line of text: dropping them leaves a space.
const BLOCK_ELEMENTS: &[&str] = &[
    "br",
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "tr",
    "td",
    "th",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "section",
    "article",
    "header",
    "footer",
    "title",
    "blockquote",
    "pre",
];

fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        text.push_str(&rest[..at]);
        let tag = &rest[at..];
        let opens_tag = tag[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
        if !opens_tag {
            text.push('<');
            rest = &tag[1..];
            continue;
        }
        if let Some(comment) = tag.strip_prefix("<!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        let Some(close) = tag.find('>') else {
            // Not a tag after all ("a <b" at the end): keep it as text.
            text.push_str(tag);
            rest = "";
            break;
        };
        let element = tag[1..close]
            .trim_start_matches('/')
            .split(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        rest = &tag[close + 1..];
        if !tag.starts_with("</") && matches!(element.as_str(), "script" | "style") {
            let end = format!("</{element}");
            rest = match rest.to_ascii_lowercase().find(&end) {
                Some(start) => rest[start..].find('>').map_or("", |close| &rest[start + close + 1..]),
                None => "",
            };
            text.push(' ');
        } else if BLOCK_ELEMENTS.contains(&element.as_str()) {
            text.push(' ');
        }
    }
    text.push_str(rest);
    text
}

/// The text with `&amp;`, `&#39;`, `&#x27;` and the common named entities decoded, once.
fn decode_entities(text: &str) -> String {
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        decoded.push_str(&rest[..at]);
        rest = &rest[at..];
        match entity(rest) {
            Some((character, length)) => {
                decoded.push(character);
                rest = &rest[length..];
            }
            None => {
                decoded.push('&');
                rest = &rest[1..];
            }
        }
    }
    decoded.push_str(rest);
    decoded
}

/// The character of the entity `text` starts with, and the entity's length.
fn entity(text: &str) -> Option<(char, usize)> {
    let end = text.bytes().take(12).position(|byte| byte == b';')?;
    let name = text.get(1..end)?;
    let character = match name.strip_prefix('#') {
        Some(number) => {
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    u32::from_str_radix(hex, 16).ok()?
                }
                None if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => number.parse().ok()?,
                _ => return None,
            };
            match char::from_u32(code) {
                Some('\0') | None => char::REPLACEMENT_CHARACTER,
                Some(character) => character,
            }
        }
        None => match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => '\u{a0}',
            "ndash" => '–',
            "mdash" => '—',
            "hellip" => '…',
            "lsquo" => '‘',
            "rsquo" => '’',
            "sbquo" => '‚',
            "ldquo" => '“',
            "rdquo" => '”',
            "bdquo" => '„',
            "laquo" => '«',
            "raquo" => '»',
            "middot" => '·',
            "bull" => '•',
            "copy" => '©',
            "reg" => '®',
            "trade" => '™',
            "deg" => '°',
            "euro" => '€',
            "pound" => '£',
            "yen" => '¥',
            "cent" => '¢',
            "times" => '×',
            "divide" => '÷',
            "shy" => '\u{ad}',
            _ => return None,
        },
    };
    Some((character, end + 1))
}

/// The text cut to at most about `max` characters, at a word if one is near, with `…`.
pub(super) fn shorten(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max) else {
        return text.to_owned();
    };
    let cut = &text[..end];
    let cut = match cut.rfind(' ') {
        // Back to the last word only if little is lost.
        Some(space) if cut[space..].chars().count() <= max / 5 => &cut[..space],
        _ => cut,
    };
    format!(
        "{}…",
        cut.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cleaned_of_markup() {
        assert_eq!(clean_text("a <b>bold</b> &amp; <i>it</i>alic"), "a bold & italic");
        assert_eq!(clean_text("x &lt;b&gt; y"), "x <b> y");
        assert_eq!(clean_text("&amp;lt; stays decoded once"), "&lt; stays decoded once");
        assert_eq!(clean_text("1 < 2 and 3 > 2"), "1 < 2 and 3 > 2");
        assert_eq!(clean_text("line<br>break<p>para</p>"), "line break para");
        assert_eq!(clean_text("a<script>alert('x')</script>b<!-- note -->c"), "a bc");
        assert_eq!(clean_text("&#39;&#x27;&#X2014;&bogus; & &;"), "''—&bogus; & &;");
        assert_eq!(clean_text("  spread\n\tout  "), "spread out");
    }

    #[test]
    fn long_snippets_are_cut_near_500_characters() {
        let long = "word ".repeat(300);
        let snippet = shorten(&clean_text(&long), MAX_SNIPPET_CHARS);
        assert!(snippet.ends_with('…'), "{snippet}");
        assert!(snippet.chars().count() <= MAX_SNIPPET_CHARS + 1);
        assert!(snippet.chars().count() > 400);
        assert!(!snippet.contains("wor…"), "cut at a word");
        assert_eq!(shorten("short", MAX_SNIPPET_CHARS), "short");
    }

    #[test]
    fn long_queries_are_cut_to_what_providers_take() {
        let query = shorten_query(&"why ".repeat(80));
        assert_eq!(query.split(' ').count(), MAX_QUERY_WORDS);
        let query = shorten_query(&format!("{} end", "x".repeat(398)));
        assert_eq!(query, "x".repeat(398), "cut at a word");
        assert_eq!(shorten_query("  what do   users say  "), "what do users say");
    }
}
