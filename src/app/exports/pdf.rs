//! A [`Document`] as PDF: laid out here (A4, words wrapped by their glyph widths, headings
//! kept with what follows, block quotes with a bar, lists, tables, page numbers) and written
//! by krilla with the DejaVu fonts embedded and subset, so the text can be searched, copied
//! and extracted, links open their moment, and the outline lists the headings.
//!
//! Layout runs first, into pages of drawing operations, so that the footer can say "page n
//! of N"; painting them is then one pass.

use std::collections::HashMap;
use std::sync::LazyLock;

use krilla::Document as Pdf;
use krilla::action::LinkAction;
use krilla::annotation::{Annotation, LinkAnnotation, Target};
use krilla::color::rgb;
use krilla::destination::XyzDestination;
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::outline::{Outline, OutlineNode};
use krilla::page::PageSettings;
use krilla::paint::Fill;
use krilla::text::{Font, TextDirection};
use skrifa::instance::{LocationRef, Size};
use skrifa::metrics::GlyphMetrics;
use skrifa::{FontRef, MetadataProvider};

use super::document::{Block, Document, Span, plain_text};

const PAGE_WIDTH: f32 = 595.28;
const PAGE_HEIGHT: f32 = 841.89;
const MARGIN_X: f32 = 62.0;
const MARGIN_TOP: f32 = 64.0;
const MARGIN_BOTTOM: f32 = 70.0;
const BODY: f32 = 10.5;
const LEADING: f32 = 1.45;
const INDENT: f32 = 18.0;

const INK: (u8, u8, u8) = (0x22, 0x22, 0x22);
const HEADING_INK: (u8, u8, u8) = (0x1f, 0x38, 0x64);
const QUIET_INK: (u8, u8, u8) = (0x59, 0x59, 0x59);
const LINK_INK: (u8, u8, u8) = (0x05, 0x63, 0xc1);
const RULE_INK: (u8, u8, u8) = (0xbf, 0xbf, 0xbf);

/// The faces, each with its glyph widths.
struct Face {
    font: Font,
    charmap: skrifa::charmap::Charmap<'static>,
    metrics: GlyphMetrics<'static>,
    units_per_em: f32,
}

impl Face {
    fn load(bytes: &'static [u8]) -> Option<Self> {
        // The first font of a collection (`.ttc`), or the font.
        let font_ref = FontRef::from_index(bytes, 0).ok()?;
        let metrics = font_ref.glyph_metrics(Size::unscaled(), LocationRef::default());
        let units_per_em = font_ref.metrics(Size::unscaled(), LocationRef::default()).units_per_em;
        Some(Self {
            font: Font::new(bytes.into(), 0)?,
            charmap: font_ref.charmap(),
            metrics,
            units_per_em: f32::from(units_per_em.max(1)),
        })
    }

    /// Width of `text` at `size` points (kerning aside: what is drawn is never wider).
    fn width(&self, text: &str, size: f32) -> f32 {
        text.chars().map(|c| self.char_width(c, size)).sum()
    }

    fn char_width(&self, c: char, size: f32) -> f32 {
        let glyph = self.charmap.map(c).unwrap_or_default();
        self.metrics.advance_width(glyph).unwrap_or(0.0) * size / self.units_per_em
    }

    fn draws(&self, c: char) -> bool {
        c.is_whitespace() || c.is_control() || self.charmap.map(c).is_some()
    }
}

/// System fonts for what DejaVu does not draw (Chinese, Japanese, Korean...): the first
/// installed of Noto Sans CJK (Debian's and Ubuntu's fonts-noto-cjk, Fedora's, Arch's) and
/// Droid Sans Fallback (fonts-droid-fallback).
const FALLBACK_FONTS: [&str; 5] = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-sans-cjk-fonts/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf",
];

/// The fallback face, read once, when a document first needs it.
static FALLBACK: LazyLock<Option<Face>> = LazyLock::new(|| {
    FALLBACK_FONTS.iter().find_map(|path| {
        let bytes = std::fs::read(path).ok()?;
        Face::load(Box::leak(bytes.into_boxed_slice()))
    })
});

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Style {
    Regular,
    Bold,
    Italic,
    BoldItalic,
    Mono,
}

struct Faces(HashMap<Style, Face>);

