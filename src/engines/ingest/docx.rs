//! Word documents (.docx): the text of the main document part, one line per paragraph.
//!
//! A .docx file is a ZIP archive; the body is `word/document.xml` (or wherever the package's
//! `_rels/.rels` points its `officeDocument` relationship). Paragraphs (`w:p`) become lines in
//! document order, table cells included; `w:tab` becomes a tab and `w:br`/`w:cr` a line break.
//! Deleted text of tracked changes (`w:del`, `w:moveFrom`) is left out, inserted text kept.
//! Headers, footers, footnotes and comments live in other parts and are not read.

use std::borrow::Cow;
use std::io::{Cursor, Read};

use quick_xml::NsReader;
use quick_xml::XmlVersion;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::{Namespace, ResolveResult};

use super::IngestError;

/// The most bytes read from one part of the archive, whatever the archive says its size is:
/// a guard against ZIP bombs.
pub const MAX_PART_BYTES: u64 = 50 * 1024 * 1024;

/// `_rels/.rels` is tiny in practice.
const MAX_RELS_BYTES: u64 = 1024 * 1024;

const DEFAULT_MAIN_PART: &str = "word/document.xml";

/// WordprocessingML, transitional and strict.
const W_NAMESPACES: [&str; 2] = [
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",
];
const MC_NAMESPACE: &str = "http://schemas.openxmlformats.org/markup-compatibility/2006";
const OFFICE_DOCUMENT_REL_SUFFIX: &str = "/officeDocument";

const NOT_DOCX: &str = "The file is not a readable Word document (.docx)";

/// The document's text: one line per paragraph (`\n` between them), in document order.
pub fn extract_text(bytes: &[u8]) -> Result<String, IngestError> {
    check_container(bytes)?;
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|_| IngestError::Invalid(format!("{NOT_DOCX}: it is not a complete ZIP archive. Save it again from Word or LibreOffice as .docx and upload that.")))?;
    let main_part = main_part_name(&mut archive).unwrap_or_else(|| DEFAULT_MAIN_PART.to_owned());
    let xml = match read_part(&mut archive, &main_part, MAX_PART_BYTES)? {
        Some(xml) => xml,
        None if main_part != DEFAULT_MAIN_PART => {
            read_part(&mut archive, DEFAULT_MAIN_PART, MAX_PART_BYTES)?.ok_or_else(no_document_part)?
        }
        None => return Err(no_document_part()),
    };
    let xml = decode_xml(&xml)?;
    let text = document_text(&xml)?;
    if text.trim().is_empty() {
        return Err(IngestError::Invalid("The Word document contains no text.".to_owned()));
    }
    Ok(text)
}

fn no_document_part() -> IngestError {
    IngestError::Invalid(format!(
        "{NOT_DOCX}: the archive has no word/document.xml. Expected a Word document saved as .docx."
    ))
}

/// Recognises what is not a .docx at all: legacy Word files, password-protected documents
/// (which Office stores as an OLE compound file around an `EncryptedPackage` stream), RTF.
fn check_container(bytes: &[u8]) -> Result<(), IngestError> {
    const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    if bytes.is_empty() {
        return Err(IngestError::Invalid(format!("{NOT_DOCX}: the file is empty.")));
    }
    if bytes.starts_with(&OLE_MAGIC) {
        if contains(bytes, &utf16le("EncryptedPackage")) {
            return Err(IngestError::Invalid(
                "The Word document is password-protected. Remove the password (in Word: File > Info > Protect Document > Encrypt with Password) and upload it again."
                    .to_owned(),
            ));
        }
        return Err(IngestError::Unsupported(
            "The file is a legacy Word document (.doc) or another older Office file, which we cannot read. Open it in Word or LibreOffice, save it as .docx and upload that."
                .to_owned(),
        ));
    }
    if bytes.starts_with(b"{\\rtf") {
        return Err(IngestError::Unsupported(
            "The file is an RTF document, which we cannot read. Open it in Word or LibreOffice, save it as .docx and upload that."
                .to_owned(),
        ));
    }
    if !bytes.starts_with(b"PK") {
        return Err(IngestError::Invalid(format!(
            "{NOT_DOCX}: it is not a ZIP archive, as .docx files are. Expected a Word document saved as .docx."
        )));
    }
    Ok(())
}

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|window| window == needle)
}

