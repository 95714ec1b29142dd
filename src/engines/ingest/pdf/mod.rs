//! PDF documents: the text layer, one line per line of text, pages in order.
//!
//! Text comes from `pdf-extract` (which parses with `lopdf`) through our own output device that
//! groups characters into lines by their position. Neither library was written for hostile
//! input, so the file is checked and the parsed document tidied before extraction:
//!
//! - compression bombs: cross-reference and object streams, which `lopdf` unpacks while
//!   loading, are found in the raw bytes and unpacked with a cap first; object streams are
//!   checked again by a load hook as `lopdf` parses them; after loading, every other stream is
//!   unpacked with a cap and replaced by its unpacked bytes, so the libraries never unpack
//!   anything themselves ([`MAX_STREAM_BYTES`] each, [`MAX_TOTAL_STREAM_BYTES`] together);
//! - image data is dropped (it is never text, and `pdf-extract` would otherwise unpack it and
//!   parse it as drawing operators);
//! - form XObjects are followed with a depth and work limit, so a form that draws itself cannot
//!   overflow the stack (which aborts the process rather than unwinding);
//! - inherited page attributes are copied onto each page, so a cyclic page tree cannot make
//!   `pdf-extract` recurse forever.
//!
//! Known gaps: the object streams of an encrypted file that opens without a password are
//! unpacked by `lopdf` before any check (their bytes are encrypted in the file), and a
//! cross-reference stream whose `/Filter` stands more than 64 KB before its `/Type` escapes the
//! raw check. Both need a deliberately crafted file.
//!
//! What remains are panics inside the libraries on odd files: extraction runs under
//! [`std::panic::catch_unwind`] and a panic becomes [`IngestError::Invalid`]. (The panic hook
//! still reports the panic.) This needs `panic = "unwind"`, the default. Extraction is CPU-bound:
//! call it from `spawn_blocking`.
//!
//! `streams.rs` holds the checks on compressed data, `pages.rs` those on the page tree and
//! on what the pages draw, and `lines.rs` the output device.

/// A file of `tests/fixtures`, for the tests of every module below.
#[cfg(test)]
macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name)).as_slice()
    };
}

mod lines;
mod pages;
mod streams;

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document, ObjectId};

use super::IngestError;
use lines::LineOutput;
pub use streams::{MAX_STREAM_BYTES, MAX_TOTAL_STREAM_BYTES};

const PASSWORD_PROTECTED: &str = "The PDF is password-protected. Remove the password (for example, open it with the password and save or print it to a new PDF) and upload it again.";
const NO_TEXT_LAYER: &str = "The PDF has no text layer: its pages are images, as in a scan. Run it through OCR (text recognition) first, then upload the result.";
const UNREADABLE: &str = "The PDF could not be read: its structure is damaged or unusual. Save or export it again (for example with \"Print to PDF\") and upload that.";

/// The text layer of a PDF: one line per line of text, pages in order, `\n` between lines.
pub fn extract_text(bytes: &[u8]) -> Result<String, IngestError> {
    if bytes.is_empty() {
        return Err(IngestError::Invalid(
            "The file is empty. Expected a PDF document.".to_owned(),
        ));
    }
    if streams::find(bytes.get(..1024).unwrap_or(bytes), b"%PDF-").is_none() {
        return Err(IngestError::Invalid(
            "The file is not a PDF: it does not start with the %PDF- header. Expected a PDF document with a text layer."
                .to_owned(),
        ));
    }
    streams::check_load_time_streams(bytes)?;
    match catch_unwind(AssertUnwindSafe(|| extract(bytes))) {
        Ok(result) => result,
        Err(_) => Err(IngestError::Invalid(UNREADABLE.to_owned())),
    }
}