static FACES: LazyLock<Option<Faces>> = LazyLock::new(|| {
    let faces = [
        (Style::Regular, dejavu::sans::regular()),
        (Style::Bold, dejavu::sans::bold()),
        (Style::Italic, dejavu::sans::oblique()),
        (Style::BoldItalic, dejavu::sans::bold_oblique()),
        (Style::Mono, dejavu::sans_mono::regular()),
    ];
    let mut loaded = HashMap::new();
    for (style, bytes) in faces {
        loaded.insert(style, Face::load(bytes)?);
    }
    Some(Faces(loaded))
});

impl Faces {
    fn get(&self, style: Style) -> &Face {
        // Every style is loaded, or FACES is None.
        &self.0[&style]
    }

    /// The face that draws `c` in `style`: the style's, else the fallback's where it has
    /// the glyph (`true`).
    fn pick(&self, style: Style, c: char) -> (&Face, bool) {
        let face = self.get(style);
        if !face.draws(c)
            && let Some(fallback) = FALLBACK.as_ref()
            && fallback.draws(c)
        {
            return (fallback, true);
        }
        (face, false)
    }

    fn face(&self, style: Style, fallback: bool) -> &Face {
        match FALLBACK.as_ref() {
            Some(face) if fallback => face,
            _ => self.get(style),
        }
    }

    /// Width of `text` in `style` at `size`, each character in the face that draws it.
    fn width(&self, style: Style, text: &str, size: f32) -> f32 {
        text.chars().map(|c| self.pick(style, c).0.char_width(c, size)).sum()
    }

    /// `text` in runs of one face: (whether it is the fallback, the run).
    fn runs<'t>(&self, style: Style, text: &'t str) -> Vec<(bool, &'t str)> {
        let mut runs: Vec<(bool, &str)> = Vec::new();
        let mut start = 0;
        let mut current = None;
        for (at, c) in text.char_indices() {
            // Spaces go with the run they are in.
            let fallback = if c.is_whitespace() {
                current.unwrap_or(false)
            } else {
                self.pick(style, c).1
            };
            if current.is_some_and(|run| run != fallback) {
                runs.push((current.unwrap_or(false), &text[start..at]));
                start = at;
            }
            current = Some(fallback);
        }
        if start < text.len() {
            runs.push((current.unwrap_or(false), &text[start..]));
        }
        runs
    }

    /// Whether some character of `text` has a glyph in no face.
    fn lacks_glyphs(&self, text: &str) -> bool {
        text.chars().any(|c| !self.pick(Style::Regular, c).0.draws(c))
    }
}

fn style_of(span: &Span, bold: bool) -> Style {
    match (span.code, span.bold || bold, span.italic) {
        (true, ..) => Style::Mono,
        (false, true, true) => Style::BoldItalic,
        (false, true, false) => Style::Bold,
        (false, false, true) => Style::Italic,
        (false, false, false) => Style::Regular,
    }
}

/// One thing to paint on a page; y is from the top, of the text's baseline.
#[derive(Debug)]
enum Op {
    Text {
        x: f32,
        y: f32,
        text: String,
        style: Style,
        /// Drawn in the fallback face.
        fallback: bool,
        size: f32,
        ink: (u8, u8, u8),
        link: Option<String>,
        width: f32,
    },
    Rect {
        x: f32,
        y: f32,
        width: f32,
        height: f32,
        ink: (u8, u8, u8),
    },
}

/// A piece of a line: words of one style and link.
#[derive(Debug, Clone)]
struct Piece {
    text: String,
    style: Style,
    fallback: bool,
    link: Option<String>,
    width: f32,
}

/// How a run of text is set: size, ink, and whether it is all bold.
#[derive(Clone, Copy)]
struct Set {
    size: f32,
    ink: (u8, u8, u8),
    bold: bool,
}

impl Set {
    const BODY: Self = Self {
        size: BODY,
        ink: INK,
        bold: false,
    };

    fn line_height(self) -> f32 {
        self.size * LEADING
    }
}

struct Layout<'f> {
    faces: &'f Faces,
    pages: Vec<Vec<Op>>,
    /// Top of the next line on the current page.
    y: f32,
    /// Headings as (level, text, page, y).
    outline: Vec<(u8, String, usize, f32)>,
}

impl<'f> Layout<'f> {
    fn new(faces: &'f Faces) -> Self {
        Self {
            faces,
            pages: vec![Vec::new()],
            y: MARGIN_TOP,
            outline: Vec::new(),
        }
    }

    fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.y = MARGIN_TOP;
    }

    /// Makes room for `height` more, on a new page if this one has not.
    fn room(&mut self, height: f32) {
        if self.y + height > PAGE_HEIGHT - MARGIN_BOTTOM && self.y > MARGIN_TOP {
            self.new_page();
        }
    }

    fn page(&mut self) -> &mut Vec<Op> {
        if self.pages.is_empty() {
            self.pages.push(Vec::new());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    /// Spans broken into lines that fit `width`.
    fn lines(&self, spans: &[Span], width: f32, set: Set) -> Vec<Vec<Piece>> {
        let mut lines = vec![Vec::new()];
        let mut line_width = 0.0;
        for span in spans {
            let style = style_of(span, set.bold);
            let faces = self.faces;
            let measure = |text: &str| faces.width(style, text, set.size);
            for (n, hard_line) in span.text.split('\n').enumerate() {
                if n > 0 {
                    lines.push(Vec::new());
                    line_width = 0.0;
                }
                for word in words(hard_line) {
                    let word_width = measure(word);
                    let blank = word.trim().is_empty();
                    if line_width + measure(word.trim_end()) > width && line_width > 0.0 && !blank {
                        lines.push(Vec::new());
                        line_width = 0.0;
                    }
                    if line_width == 0.0 && blank {
                        continue;
                    }
                    if word_width > width {
                        // A word longer than the line (an address): cut where it fills one.
                        for part in cut(word, width, measure) {
                            if line_width > 0.0 {
                                lines.push(Vec::new());
                            }
                            line_width = measure(&part);
                            push_pieces(faces, lines.last_mut(), &part, style, span, set.size);
                        }
                        continue;
                    }
                    push_pieces(faces, lines.last_mut(), word, style, span, set.size);
                    line_width += word_width;
                }
            }
        }
        lines.retain(|line| !line.is_empty());
        lines
    }

    /// Sets spans as lines from `x`, `width` wide, moving down; `marker` (a bullet or a
    /// number) is set before the first line, `bar` draws a quote's bar at that x.
    fn paragraph(&mut self, spans: &[Span], x: f32, width: f32, set: Set, marker: Option<&str>, bar: Option<f32>) {
        let lines = self.lines(spans, width, set);
        let height = set.line_height();
        for (n, line) in lines.into_iter().enumerate() {
            self.room(height);
            let baseline = self.y + set.size * 1.05;
            if n == 0
                && let Some(marker) = marker
            {
                let marker_width = self.faces.get(Style::Regular).width(marker, set.size);
                self.page().push(Op::Text {
                    x: x - marker_width - 6.0,
                    y: baseline,
                    text: marker.to_owned(),
                    style: Style::Regular,
                    fallback: false,
                    size: set.size,
                    ink: set.ink,
                    link: None,
                    width: marker_width,
                });
            }
            if let Some(bar_x) = bar {
                let y = self.y;
                self.page().push(Op::Rect {
                    x: bar_x,
                    y,
                    width: 2.0,
                    height,
                    ink: RULE_INK,
                });
            }
            self.set_line(line, x, baseline, set);
            self.y += height;
        }
    }

    /// Puts a line's pieces on the page from `x`, links in the link colour.
    fn set_line(&mut self, line: Vec<Piece>, x: f32, baseline: f32, set: Set) {
        let mut at = x;
        for piece in merge(line) {
            let ink = if piece.link.is_some() { LINK_INK } else { set.ink };
            let width = piece.width;
            self.page().push(Op::Text {
                x: at,
                y: baseline,
                text: piece.text,
                style: piece.style,
                fallback: piece.fallback,
                size: set.size,
                ink,
                link: piece.link,
                width,
            });
            at += width;
        }
    }

    fn blocks(&mut self, blocks: &[Block], x: f32, width: f32, quote: Option<f32>) {
        for block in blocks {
            self.block(block, x, width, quote);
        }
    }

    fn block(&mut self, block: &Block, x: f32, width: f32, quote: Option<f32>) {
        let gap = BODY * 0.6;
        match block {
            Block::Heading(level, spans) => {
                let size = match level {
                    1 => 17.0,
                    2 => 14.0,
                    3 => 12.0,
                    _ => 11.0,
                };
                let set = Set {
                    size,
                    ink: HEADING_INK,
                    bold: true,
                };
                self.y += size * 0.7;
                // A heading never ends a page: keep it with three lines of what follows.
                self.room(set.line_height() + 3.0 * Set::BODY.line_height());
                let page = self.pages.len() - 1;
                self.outline.push((*level, plain_text(spans), page, self.y));
                self.paragraph(spans, x, width, set, None, None);
                self.y += size * 0.25;
            }
            Block::Paragraph(spans) => {
                let set = if quote.is_some() {
                    Set {
                        ink: QUIET_INK,
                        ..Set::BODY
                    }
                } else {
                    Set::BODY
                };
                self.paragraph(spans, x, width, set, None, quote);
                self.y += gap;
            }
            Block::Quote(blocks) => {
                let bar = quote.unwrap_or(x);
                self.blocks(blocks, x + INDENT, width - INDENT, Some(bar));
            }
            Block::List(start, items) => {
                for (n, item) in items.iter().enumerate() {
                    let marker = match start {
                        Some(first) => format!("{}.", first + n as u64),
                        None => "•".to_owned(),
                    };
                    let inner = x + INDENT;
                    for (k, block) in item.iter().enumerate() {
                        match (k, block) {
                            (0, Block::Paragraph(spans)) => {
                                let set = Set::BODY;
                                self.paragraph(spans, inner, width - INDENT, set, Some(&marker), quote);
                                self.y += gap * 0.5;
                            }
                            _ => self.block(block, inner, width - INDENT, quote),
                        }
                    }
                }
                self.y += gap * 0.5;
            }
            Block::Code(code) => {
                let spans: Vec<Span> = vec![Span {
                    text: code.clone(),
                    code: true,
                    ..Span::default()
                }];
                let set = Set {
                    size: 9.0,
                    ink: INK,
                    bold: false,
                };
                self.paragraph(&spans, x + 8.0, width - 8.0, set, None, quote);
                self.y += gap;
            }
            Block::Table(rows) => self.table(rows, x, width),
            Block::Rule => {
                self.room(BODY * 2.0);
                let y = self.y + BODY * 0.8;
                self.page().push(Op::Rect {
                    x,
                    y,
                    width,
                    height: 0.75,
                    ink: RULE_INK,
                });
                self.y += BODY * 1.8;
            }
        }
    }

    /// Columns of equal width with lines between rows; the first row bold. A row that does
    /// not fit what is left of the page starts the next one.
    fn table(&mut self, rows: &[Vec<Vec<Span>>], x: f32, width: f32) {
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let column = width / columns as f32;
        let pad = 4.0;
        for (n, row) in rows.iter().enumerate() {
            let set = Set {
                bold: n == 0,
                ..Set::BODY
            };
            let laid: Vec<Vec<Vec<Piece>>> = row
                .iter()
                .map(|cell| self.lines(cell, column - 2.0 * pad, set))
                .collect();
            let tallest = laid.iter().map(Vec::len).max().unwrap_or(1).max(1);
            let height = tallest as f32 * set.line_height() + 2.0 * pad;
            self.room(height);
            let top = self.y;
            for (c, lines) in laid.into_iter().enumerate() {
                let cell_x = x + c as f32 * column + pad;
                for (l, line) in lines.into_iter().enumerate() {
                    let baseline = top + pad + l as f32 * set.line_height() + set.size * 1.05;
                    self.set_line(line, cell_x, baseline, set);
                }
            }
            let rule = if n == 0 { 1.0 } else { 0.5 };
            self.page().push(Op::Rect {
                x,
                y: top + height,
                width,
                height: rule,
                ink: RULE_INK,
            });
            self.y = top + height + rule;
        }
        self.y += BODY * 0.6;
    }
}

/// Words with the spaces after them.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(char::is_whitespace)
}

