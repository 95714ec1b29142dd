//! What a report or a transcript is made of, once, for every writer (`docx`, `pdf`): headings,
//! paragraphs, block quotes, lists, tables and code, holding styled runs of text, some of
//! them links. A report's Markdown is read into it with its citations turned into links to
//! the moments they cite, so each writer only lays out.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd, TextMergeStream};

use crate::engines::ai::citations::{CitationIndex, find_citations};
use crate::engines::ai::text::normalize;

/// A document: a title, a few lines under it (project, dates), and its blocks.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub title: String,
    pub byline: Vec<String>,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Level 1 (the report's sections) to 4; deeper ones are 4.
    Heading(u8, Vec<Span>),
    Paragraph(Vec<Span>),
    Quote(Vec<Block>),
    /// Items of blocks; `Some(n)` numbers them from `n`.
    List(Option<u64>, Vec<Vec<Block>>),
    Code(String),
    /// Rows of cells; the first row is the header.
    Table(Vec<Vec<Vec<Span>>>),
    Rule,
}

/// A run of text in one style.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Span {
    pub text: String,
    pub bold: bool,
    pub italic: bool,
    pub code: bool,
    pub strike: bool,
    /// An absolute address: a web page, or the console's moment a citation cites.
    pub link: Option<String>,
}

impl Span {
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn bold(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            bold: true,
            ..Self::default()
        }
    }
}

/// The text of spans, styles dropped.
pub fn plain_text(spans: &[Span]) -> String {
    spans.iter().map(|span| span.text.as_str()).collect()
}

/// How citations become links: the index of the records a text may cite, and the console's
/// address they are links into.
pub struct Citations<'a> {
    pub index: &'a CitationIndex,
    pub public_url: &'a str,
}

/// Markdown (CommonMark, tables, strikethrough) as blocks. The author's HTML stays the text
/// it is, and images their alt text, as on the console.
pub fn from_markdown(markdown: &str, citations: &Citations<'_>) -> Vec<Block> {
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    let mut reader = Reader {
        citations,
        stack: vec![Open::Root(Vec::new())],
        style: Span::default(),
        literal: 0,
    };
    for event in TextMergeStream::new(parser) {
        reader.event(event);
    }
    // Close what a damaged input left open.
    while reader.stack.len() > 1 {
        reader.close();
    }
    match reader.stack.pop() {
        Some(Open::Root(blocks)) => blocks,
        _ => Vec::new(),
    }
}

/// What is being read, innermost last.
enum Open {
    Root(Vec<Block>),
    Heading(u8, Vec<Span>),
    Paragraph(Vec<Span>),
    Quote(Vec<Block>),
    List(Option<u64>, Vec<Vec<Block>>),
    Item(Vec<Block>, Vec<Span>),
    Code(String),
    Table(Vec<Vec<Vec<Span>>>),
    Row(Vec<Vec<Span>>),
    Cell(Vec<Span>),
}

struct Reader<'a, 'b> {
    citations: &'a Citations<'b>,
    stack: Vec<Open>,
    /// The style (and link) of text read now.
    style: Span,
    /// Inside a link or code, brackets are not citations.
    literal: usize,
}