fn extract(bytes: &[u8]) -> Result<String, IngestError> {
    let mut doc = Document::load_mem_with_options(bytes, streams::load_options()).map_err(|error| match error {
        pdf_extract::Error::Decryption(_) | pdf_extract::Error::InvalidPassword => {
            IngestError::Invalid(PASSWORD_PROTECTED.to_owned())
        }
        error => IngestError::Invalid(format!(
            "The PDF is damaged and cannot be read ({error}). Save or export it again and upload that."
        )),
    })?;
    // A document that opens without a password was decrypted while loading; one that is still
    // encrypted needs a password.
    if doc.is_encrypted() {
        return Err(IngestError::Invalid(PASSWORD_PROTECTED.to_owned()));
    }
    if streams::has_marked_stream(&doc) {
        return Err(streams::too_large_stream());
    }
    // As `pdf-extract` will draw them (a page tree may list a page more than once) and each once.
    let drawn: Vec<ObjectId> = doc.get_pages().into_values().collect();
    let pages: Vec<ObjectId> = {
        let mut seen = HashSet::new();
        drawn.iter().copied().filter(|id| seen.insert(*id)).collect()
    };
    if pages.is_empty() {
        return Err(IngestError::Invalid(
            "The PDF has no pages that can be read; it is probably damaged. Save or export it again and upload that."
                .to_owned(),
        ));
    }
    streams::unpack_streams(&mut doc)?;
    pages::flatten_page_attributes(&mut doc, &pages);
    pages::check_drawing_work(&doc, &drawn)?;

    let mut output = LineOutput::default();
    pdf_extract::output_doc(&doc, &mut output).map_err(|error| {
        IngestError::Invalid(format!(
            "The PDF is damaged and its text cannot be read ({error}). Save or export it again and upload that."
        ))
    })?;
    let text = output.finish();
    if text.trim().is_empty() {
        return Err(IngestError::Invalid(NO_TEXT_LAYER.to_owned()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    pub(super) const INTERVIEW: &str = "Interview with Anna, product manager\n\
        Date: 12 March 2025\n\
        Interviewer: Thanks for taking the time. How do you plan a release today?\n\
        Anna: Mostly in spreadsheets. We export tickets every Friday and then\n\
        argue about priorities.\n\
        Interviewer: What is the hardest part?\n\
        Anna: Keeping everyone on the same page.\n\
        Honestly, it’s the meetings — “alignment” takes hours & nobody <likes> it.\n\
        Tool Used for\n\
        Jira Tickets\n\
        Excel Release plan\n\
        Capacity per team\n\
        Interviewer: Thank you, Anna.";

    pub(super) fn invalid(result: Result<String, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    /// A PDF from object bodies; object 1 is the catalog.
    pub(super) fn build_pdf(objects: &[(u32, Vec<u8>)]) -> Vec<u8> {
        let mut data = b"%PDF-1.5\n".to_vec();
        let mut offsets = Vec::new();
        for (number, body) in objects {
            offsets.push((*number, data.len()));
            writeln!(data, "{number} 0 obj").unwrap();
            data.extend_from_slice(body);
            data.extend_from_slice(b"\nendobj\n");
        }
        let size = objects.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
        let xref = data.len();
        write!(data, "xref\n0 {size}\n0000000000 65535 f \n").unwrap();
        for number in 1..size {
            match offsets.iter().find(|(n, _)| *n == number) {
                Some((_, offset)) => writeln!(data, "{offset:010} 00000 n ").unwrap(),
                None => writeln!(data, "0000000000 65535 f ").unwrap(),
            }
        }
        write!(
            data,
            "trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
        )
        .unwrap();
        data
    }

    pub(super) fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut body = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\nendstream");
        body
    }

    pub(super) const FONT: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

    /// A one-page PDF whose page draws `content` with font F1 and the given XObjects, plus `extra` objects.
    pub(super) fn one_page(content: Vec<u8>, xobjects: &str, extra: Vec<(u32, Vec<u8>)>) -> Vec<u8> {
        let mut objects = vec![
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
            (
                3,
                format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> /XObject << {xobjects} >> >> /Contents 5 0 R >>").into_bytes(),
            ),
            (4, FONT.to_vec()),
            (5, content),
        ];
        objects.extend(extra);
        build_pdf(&objects)
    }

    pub(super) fn text_op(text: &str, y: u32) -> String {
        format!("BT /F1 12 Tf 72 {y} Td ({text}) Tj ET\n")
    }

    pub(super) fn deflate(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn libreoffice_export_of_the_interview() {
        assert_eq!(
            extract_text(fixture!("pdf_interview_libreoffice.pdf")).unwrap(),
            INTERVIEW
        );
    }

    #[test]
    fn owner_password_only_opens_without_a_password() {
        assert_eq!(
            extract_text(fixture!("pdf_encrypted_owner_only.pdf")).unwrap(),
            INTERVIEW
        );
    }

    #[test]
    fn user_password_is_password_protected() {
        assert_eq!(
            invalid(extract_text(fixture!("pdf_encrypted_user_password.pdf"))),
            PASSWORD_PROTECTED
        );
    }

    #[test]
    fn scanned_image_only_has_no_text_layer() {
        assert_eq!(
            invalid(extract_text(fixture!("pdf_scanned_image_only.pdf"))),
            NO_TEXT_LAYER
        );
    }

    #[test]
    fn not_a_pdf_empty_and_broken() {
        assert!(invalid(extract_text(b"")).contains("empty"));
        assert!(invalid(extract_text(b"Hello, plain text")).contains("not a PDF"));
        assert!(invalid(extract_text(fixture!("docx_tracked_changes.docx"))).contains("not a PDF"));
        assert!(invalid(extract_text(&[0u8; 4096])).contains("not a PDF"));
        assert!(invalid(extract_text(b"%PDF-1.7\n")).contains("damaged"));
        assert!(invalid(extract_text(b"%PDF-1.7\n%%EOF\n")).contains("damaged"));
        // A valid file with no pages.
        let no_pages = build_pdf(&[
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec()),
        ]);
        assert!(invalid(extract_text(&no_pages)).contains("no pages"));
        // A page with nothing on it.
        assert_eq!(
            invalid(extract_text(&one_page(stream("", b""), "", vec![]))),
            NO_TEXT_LAYER
        );
    }

    #[test]
    fn truncated_pdfs() {
        let whole = fixture!("pdf_interview_libreoffice.pdf");
        for cut in [10, 100, whole.len() / 2, whole.len() - 40] {
            assert!(extract_text(&whole[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn mangled_pdfs_never_panic_or_abort() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for original in [
            fixture!("pdf_three_pages_reportlab.pdf"),
            fixture!("pdf_forms_and_cyclic_parent.pdf"),
        ] {
            for round in 0..60 {
                let mut bytes = original.to_vec();
                for _ in 0..(1 + round % 10) {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let at = usize::try_from(seed % bytes.len() as u64).unwrap();
                    bytes[at] = (seed >> 40) as u8;
                }
                let _ = extract_text(&bytes);
            }
        }
    }
}