/// `word` in parts no wider than `width`.
fn cut(word: &str, width: f32, measure: impl Fn(&str) -> f32) -> Vec<String> {
    let mut parts = vec![String::new()];
    for c in word.chars() {
        let last = parts.last_mut().map(|part| {
            let mut longer = part.clone();
            longer.push(c);
            (measure(&longer) > width && !part.is_empty(), longer)
        });
        match last {
            Some((true, _)) => parts.push(c.to_string()),
            Some((false, longer)) => {
                if let Some(part) = parts.last_mut() {
                    *part = longer;
                }
            }
            None => {}
        }
    }
    parts
}

/// `text` onto the line as pieces, one for each run of a face.
fn push_pieces(faces: &Faces, line: Option<&mut Vec<Piece>>, text: &str, style: Style, span: &Span, size: f32) {
    if let Some(line) = line {
        for (fallback, run) in faces.runs(style, text) {
            line.push(Piece {
                text: run.to_owned(),
                style,
                fallback,
                link: span.link.clone(),
                width: faces.width(style, run, size),
            });
        }
    }
}

/// Neighbouring pieces of one style and link as one, so a line is a few draws, not one a
/// word; the line's trailing space is dropped.
fn merge(line: Vec<Piece>) -> Vec<Piece> {
    let mut merged: Vec<Piece> = Vec::new();
    for piece in line {
        match merged.last_mut() {
            Some(last) if last.style == piece.style && last.fallback == piece.fallback && last.link == piece.link => {
                last.text.push_str(&piece.text);
                last.width += piece.width;
            }
            _ => merged.push(piece),
        }
    }
    if let Some(last) = merged.last_mut() {
        let trimmed = last.text.trim_end().len();
        last.text.truncate(trimmed);
    }
    merged
}

