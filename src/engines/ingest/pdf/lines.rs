//! The text layer as lines: `pdf-extract` hands over characters with their positions, and
//! [`LineOutput`] groups them into lines.

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// Collects characters into lines: a character starts a new line when it sits lower or higher
/// than the previous one by more than half the font size; a gap wider than a tenth of the font
/// size becomes a space.
#[derive(Default)]
pub(super) struct LineOutput {
    lines: Vec<String>,
    line: String,
    last_x_end: f64,
    last_y: f64,
    /// The next character begins a new piece of text (a string of a `Tj`/`TJ`), whose position
    /// is compared with what came before.
    new_piece: bool,
}

impl LineOutput {
    fn end_line(&mut self) {
        let line = self.line.trim();
        if !line.is_empty() {
            self.lines.push(line.to_owned());
        }
        self.line.clear();
    }

    pub(super) fn finish(mut self) -> String {
        self.end_line();
        self.lines.join("\n")
    }
}

impl OutputDev for LineOutput {
    fn begin_page(
        &mut self,
        _page: u32,
        _media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.end_line();
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.end_line();
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        let (x, y) = (trm.m31, trm.m32);
        // The font size in device space: the side of a square with the area of the transformed em box.
        let size = ((font_size * (trm.m11 + trm.m21)) * (font_size * (trm.m12 + trm.m22)))
            .abs()
            .sqrt();
        let size = if size.is_finite() && size > 0.0 { size } else { 1.0 };
        if self.new_piece && !self.line.is_empty() {
            if (y - self.last_y).abs() > size * 0.5 {
                self.end_line();
            } else if x > self.last_x_end + size * 0.1 && !self.line.ends_with(char::is_whitespace) {
                self.line.push(' ');
            }
        }
        self.line.extend(char.chars().filter(|c| !c.is_control() || *c == '\t'));
        self.new_piece = false;
        self.last_y = y;
        self.last_x_end = x + width * size;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.new_piece = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::engines::ingest::pdf::extract_text;
    use crate::engines::ingest::pdf::tests::{one_page, stream};

    #[test]
    fn pages_in_order_and_same_line_text_in_other_fonts() {
        let expected: Vec<String> = (1..=3)
            .flat_map(|page| {
                (1..=3)
                    .map(move |line| {
                        format!(
                            "Page {page}, line {line}: Anna said the export takes {} minutes.",
                            page * line
                        )
                    })
                    .chain(std::iter::once("Interviewer: And then?".to_owned()))
            })
            .collect();
        assert_eq!(
            extract_text(fixture!("pdf_three_pages_reportlab.pdf")).unwrap(),
            expected.join("\n")
        );
    }

    #[test]
    fn lines_words_and_spaces() {
        // Two pieces on one baseline with a gap, a line below, text with its own spaces.
        let content = "BT /F1 12 Tf 72 700 Td (Anna:) Tj 60 0 Td (Hello) Tj 0 -14 Td (  second   line  ) Tj ET\n\
                       BT /F1 12 Tf 72 650 Td [(Ker) -20 (ned) -600 (apart)] TJ ET\n";
        let pdf = one_page(stream("", content.as_bytes()), "", vec![]);
        assert_eq!(extract_text(&pdf).unwrap(), "Anna: Hello\nsecond   line\nKerned apart");
    }
}
