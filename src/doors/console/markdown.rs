//! A report's or a chat answer's Markdown as HTML for the console, with its citations as links
//! to the moment they cite.
//!
//! Citations are written as `crate::engines::ai::citation` writes them and `crate::engines::ai::quotes` reads
//! them: `[record name, mm:ss]`, `[record name, h:mm:ss]`, `[record name, #id]` (a record
//! without times), several times (`[A, 01:02, 01:30]`), a range (`[A, 01:02–01:30]`) or several
//! records (`[A, 01:02; B, 03:04]`). A bracket that is one citation becomes one link, brackets
//! included; in a group, each record's citation (or each time of several) is its own link.
//! What [`CitationIndex`] cannot resolve stays text, as do brackets in code and in links.
//!
//! Safety does not rest on one step. The author's raw HTML is never interpreted: it is shown
//! as the text it is (a model or an import may write `<div>`, a prompt injection `<script>`).
//! Images are refused, shown as their alt text: nothing here needs one, and an image is a
//! request made on the reader's behalf as the page opens (a tracking pixel, or a same-origin
//! GET sent with the reader's cookie); the CSP would block outside ones anyway. Then ammonia
//! keeps only the tags pulldown-cmark writes, `href` with http, https or a relative address,
//! and adds `rel="noopener noreferrer"` to every link. Table column alignment is dropped: it
//! would be an inline `style`, which the console's CSP refuses.

use std::ops::Range;
use std::sync::LazyLock;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, TextMergeStream};
use uuid::Uuid;

pub use crate::app::exports::document::without_title;
use crate::engines::ai::citations::find_citations;
pub use crate::engines::ai::citations::{CitationIndex, RecordMoments};

/// The console's address of a moment in a transcript (`CONSOLE.md`).
pub fn moment_href(record_id: Uuid, utterance_id: i64) -> String {
    crate::domain::search::moment_path(record_id, utterance_id)
}

/// `markdown` (CommonMark, tables, strikethrough) as sanitised HTML, its citations linked.
pub fn render(markdown: &str, citations: &CitationIndex) -> String {
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    let mut events = Vec::new();
    // Inside a code block or a link, brackets are not citations (a link in a link is none).
    let mut literal = 0_usize;
    for event in TextMergeStream::new(parser.filter_map(inert)) {
        match &event {
            Event::Start(Tag::CodeBlock(_) | Tag::Link { .. }) => literal += 1,
            Event::End(TagEnd::CodeBlock | TagEnd::Link) => literal = literal.saturating_sub(1),
            _ => {}
        }
        match event {
            Event::Text(text) if literal == 0 => link_citations(text, citations, &mut events),
            event => events.push(event),
        }
    }
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    SANITIZER.clean(&html).to_string()
}

/// The author's HTML as text, images as their alt text (see the module's docs).
fn inert(event: Event<'_>) -> Option<Event<'_>> {
    match event {
        Event::Html(html) | Event::InlineHtml(html) => Some(Event::Text(html)),
        Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
        Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        event => Some(event),
    }
}

/// The only HTML that is ours, not the author's (`inert` turned theirs into text).
fn link_citations<'a>(text: CowStr<'a>, citations: &CitationIndex, out: &mut Vec<Event<'a>>) {
    let links = find_citations(&text, citations);
    if links.is_empty() {
        out.push(Event::Text(text));
        return;
    }
    let piece = |range: Range<usize>| Event::Text(text.get(range).unwrap_or_default().to_owned().into());
    let mut copied = 0;
    for (range, (record_id, utterance_id)) in links {
        out.push(piece(copied..range.start));
        let href = moment_href(record_id, utterance_id);
        out.push(Event::InlineHtml(
            format!("<a class=\"citation\" href=\"{href}\">").into(),
        ));
        out.push(piece(range.clone()));
        out.push(Event::InlineHtml("</a>".into()));
        copied = range.end;
    }
    out.push(piece(copied..text.len()));
}

/// Ammonia set to what pulldown-cmark writes for the options above, and nothing else.
static SANITIZER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let tags = "p br hr h1 h2 h3 h4 h5 h6 blockquote ul ol li pre code em strong del a table thead tbody tr th td";
    let mut builder = ammonia::Builder::empty();
    builder
        .tags(tags.split(' ').collect())
        .generic_attributes([].into())
        .tag_attributes([("a", ["href", "title"].into()), ("ol", ["start"].into())].into())
        .add_allowed_classes("a", &["citation"])
        .url_schemes(["http", "https"].into())
        .link_rel(Some("noopener noreferrer"));
    builder
});

#[cfg(test)]
mod tests;
