//! A [`Document`] as a Word document, written by `docx-rs` with Word's own style names (Title,
//! Subtitle, Heading 1–4, Quote, List Paragraph, Hyperlink), so that Word's navigation pane,
//! table of contents and a company template's restyling all apply to it.

use std::io::Cursor;

use docx_rs::{
    AbstractNumbering, Docx, Hyperlink, HyperlinkType, IndentLevel, Level, LevelJc, LevelOverride, LevelText,
    NumberFormat, Numbering, NumberingId, Paragraph, Run, RunFonts, SpecialIndentType, Start, Style, StyleType, Table,
    TableCell, TableRow,
};

use super::document::{Block, Document, Span};
use crate::app::research::exchange::xml_safe;

const BULLETS: usize = 1;
const DECIMAL: usize = 2;
const MONO: &str = "Consolas";

/// The document as the bytes of a `.docx` file.
pub fn write(document: &Document) -> anyhow::Result<Vec<u8>> {
    let mut writer = Writer {
        docx: styled(Docx::new()),
        next_numbering: 1,
    };
    writer.docx = writer
        .docx
        .add_paragraph(paragraph("Title", &[Span::plain(&document.title)]));
    for line in &document.byline {
        writer.docx = writer.docx.add_paragraph(paragraph("Subtitle", &[Span::plain(line)]));
    }
    for block in &document.blocks {
        writer.block(block, Context::default());
    }
    let mut bytes = Cursor::new(Vec::new());
    writer.docx.pack(&mut bytes)?;
    Ok(bytes.into_inner())
}

/// Word's built-in styles, by their ids and names, with a plain look of our own.
fn styled(docx: Docx) -> Docx {
    let heading = |level: usize, size: usize| {
        Style::new(format!("Heading{level}"), StyleType::Paragraph)
            .name(format!("heading {level}"))
            .based_on("Normal")
            .next("Normal")
            .q_format(true)
            .size(size)
            .bold()
            .color("1F3864")
            .outline_lvl(level - 1)
    };
    let mut docx = docx
        .default_fonts(RunFonts::new().ascii("Calibri").hi_ansi("Calibri").cs("Calibri"))
        .default_size(22)
        .add_style(
            Style::new("Title", StyleType::Paragraph)
                .name("Title")
                .based_on("Normal")
                .next("Normal")
                .q_format(true)
                .size(48)
                .color("1F3864"),
        )
        .add_style(
            Style::new("Subtitle", StyleType::Paragraph)
                .name("Subtitle")
                .based_on("Normal")
                .next("Normal")
                .q_format(true)
                .color("595959"),
        )
        .add_style(
            Style::new("Quote", StyleType::Paragraph)
                .name("Quote")
                .based_on("Normal")
                .next("Normal")
                .q_format(true)
                .italic()
                .color("404040")
                .indent(Some(720), None, Some(720), None),
        )
        .add_style(
            Style::new("ListParagraph", StyleType::Paragraph)
                .name("List Paragraph")
                .based_on("Normal")
                .q_format(true),
        )
        .add_style(
            Style::new("Code", StyleType::Paragraph)
                .name("Code")
                .based_on("Normal")
                .fonts(RunFonts::new().ascii(MONO).hi_ansi(MONO).cs(MONO))
                .size(19),
        )
        .add_style(
            Style::new("Hyperlink", StyleType::Character)
                .name("Hyperlink")
                .color("0563C1")
                .underline("single"),
        );
    for (level, size) in [(1, 32), (2, 28), (3, 24), (4, 22)] {
        docx = docx.add_style(heading(level, size));
    }
    let mut bullets = AbstractNumbering::new(BULLETS);
    let mut decimal = AbstractNumbering::new(DECIMAL);
    for level in 0..9 {
        let indent = 720 * (level as i32 + 1);
        let glyph = ["•", "◦", "▪"][level % 3];
        bullets = bullets.add_level(
            Level::new(
                level,
                Start::new(1),
                NumberFormat::new("bullet"),
                LevelText::new(glyph),
                LevelJc::new("left"),
            )
            .indent(Some(indent), Some(SpecialIndentType::Hanging(360)), None, None),
        );
        decimal = decimal.add_level(
            Level::new(
                level,
                Start::new(1),
                NumberFormat::new("decimal"),
                LevelText::new(format!("%{}.", level + 1)),
                LevelJc::new("left"),
            )
            .indent(Some(indent), Some(SpecialIndentType::Hanging(360)), None, None),
        );
    }
    docx.add_abstract_numbering(bullets).add_abstract_numbering(decimal)
}