/// Reads one part of the archive, at most `cap` bytes; `None` when there is no such part.
fn read_part(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
    cap: u64,
) -> Result<Option<Vec<u8>>, IngestError> {
    let file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(_) => {
            return Err(IngestError::Invalid(format!(
                "{NOT_DOCX}: its {name} cannot be unpacked (it is damaged, encrypted or compressed in a way Word does not use). Save it again from Word or LibreOffice as .docx and upload that."
            )));
        }
    };
    let too_large = || {
        IngestError::Invalid(format!(
            "The Word document is too large: its {name} unpacks to more than {} MB. Split it into smaller documents and upload those.",
            cap / (1024 * 1024)
        ))
    };
    if file.size() > cap {
        return Err(too_large());
    }
    let mut data = Vec::new();
    // The declared size can lie: never inflate more than the cap, whatever it says.
    let read = file.take(cap.saturating_add(1)).read_to_end(&mut data);
    if read.is_err() {
        return Err(IngestError::Invalid(format!(
            "{NOT_DOCX}: its {name} is damaged and cannot be unpacked. Save it again from Word or LibreOffice as .docx and upload that."
        )));
    }
    if u64::try_from(data.len()).unwrap_or(u64::MAX) > cap {
        return Err(too_large());
    }
    Ok(Some(data))
}

/// The part `_rels/.rels` names as the main document, without a leading `/`.
fn main_part_name(archive: &mut zip::ZipArchive<Cursor<&[u8]>>) -> Option<String> {
    let rels = read_part(archive, "_rels/.rels", MAX_RELS_BYTES).ok()??;
    let rels = decode_xml(&rels).ok()?;
    let mut reader = NsReader::from_str(&rels);
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "Relationship" => {
                let rel_type = attribute(&e, "Type")?;
                if rel_type.ends_with(OFFICE_DOCUMENT_REL_SUFFIX) {
                    let external = attribute(&e, "TargetMode").is_some_and(|mode| mode == "External");
                    let target = attribute(&e, "Target")?;
                    let target = target.trim_start_matches('/');
                    let plain = target.len() <= 200 && !target.contains("..") && !target.contains(char::is_control);
                    if external || target.is_empty() || !plain {
                        return None;
                    }
                    return Some(target.to_owned());
                }
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let attr = element.try_get_attribute(name).ok()??;
    attr.normalized_value(XmlVersion::Implicit1_0).ok().map(Cow::into_owned)
}

/// The XML as text: UTF-8 (with or without BOM) or UTF-16 with a BOM.
fn decode_xml(bytes: &[u8]) -> Result<Cow<'_, str>, IngestError> {
    let not_text = || {
        IngestError::Invalid(format!(
            "{NOT_DOCX}: its XML is not valid UTF-8 or UTF-16 text. Save it again from Word or LibreOffice as .docx and upload that."
        ))
    };
    let utf16 = |rest: &[u8], from: fn([u8; 2]) -> u16| -> Result<Cow<'_, str>, IngestError> {
        let units = rest
            .chunks_exact(2)
            .map(|pair| from([pair.first().copied().unwrap_or(0), pair.get(1).copied().unwrap_or(0)]));
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map(Cow::Owned)
            .map_err(|_| not_text())
    };
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        std::str::from_utf8(rest).map(Cow::Borrowed).map_err(|_| not_text())
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        utf16(rest, u16::from_le_bytes)
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        utf16(rest, u16::from_be_bytes)
    } else {
        std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|_| not_text())
    }
}