/// What a PDF says when some of its characters have no glyph in any font it has.
pub const NO_GLYPHS: &str = "Some characters of this document cannot be drawn with the fonts on this server; \
                             they show as blank boxes. The Word and Markdown exports hold them all.";

/// Every text of the document, to check the fonts against.
fn all_text(document: &Document) -> String {
    fn collect(blocks: &[Block], out: &mut String) {
        for block in blocks {
            match block {
                Block::Heading(_, spans) | Block::Paragraph(spans) => out.push_str(&plain_text(spans)),
                Block::Quote(inner) => collect(inner, out),
                Block::List(_, items) => items.iter().for_each(|item| collect(item, out)),
                Block::Code(code) => out.push_str(code),
                Block::Table(rows) => rows.iter().flatten().for_each(|cell| out.push_str(&plain_text(cell))),
                Block::Rule => {}
            }
        }
    }
    let mut out = document.title.clone();
    document.byline.iter().for_each(|line| out.push_str(line));
    collect(&document.blocks, &mut out);
    out
}

/// The document as the bytes of a PDF file.
pub fn write(document: &Document) -> anyhow::Result<Vec<u8>> {
    write_counted(document).map(|(bytes, _)| bytes)
}

/// The PDF and how many pages it has.
pub fn write_counted(document: &Document) -> anyhow::Result<(Vec<u8>, usize)> {
    let faces = FACES
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the PDF fonts could not be read"))?;
    let mut layout = Layout::new(faces);
    let title = [Span::plain(&document.title)];
    let title_set = Set {
        size: 22.0,
        ink: HEADING_INK,
        bold: true,
    };
    let width = PAGE_WIDTH - 2.0 * MARGIN_X;
    layout.paragraph(&title, MARGIN_X, width, title_set, None, None);
    layout.y += 4.0;
    let quiet = Set {
        ink: QUIET_INK,
        ..Set::BODY
    };
    for line in &document.byline {
        layout.paragraph(&[Span::plain(line)], MARGIN_X, width, quiet, None, None);
    }
    if faces.lacks_glyphs(&all_text(document)) {
        layout.paragraph(&[Span::plain(NO_GLYPHS)], MARGIN_X, width, quiet, None, None);
    }
    layout.y += BODY;
    layout.blocks(&document.blocks, MARGIN_X, width, None);
    let pages = layout.pages.len();
    Ok((paint(faces, document, layout)?, pages))
}

fn paint(faces: &Faces, document: &Document, layout: Layout<'_>) -> anyhow::Result<Vec<u8>> {
    let mut pdf = Pdf::new();
    let count = layout.pages.len();
    let settings = PageSettings::from_wh(PAGE_WIDTH, PAGE_HEIGHT).ok_or_else(|| anyhow::anyhow!("page size"))?;
    for (n, ops) in layout.pages.into_iter().enumerate() {
        let mut page = pdf.start_page_with(settings.clone());
        let mut links = Vec::new();
        {
            let mut surface = page.surface();
            for op in ops {
                match op {
                    Op::Text {
                        x,
                        y,
                        text,
                        style,
                        fallback,
                        size,
                        ink,
                        link,
                        width,
                    } => {
                        surface.set_fill(Some(fill(ink)));
                        let font = faces.face(style, fallback).font.clone();
                        surface.draw_text(Point::from_xy(x, y), font, size, &text, false, TextDirection::Auto);
                        if let Some(url) = link {
                            let rect = Rect::from_xywh(x, y - size, width.max(1.0), size * 1.3);
                            links.extend(rect.map(|rect| (rect, url)));
                            // Underlined, as links are on screen.
                            fill_rect(&mut surface, x, y + 1.5, width, 0.5, ink);
                        }
                    }
                    Op::Rect {
                        x,
                        y,
                        width,
                        height,
                        ink,
                    } => fill_rect(&mut surface, x, y, width, height, ink),
                }
            }
            let footer = format!("{} · {} / {count}", document.title, n + 1);
            let size = 8.0;
            let measure = |s: &str| faces.width(Style::Regular, s, size);
            let footer = shorten(&footer, PAGE_WIDTH - 2.0 * MARGIN_X, measure);
            let mut x = (PAGE_WIDTH - measure(&footer)) / 2.0;
            surface.set_fill(Some(fill(QUIET_INK)));
            for (fallback, run) in faces.runs(Style::Regular, &footer) {
                surface.draw_text(
                    Point::from_xy(x, PAGE_HEIGHT - MARGIN_BOTTOM / 2.0),
                    faces.face(Style::Regular, fallback).font.clone(),
                    size,
                    run,
                    false,
                    TextDirection::Auto,
                );
                x += measure(run);
            }
            surface.finish();
        }
        for (rect, url) in links {
            let target = Target::Action(LinkAction::new(url).into());
            page.add_annotation(Annotation::new_link(LinkAnnotation::new(rect, target), None));
        }
        page.finish();
    }
    pdf.set_outline(outline(&layout.outline));
    pdf.set_metadata(
        Metadata::new()
            .title(document.title.clone())
            .creator("Insight".to_owned()),
    );
    pdf.finish()
        .map_err(|error| anyhow::anyhow!("the PDF could not be written: {error:?}"))
}