/// Where a block sits: in how many lists, and whether in a block quote.
#[derive(Clone, Copy, Default)]
struct Context {
    list: Option<(usize, usize)>,
    quote: bool,
}

struct Writer {
    docx: Docx,
    next_numbering: usize,
}

impl Writer {
    /// Adds to the document what `add` adds (docx-rs builds by value).
    fn add(&mut self, add: impl FnOnce(Docx) -> Docx) {
        self.docx = add(std::mem::take(&mut self.docx));
    }

    fn block(&mut self, block: &Block, context: Context) {
        match block {
            Block::Heading(level, spans) => {
                let style = format!("Heading{}", level.clamp(&1, &4));
                self.add(|docx| docx.add_paragraph(paragraph(&style, spans).keep_next(true)));
            }
            Block::Paragraph(spans) => {
                let mut p = match (context.list, context.quote) {
                    (Some((numbering, depth)), _) => paragraph("ListParagraph", spans)
                        .numbering(NumberingId::new(numbering), IndentLevel::new(depth)),
                    (None, true) => paragraph("Quote", spans),
                    (None, false) => paragraph("Normal", spans),
                };
                if context.list.is_some() && context.quote {
                    p = p.italic();
                }
                self.add(|docx| docx.add_paragraph(p));
            }
            Block::Quote(blocks) => {
                for block in blocks {
                    self.block(block, Context { quote: true, ..context });
                }
            }
            Block::List(start, items) => {
                let numbering = self.next_numbering;
                self.next_numbering += 1;
                let depth = context.list.map_or(0, |(_, depth)| (depth + 1).min(8));
                let instance = match start {
                    Some(first) => Numbering::new(numbering, DECIMAL)
                        .add_override(LevelOverride::new(depth).start(usize::try_from(*first).unwrap_or(1))),
                    None => Numbering::new(numbering, BULLETS),
                };
                self.add(|docx| docx.add_numbering(instance));
                for item in items {
                    for (n, block) in item.iter().enumerate() {
                        // Only an item's first paragraph carries its bullet or number.
                        let list = if n == 0 || matches!(block, Block::List(..)) {
                            Some((numbering, depth))
                        } else {
                            None
                        };
                        self.block(block, Context { list, ..context });
                    }
                }
            }
            Block::Code(code) => {
                let mut run = Run::new();
                for (n, line) in code.split('\n').enumerate() {
                    if n > 0 {
                        run = run.add_break(docx_rs::BreakType::TextWrapping);
                    }
                    run = run.add_text(xml_safe(line));
                }
                self.add(|docx| docx.add_paragraph(Paragraph::new().style("Code").add_run(run)));
            }
            Block::Table(rows) => {
                let rows = rows
                    .iter()
                    .enumerate()
                    .map(|(n, cells)| {
                        TableRow::new(
                            cells
                                .iter()
                                .map(|spans| {
                                    let mut p = paragraph("Normal", spans);
                                    if n == 0 {
                                        p = p.bold();
                                    }
                                    TableCell::new().add_paragraph(p)
                                })
                                .collect(),
                        )
                    })
                    .collect();
                self.add(|docx| docx.add_table(Table::new(rows)));
            }
            Block::Rule => {
                self.add(|docx| {
                    docx.add_paragraph(
                        Paragraph::new()
                            .align(docx_rs::AlignmentType::Center)
                            .add_run(Run::new().add_text("* * *")),
                    )
                });
            }
        }
    }
}

/// A paragraph of that style holding the spans, links as hyperlinks.
fn paragraph(style: &str, spans: &[Span]) -> Paragraph {
    let mut p = Paragraph::new().style(style);
    for span in spans {
        let run = run(span);
        p = match &span.link {
            Some(url) => {
                p.add_hyperlink(Hyperlink::new(xml_safe(url), HyperlinkType::External).add_run(run.style("Hyperlink")))
            }
            None => p.add_run(run),
        };
    }
    p
}

fn run(span: &Span) -> Run {
    let mut run = Run::new();
    for (n, line) in span.text.split('\n').enumerate() {
        if n > 0 {
            run = run.add_break(docx_rs::BreakType::TextWrapping);
        }
        run = run.add_text(xml_safe(line));
    }
    if span.bold {
        run = run.bold();
    }
    if span.italic {
        run = run.italic();
    }
    if span.strike {
        run = run.strike();
    }
    if span.code {
        run = run.fonts(RunFonts::new().ascii(MONO).hi_ansi(MONO).cs(MONO));
    }
    run
}