impl Reader<'_, '_> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(text) => {
                let span = Span {
                    text: text.into_string(),
                    code: true,
                    ..self.style.clone()
                };
                self.push_span(span);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                if let Some(Open::Code(code)) = self.stack.last_mut() {
                    code.push_str(&html);
                } else {
                    self.push_span(Span {
                        text: html.into_string(),
                        ..self.style.clone()
                    });
                }
            }
            Event::SoftBreak => self.push_span(Span {
                text: " ".into(),
                ..self.style.clone()
            }),
            Event::HardBreak => self.push_span(Span {
                text: "\n".into(),
                ..self.style.clone()
            }),
            Event::Rule => self.push_block(Block::Rule),
            Event::TaskListMarker(done) => self.push_span(Span::plain(if done { "☑ " } else { "☐ " })),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                let level = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    _ => 4,
                };
                self.stack.push(Open::Heading(level, Vec::new()));
            }
            Tag::Paragraph | Tag::HtmlBlock => self.stack.push(Open::Paragraph(Vec::new())),
            Tag::BlockQuote(_) => self.stack.push(Open::Quote(Vec::new())),
            Tag::List(start) => self.stack.push(Open::List(start, Vec::new())),
            Tag::Item => self.stack.push(Open::Item(Vec::new(), Vec::new())),
            Tag::CodeBlock(_) => {
                self.literal += 1;
                self.stack.push(Open::Code(String::new()));
            }
            Tag::Table(_) => self.stack.push(Open::Table(Vec::new())),
            Tag::TableHead | Tag::TableRow => self.stack.push(Open::Row(Vec::new())),
            Tag::TableCell => self.stack.push(Open::Cell(Vec::new())),
            Tag::Emphasis => self.style.italic = true,
            Tag::Strong => self.style.bold = true,
            Tag::Strikethrough => self.style.strike = true,
            Tag::Link { dest_url, .. } => {
                self.literal += 1;
                let url = dest_url.into_string();
                // Only addresses a reader's program opens safely; others stay text.
                let absolute = url.starts_with("https://") || url.starts_with("http://");
                self.style.link = if absolute {
                    Some(url)
                } else if url.starts_with('/') {
                    Some(format!("{}{url}", self.citations.public_url.trim_end_matches('/')))
                } else {
                    None
                };
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Emphasis => self.style.italic = false,
            TagEnd::Strong => self.style.bold = false,
            TagEnd::Strikethrough => self.style.strike = false,
            TagEnd::Link => {
                self.literal = self.literal.saturating_sub(1);
                self.style.link = None;
            }
            TagEnd::CodeBlock => {
                self.literal = self.literal.saturating_sub(1);
                self.close();
            }
            TagEnd::Heading(_)
            | TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::BlockQuote(_)
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::Table
            | TagEnd::TableHead
            | TagEnd::TableRow
            | TagEnd::TableCell => self.close(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(Open::Code(code)) = self.stack.last_mut() {
            code.push_str(text);
            return;
        }
        if self.literal > 0 || self.citations.index.is_empty() {
            self.push_span(Span {
                text: text.to_owned(),
                ..self.style.clone()
            });
            return;
        }
        let mut copied = 0;
        for (range, (record_id, utterance_id)) in find_citations(text, self.citations.index) {
            let before = text.get(copied..range.start).unwrap_or_default();
            if !before.is_empty() {
                self.push_span(Span {
                    text: before.to_owned(),
                    ..self.style.clone()
                });
            }
            let href = crate::domain::search::moment_path(record_id, utterance_id);
            self.push_span(Span {
                text: text.get(range.clone()).unwrap_or_default().to_owned(),
                link: Some(format!("{}{href}", self.citations.public_url.trim_end_matches('/'))),
                ..self.style.clone()
            });
            copied = range.end;
        }
        let rest = text.get(copied..).unwrap_or_default();
        if !rest.is_empty() {
            self.push_span(Span {
                text: rest.to_owned(),
                ..self.style.clone()
            });
        }
    }

    /// Text goes into the open paragraph, heading or cell; a tight list item holds its text
    /// without a paragraph, so it gets one.
    fn push_span(&mut self, span: Span) {
        match self.stack.last_mut() {
            Some(Open::Heading(_, spans) | Open::Paragraph(spans) | Open::Cell(spans) | Open::Item(_, spans)) => {
                spans.push(span);
            }
            Some(Open::Code(code)) => code.push_str(&span.text),
            _ => self.stack.push(Open::Paragraph(vec![span])),
        }
    }

    fn push_block(&mut self, block: Block) {
        match self.stack.last_mut() {
            Some(Open::Root(blocks) | Open::Quote(blocks)) => blocks.push(block),
            Some(Open::Item(blocks, spans)) => {
                if !spans.is_empty() {
                    blocks.push(Block::Paragraph(std::mem::take(spans)));
                }
                blocks.push(block);
            }
            Some(Open::List(_, items)) => items.push(vec![block]),
            Some(Open::Paragraph(_) | Open::Heading(..)) => {
                // A block cannot sit in a paragraph: close the paragraph first.
                self.close();
                self.push_block(block);
            }
            _ => {}
        }
    }

    fn close(&mut self) {
        let Some(open) = self.stack.pop() else {
            return;
        };
        match open {
            Open::Root(blocks) => self.stack.push(Open::Root(blocks)),
            Open::Heading(level, spans) => self.push_block(Block::Heading(level, spans)),
            Open::Paragraph(spans) => {
                if spans.iter().any(|span| !span.text.trim().is_empty()) {
                    self.push_block(Block::Paragraph(spans));
                }
            }
            Open::Quote(blocks) => self.push_block(Block::Quote(blocks)),
            Open::List(start, items) => self.push_block(Block::List(start, items)),
            Open::Item(mut blocks, spans) => {
                if !spans.is_empty() {
                    blocks.push(Block::Paragraph(spans));
                }
                if let Some(Open::List(_, items)) = self.stack.last_mut() {
                    items.push(blocks);
                }
            }
            Open::Code(code) => self.push_block(Block::Code(code.trim_end_matches('\n').to_owned())),
            Open::Table(rows) => self.push_block(Block::Table(rows)),
            Open::Row(cells) => {
                if let Some(Open::Table(rows)) = self.stack.last_mut() {
                    rows.push(cells);
                }
            }
            Open::Cell(spans) => {
                if let Some(Open::Row(cells)) = self.stack.last_mut() {
                    cells.push(spans);
                }
            }
        }
    }
}