fn fill(ink: (u8, u8, u8)) -> Fill {
    Fill {
        paint: rgb::Color::new(ink.0, ink.1, ink.2).into(),
        ..Fill::default()
    }
}

fn fill_rect(surface: &mut krilla::surface::Surface<'_>, x: f32, y: f32, width: f32, height: f32, ink: (u8, u8, u8)) {
    let Some(rect) = Rect::from_xywh(x, y, width, height) else {
        return;
    };
    let mut path = PathBuilder::new();
    path.push_rect(rect);
    if let Some(path) = path.finish() {
        surface.set_fill(Some(fill(ink)));
        surface.draw_path(&path);
    }
}

/// `text` cut with an ellipsis to fit `width`.
fn shorten(text: &str, width: f32, measure: impl Fn(&str) -> f32) -> String {
    if measure(text) <= width {
        return text.to_owned();
    }
    let mut short: String = text.to_owned();
    while !short.is_empty() && measure(&format!("{short}…")) > width {
        short.pop();
    }
    format!("{}…", short.trim_end())
}

/// Headings as the PDF's outline, each under the last one of a higher level.
fn outline(headings: &[(u8, String, usize, f32)]) -> Outline {
    fn children(headings: &[(u8, String, usize, f32)]) -> Vec<OutlineNode> {
        let mut nodes = Vec::new();
        let mut rest = headings;
        while let Some(((level, text, page, y), after)) = rest.split_first() {
            let end = after.iter().position(|(l, ..)| l <= level).unwrap_or(after.len());
            let mut node = OutlineNode::new(text.clone(), XyzDestination::new(*page, Point::from_xy(0.0, *y)));
            for child in children(&after[..end]) {
                node.push_child(child);
            }
            nodes.push(node);
            rest = &after[end..];
        }
        nodes
    }
    let mut outline = Outline::new();
    for node in children(headings) {
        outline.push_child(node);
    }
    outline
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_within_the_width_and_long_ones_are_cut() {
        let Some(faces) = FACES.as_ref() else {
            panic!("the fonts load");
        };
        let layout = Layout::new(faces);
        let text = "Researchers want the export to keep every word ".repeat(8);
        let lines = layout.lines(&[Span::plain(&text)], 200.0, Set::BODY);
        assert!(lines.len() > 3, "{} lines", lines.len());
        for line in &lines {
            let width: f32 = merge(line.clone()).iter().map(|piece| piece.width).sum();
            assert!(width <= 200.5, "a line is {width} wide");
        }
        let joined: String = lines
            .iter()
            .map(|line| merge(line.clone()).iter().map(|p| p.text.clone()).collect::<String>())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined.split_whitespace().count(), text.split_whitespace().count());
        let long = "https://insight.example/".to_owned() + &"a".repeat(200);
        let lines = layout.lines(&[Span::plain(&long)], 100.0, Set::BODY);
        assert!(lines.len() > 5);
        let rejoined: String = lines
            .iter()
            .flat_map(|line| line.iter().map(|p| p.text.clone()))
            .collect();
        assert_eq!(rejoined, long);
    }
}