/// Walks the document XML and collects paragraph text.
fn document_text(xml: &str) -> Result<String, IngestError> {
    let mut reader = NsReader::from_str(xml);
    let mut walker = Walker::default();
    loop {
        let result = reader
            .read_resolved_event()
            .map(|(ns, event)| (element_kind(&ns), event));
        let (kind, event) = result.map_err(|error| {
            IngestError::Invalid(format!(
                "{NOT_DOCX}: its document.xml is not well-formed XML ({error}, at byte {}). Save it again from Word or LibreOffice as .docx and upload that.",
                reader.error_position()
            ))
        })?;
        match event {
            Event::Start(e) => walker.start(kind, e.local_name().as_ref(), false),
            Event::Empty(e) => walker.start(kind, e.local_name().as_ref(), true),
            Event::End(e) => walker.end(kind, e.local_name().as_ref()),
            Event::Text(e) => walker.text(&e.xml10_content()),
            Event::CData(e) => walker.text(&e),
            Event::GeneralRef(e) => {
                if let Some(c) = resolve_reference(&e) {
                    walker.text(c.encode_utf8(&mut [0; 4]));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !walker.is_document {
        return Err(IngestError::Invalid(format!(
            "{NOT_DOCX}: it has no Word document body. Expected a Word document saved as .docx, not another Office file."
        )));
    }
    Ok(walker.finish())
}

pub(crate) fn resolve_reference(reference: &BytesRef<'_>) -> Option<char> {
    if reference.is_char_ref() {
        return reference.resolve_char_ref().ok().flatten();
    }
    match reference.as_ref() {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// WordprocessingML.
    W,
    /// Markup compatibility (`mc:AlternateContent` and friends).
    Mc,
    Other,
}

fn element_kind(ns: &ResolveResult<'_>) -> Kind {
    match ns {
        ResolveResult::Bound(Namespace(uri)) if W_NAMESPACES.contains(uri) => Kind::W,
        ResolveResult::Bound(Namespace(uri)) if *uri == MC_NAMESPACE => Kind::Mc,
        _ => Kind::Other,
    }
}

#[derive(Default)]
struct Walker {
    lines: Vec<String>,
    /// Open paragraphs, innermost last (a text box inside a paragraph holds paragraphs of its own).
    paragraphs: Vec<String>,
    /// Depth of open runs (`w:r`); tabs and breaks count only inside one (a `w:tab` in a
    /// paragraph's properties is a tab stop, not a tab).
    runs: usize,
    /// Depth of open `w:t` elements.
    texts: usize,
    /// Depth inside content that is not shown: deleted or moved-away text, and the
    /// `mc:Fallback` copy of content that `mc:Choice` already holds.
    skipped: usize,
    /// Whether a `w:document` element was seen.
    is_document: bool,
}

impl Walker {
    fn start(&mut self, kind: Kind, name: &str, empty: bool) {
        if self.skipped > 0 {
            if !empty {
                self.skipped += 1;
            }
            return;
        }
        match (kind, name) {
            (Kind::W, "del" | "moveFrom") | (Kind::Mc, "Fallback") if !empty => self.skipped = 1,
            (Kind::W, "document") => self.is_document = true,
            (Kind::W, "p") => {
                if empty {
                    self.lines.push(String::new());
                } else {
                    self.paragraphs.push(String::new());
                }
            }
            (Kind::W, "r") if !empty => self.runs += 1,
            (Kind::W, "t") if !empty => self.texts += 1,
            (Kind::W, "tab" | "ptab") if self.runs > 0 => self.push('\t'),
            (Kind::W, "br" | "cr") if self.runs > 0 => self.push('\n'),
            (Kind::W, "noBreakHyphen") if self.runs > 0 => self.push('-'),
            _ => {}
        }
    }

    fn end(&mut self, kind: Kind, name: &str) {
        if self.skipped > 0 {
            self.skipped -= 1;
            return;
        }
        match (kind, name) {
            (Kind::W, "p") => {
                let line = self.paragraphs.pop().unwrap_or_default();
                self.lines.push(line);
            }
            (Kind::W, "r") => self.runs = self.runs.saturating_sub(1),
            (Kind::W, "t") => self.texts = self.texts.saturating_sub(1),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if self.skipped == 0
            && self.texts > 0
            && let Some(paragraph) = self.paragraphs.last_mut()
        {
            paragraph.push_str(text);
        }
    }

    fn push(&mut self, c: char) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            paragraph.push(c);
        }
    }

    fn finish(mut self) -> String {
        // Paragraphs left open by a truncated document still count.
        while let Some(line) = self.paragraphs.pop() {
            self.lines.push(line);
        }
        while self.lines.last().is_some_and(|line| line.trim().is_empty()) {
            self.lines.pop();
        }
        self.lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name)).as_slice()
        };
    }

    const INTERVIEW: &str = "Interview with Anna, product manager\n\
        Date:\t12 March 2025\n\
        Interviewer: Thanks for taking the time. How do you plan a release today?\n\
        Anna: Mostly in spreadsheets. We export tickets every Friday and then argue about priorities.\n\
        Interviewer: What is the hardest part?\n\
        Anna: Keeping everyone on the same page.\n\
        Honestly, it’s the meetings — “alignment” takes hours & nobody <likes> it.\n\
        \n\
        Tool\nUsed for\nJira\nTickets\nExcel\nRelease plan\nCapacity per team\n\
        Interviewer: Thank you, Anna.";

    fn invalid(result: Result<String, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    /// A .docx with the given parts, stored uncompressed.
    fn docx(parts: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for (name, data) in parts {
            writer.start_file(*name, options).unwrap();
            writer.write_all(data).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn body(inner: &str) -> Vec<u8> {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>{inner}</w:body></w:document>"#
        )
        .into_bytes()
    }

    fn text_of(inner: &str) -> Result<String, IngestError> {
        extract_text(&docx(&[("word/document.xml", &body(inner))]))
    }

    #[test]
    fn python_docx_interview_with_table_tab_and_line_break() {
        assert_eq!(
            extract_text(fixture!("docx_interview_python_docx.docx")).unwrap(),
            INTERVIEW
        );
    }

    #[test]
    fn the_same_interview_saved_by_libreoffice() {
        assert_eq!(
            extract_text(fixture!("docx_interview_libreoffice.docx")).unwrap(),
            INTERVIEW
        );
    }

    #[test]
    fn tracked_changes_hyperlink_tab_stops_and_fields() {
        assert_eq!(
            extract_text(fixture!("docx_tracked_changes.docx")).unwrap(),
            "Anna: We switched to Linear last year.\nNotes are on the team wiki.\nName\tRole\nPage 1"
        );
    }

    #[test]
    fn teams_transcript_keeps_one_line_per_paragraph() {
        assert_eq!(
            extract_text(fixture!("docx_teams_transcript.docx")).unwrap(),
            "0:0:0.0 --> 0:0:5.0\nAnna Schmidt\nHi everyone, can you hear me?\n\n\
             0:0:5.0 --> 0:0:9.480\nBen Okafor\nYes, loud and clear.\n\n\
             0:0:9.480 --> 0:0:15.120\nAnna Schmidt\nGreat. Let's talk about onboarding."
        );
    }

    #[test]
    fn legacy_doc_is_unsupported() {
        let Err(IngestError::Unsupported(message)) = extract_text(fixture!("docx_legacy.doc")) else {
            panic!("expected Unsupported");
        };
        assert!(message.contains("save it as .docx"), "{message}");
    }

    #[test]
    fn password_protected_docx() {
        let message = invalid(extract_text(fixture!("docx_password_protected.docx")));
        assert!(message.contains("password-protected"), "{message}");
    }

    #[test]
    fn zip_bomb_is_refused_by_its_declared_size() {
        let message = invalid(extract_text(fixture!("docx_bomb.docx")));
        assert!(message.contains("more than 50 MB"), "{message}");
    }

    #[test]
    fn zip_bomb_that_lies_about_its_size_is_refused() {
        let message = invalid(extract_text(fixture!("docx_bomb_lying_size.docx")));
        assert!(message.contains("word/document.xml"), "{message}");
    }

    #[test]
    fn inflating_stops_at_the_cap_whatever_the_headers_say() {
        let data = vec![b'a'; 4096];
        let file = docx(&[("word/document.xml", &data)]);
        let mut archive = zip::ZipArchive::new(Cursor::new(file.as_slice())).unwrap();
        let message = match read_part(&mut archive, "word/document.xml", 1000) {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        };
        assert!(message.contains("too large"), "{message}");
        assert_eq!(
            read_part(&mut archive, "word/document.xml", 4096)
                .unwrap()
                .map(|d| d.len()),
            Some(4096)
        );
        assert_eq!(read_part(&mut archive, "missing.xml", 4096).unwrap(), None);
    }

    #[test]
    fn empty_garbage_and_other_formats() {
        assert!(invalid(extract_text(b"")).contains("empty"));
        assert!(invalid(extract_text(b"Hello, this is plain text.")).contains("not a ZIP archive"));
        assert!(invalid(extract_text(b"%PDF-1.7\n")).contains("not a ZIP archive"));
        assert!(invalid(extract_text(&[0u8; 300])).contains("not a ZIP archive"));
        let rtf = extract_text(b"{\\rtf1\\ansi Hello}");
        assert!(matches!(rtf, Err(IngestError::Unsupported(message)) if message.contains("RTF")));
        // The OLE signature without an encrypted package: some older Office file.
        let mut ole = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
        ole.extend_from_slice(&[0u8; 600]);
        assert!(matches!(extract_text(&ole), Err(IngestError::Unsupported(_))));
    }

    #[test]
    fn truncated_docx() {
        let whole = fixture!("docx_interview_python_docx.docx");
        for cut in [4, 30, whole.len() / 2, whole.len() - 30] {
            let message = invalid(extract_text(&whole[..cut]));
            assert!(
                message.starts_with("The file is not a readable Word document (.docx)"),
                "{cut}: {message}"
            );
        }
    }

    #[test]
    fn corrupt_deflate_data_is_invalid() {
        let mut bytes = fixture!("docx_interview_python_docx.docx").to_vec();
        // Scribble over the compressed data of word/document.xml, after its local header.
        let name = bytes.windows(17).position(|w| w == b"word/document.xml").unwrap();
        for byte in &mut bytes[name + 60..name + 400] {
            *byte = 0x55;
        }
        let message = invalid(extract_text(&bytes));
        assert!(message.contains("is damaged and cannot be unpacked"), "{message}");
    }

    #[test]
    fn zip_without_a_document_part() {
        let xlsx = docx(&[
            (
                "_rels/.rels",
                br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
            ),
            ("xl/workbook.xml", b"<workbook/>"),
        ]);
        assert!(invalid(extract_text(&xlsx)).contains("not another Office file"));
        assert!(invalid(extract_text(&docx(&[]))).contains("no word/document.xml"));
    }

    #[test]
    fn main_part_follows_the_package_relationship() {
        let file = docx(&[
            (
                "_rels/.rels",
                br#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/word/document2.xml"/></Relationships>"#,
            ),
            ("word/document2.xml", &body("<w:p><w:r><w:t>From document2</w:t></w:r></w:p>")),
        ]);
        assert_eq!(extract_text(&file).unwrap(), "From document2");
    }

    #[test]
    fn deleted_moved_and_fallback_content_is_left_out() {
        let text = text_of(
            r#"<w:p><w:r><w:t>Kept</w:t></w:r><w:del><w:r><w:delText>gone</w:delText><w:t>also gone</w:t></w:r></w:del><w:moveFrom><w:r><w:t> moved away</w:t></w:r></w:moveFrom><w:moveTo><w:r><w:t> moved here</w:t></w:r></w:moveTo></w:p><w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>In a text box</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>In a text box</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>After the box</w:t></w:r></w:p>"#,
        );
        assert_eq!(text.unwrap(), "Kept moved here\nIn a text box\nAfter the box");
    }

    #[test]
    fn breaks_tabs_hyphens_entities_and_empty_paragraphs() {
        let text = text_of(
            "<w:p/><w:p><w:r><w:t>a</w:t><w:br/><w:t>b</w:t><w:cr/><w:t>c</w:t><w:tab/><w:t>d</w:t><w:ptab w:relativeTo='margin' w:alignment='right' w:leader='none'/><w:t>d2</w:t><w:noBreakHyphen/><w:t>e &amp; &#x263A; &#65; &lt;&gt;&quot;&apos;</w:t></w:r></w:p><w:p></w:p><w:p><w:r><w:t><![CDATA[<raw>]]></w:t></w:r></w:p><w:p/><w:p/>",
        );
        assert_eq!(text.unwrap(), "\na\nb\nc\td\td2-e & ☺ A <>\"'\n\n<raw>");
    }

    #[test]
    fn any_prefix_for_the_wordprocessing_namespace_and_strict_ooxml() {
        let xml = br#"<x:document xmlns:x="http://purl.oclc.org/ooxml/wordprocessingml/main"><x:body><x:p><x:r><x:t>Strict</x:t></x:r></x:p><w:p xmlns:w="urn:not-word"><w:r><w:t>Not Word</w:t></w:r></w:p></x:body></x:document>"#;
        assert_eq!(extract_text(&docx(&[("word/document.xml", xml)])).unwrap(), "Strict");
    }

    #[test]
    fn utf16_document_xml() {
        let xml = String::from_utf8(body("<w:p><w:r><w:t>Grüße</w:t></w:r></w:p>")).unwrap();
        let mut le = vec![0xFF, 0xFE];
        le.extend(xml.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(extract_text(&docx(&[("word/document.xml", &le)])).unwrap(), "Grüße");
        let mut be = vec![0xFE, 0xFF];
        be.extend(xml.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(extract_text(&docx(&[("word/document.xml", &be)])).unwrap(), "Grüße");
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend(xml.as_bytes());
        assert_eq!(extract_text(&docx(&[("word/document.xml", &bom)])).unwrap(), "Grüße");
    }

    #[test]
    fn broken_xml_and_no_text() {
        let message = invalid(text_of("<w:p><w:r><w:t>unclosed</w:r></w:p>"));
        assert!(message.contains("not well-formed XML"), "{message}");
        let message = invalid(extract_text(&docx(&[("word/document.xml", b"\xFF\xFE\x00\xD8")])));
        assert!(message.contains("not valid UTF-8 or UTF-16"), "{message}");
        let message = invalid(extract_text(&docx(&[(
            "word/document.xml",
            b"not xml at all \xC3\x28",
        )])));
        assert!(message.contains("UTF-8"), "{message}");
        assert_eq!(
            invalid(text_of("<w:p/><w:p><w:r><w:t>  </w:t></w:r></w:p>")),
            "The Word document contains no text."
        );
        let message = invalid(extract_text(&docx(&[("word/document.xml", b"")])));
        assert!(message.contains("no Word document body"), "{message}");
    }

    #[test]
    fn truncated_xml_keeps_what_it_has() {
        // An XML document cut short (the ZIP itself intact).
        let xml = body("<w:p><w:r><w:t>First</w:t></w:r></w:p><w:p><w:r><w:t>Sec");
        let cut = &xml[..xml.len() - "</w:body></w:document>".len()];
        let result = extract_text(&docx(&[("word/document.xml", cut)]));
        assert_eq!(result.unwrap(), "First\nSec");
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let original = fixture!("docx_tracked_changes.docx");
        for round in 0..200 {
            let mut bytes = original.to_vec();
            for _ in 0..(1 + round % 20) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = usize::try_from(seed % bytes.len() as u64).unwrap();
                bytes[at] = (seed >> 32) as u8;
            }
            let _ = extract_text(&bytes);
        }
    }
}