/// The Markdown without a first heading that only repeats `title`, which the page shows
/// as its own heading already (a written report opens with `# Its title`).
pub fn without_title<'a>(markdown: &'a str, title: &str) -> &'a str {
    let body = markdown.trim_start();
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    let heading = first.trim_end().strip_prefix("# ").map(str::trim);
    if heading.is_some_and(|heading| normalize(heading) == normalize(title)) {
        rest
    } else {
        markdown
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    const ANNA: Uuid = Uuid::from_bytes([1; 16]);

    fn blocks(markdown: &str) -> Vec<Block> {
        let index = CitationIndex::new(&[(ANNA, "Interview Anna", &[(1, Some(0)), (2, Some(65_000))])]);
        from_markdown(
            markdown,
            &Citations {
                index: &index,
                public_url: "https://insight.example/",
            },
        )
    }

    #[test]
    fn markdown_becomes_blocks_with_citations_as_links() {
        let read = blocks(
            "## Findings\n\nPeople *want* **speed** [Interview Anna, 01:05].\n\n> \"Too slow\" [Interview Anna, 00:00]\n\n- one\n- two [x](https://a.example)\n\n1. first\n\n```\ncode [Interview Anna, 00:00]\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n",
        );
        let link = |text: &str, utterance: i64| Span {
            text: text.into(),
            link: Some(format!("https://insight.example/r/{ANNA}#u{utterance}")),
            ..Span::default()
        };
        assert_eq!(read[0], Block::Heading(2, vec![Span::plain("Findings")]));
        assert_eq!(
            read[1],
            Block::Paragraph(vec![
                Span::plain("People "),
                Span {
                    text: "want".into(),
                    italic: true,
                    ..Span::default()
                },
                Span::plain(" "),
                Span::bold("speed"),
                Span::plain(" "),
                link("[Interview Anna, 01:05]", 2),
                Span::plain("."),
            ])
        );
        assert_eq!(
            read[2],
            Block::Quote(vec![Block::Paragraph(vec![
                Span::plain("\"Too slow\" "),
                link("[Interview Anna, 00:00]", 1)
            ])])
        );
        let Block::List(None, items) = &read[3] else {
            panic!("a list: {:?}", read[3]);
        };
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[1],
            vec![Block::Paragraph(vec![
                Span::plain("two "),
                Span {
                    text: "x".into(),
                    link: Some("https://a.example".into()),
                    ..Span::default()
                }
            ])]
        );
        assert!(matches!(&read[4], Block::List(Some(1), items) if items.len() == 1));
        assert_eq!(read[5], Block::Code("code [Interview Anna, 00:00]".into()));
        let Block::Table(rows) = &read[6] else {
            panic!("a table: {:?}", read[6]);
        };
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1][1], vec![Span::plain("2")]);
        assert_eq!(read[7], Block::Rule);
        assert_eq!(read.len(), 8);
    }

    #[test]
    fn html_stays_text_and_unsafe_links_are_dropped() {
        let read = blocks("<script>x</script>\n\nsee [here](javascript:alert(1))\n");
        assert_eq!(read[0], Block::Paragraph(vec![Span::plain("<script>x</script>\n")]));
        assert_eq!(
            read[1],
            Block::Paragraph(vec![Span::plain("see "), Span::plain("here")])
        );
    }
}
