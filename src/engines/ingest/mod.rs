//! Turning interview material into utterances: one parser per format, all producing a
//! [`Transcript`]. Parsers are pure functions over bytes: no I/O, no database, so they
//! can be tested on fixture files and fuzzed.

use std::fmt;

// A parser's turn is the domain's: the record's rules turn it into utterances.
pub use crate::domain::record::ParsedUtterance;

/// What a parser produces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    pub utterances: Vec<ParsedUtterance>,
    /// A language the source declares (e.g. `Language: de` in a VTT header, a JSON
    /// export's `language_code`), as a BCP 47 tag.
    pub language: Option<String>,
}

/// Why a file could not be read. The message is shown to the user as it is: a whole
/// sentence saying what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngestError {
    /// Not a format we read (HTTP 415).
    Unsupported(String),
    /// A format we read, but this file is broken, empty, encrypted or has no text (HTTP 422).
    Invalid(String),
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported(message) | Self::Invalid(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for IngestError {}

pub mod docx;
pub mod json;
pub mod pdf;
pub mod srt;
pub mod stt;
pub mod text;
mod timecode;
pub mod vtt;

/// What an upload is, recognised from its content first and its name and declared type
/// second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Vtt,
    Srt,
    Docx,
    Pdf,
    Json,
    /// Audio or video: goes to the speech-to-text provider.
    Media,
}

impl Format {
    /// The name records show in `source_format`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Markdown => "markdown",
            Self::Vtt => "vtt",
            Self::Srt => "srt",
            Self::Docx => "docx",
            Self::Pdf => "pdf",
            Self::Json => "json",
            Self::Media => "audio",
        }
    }
}

/// The formats named in errors.
pub const ACCEPTED: &str = "plain text or Markdown (Speaker: text lines), WebVTT, SRT, DOCX, PDF, a JSON transcript \
     export (AssemblyAI, Deepgram or Insight utterances), or an audio or video recording";

/// Recognises the format of an upload from its first bytes (`head`, at least the first
/// few kilobytes when there are that many), its file name and its declared content type.
pub fn detect(head: &[u8], name: Option<&str>, content_type: Option<&str>) -> Result<Format, IngestError> {
    let extension = name
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .unwrap_or_default();
    let content_type = content_type.unwrap_or_default().to_ascii_lowercase();
    if head.is_empty() {
        return Err(IngestError::Invalid("The file is empty.".to_owned()));
    }
    if head.starts_with(b"%PDF-") {
        return Ok(Format::Pdf);
    }
    // ZIP (DOCX) and OLE compound files (legacy .doc, or a password-protected DOCX):
    // the DOCX reader tells them apart and explains.
    if head.starts_with(b"PK\x03\x04") || head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Ok(Format::Docx);
    }
    // A byte order mark means text (UTF-16's `FF FE` would otherwise pass for an MPEG frame).
    let text_bom =
        head.starts_with(&[0xEF, 0xBB, 0xBF]) || head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
    if !text_bom && is_media(head) {
        return Ok(Format::Media);
    }
    if let Some(kind) = image_kind(head) {
        return Err(IngestError::Unsupported(format!(
            "The file is a {kind} image; Insight reads {ACCEPTED}. For a scanned page, run OCR first."
        )));
    }
    if content_type.starts_with("audio/") || content_type.starts_with("video/") {
        return Ok(Format::Media);
    }
    let Ok(text) = text::decode(head_text(head)) else {
        return Err(IngestError::Unsupported(format!(
            "The file is neither text nor a document or recording Insight recognises; it reads {ACCEPTED}."
        )));
    };
    let start = text.trim_start();
    if start.starts_with("WEBVTT") {
        return Ok(Format::Vtt);
    }
    if start.starts_with('{') || (start.starts_with('[') && extension == "json") || content_type.contains("json") {
        return Ok(Format::Json);
    }
    if looks_like_srt(start) {
        return Ok(Format::Srt);
    }
    Ok(match extension.as_str() {
        "md" | "markdown" => Format::Markdown,
        _ if content_type.starts_with("text/markdown") => Format::Markdown,
        _ => Format::Text,
    })
}

/// Reads a text or document format into a transcript.
pub fn read(format: Format, bytes: &[u8]) -> Result<Transcript, IngestError> {
    match format {
        Format::Text | Format::Markdown => text::parse(bytes),
        Format::Vtt => vtt::parse(bytes),
        Format::Srt => srt::parse(bytes),
        Format::Json => json::parse(bytes),
        Format::Docx => text::parse_str(&docx::extract_text(bytes)?),
        Format::Pdf => text::parse_str(&pdf::extract_text(bytes)?),
        Format::Media => Err(IngestError::Unsupported(
            "Audio and video are transcribed by the speech-to-text provider, not read as text.".to_owned(),
        )),
    }
}

/// The head cut at the last complete UTF-8 character, so a cut through a character does
/// not make text look binary.
fn head_text(head: &[u8]) -> &[u8] {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        // UTF-16: whole code units, and not half of a surrogate pair at the end.
        let mut end = head.len() & !1;
        if end >= 4 {
            let last = head.get(end - 2..end).unwrap_or_default();
            let unit = if head.starts_with(&[0xFF, 0xFE]) {
                u16::from_le_bytes([last[0], last[1]])
            } else {
                u16::from_be_bytes([last[0], last[1]])
            };
            if (0xD800..0xDC00).contains(&unit) {
                end -= 2;
            }
        }
        return head.get(..end).unwrap_or(head);
    }
    match std::str::from_utf8(head) {
        Ok(_) => head,
        Err(error) if error.error_len().is_none() => head.get(..error.valid_up_to()).unwrap_or(head),
        Err(_) => head,
    }
}

/// A file extension for a recording, from its first bytes (speech-to-text providers
/// go by the name).
pub fn media_extension(head: &[u8]) -> &'static str {
    let at = |offset: usize, magic: &[u8]| head.get(offset..offset + magic.len()) == Some(magic);
    if at(0, b"RIFF") && at(8, b"WAVE") {
        "wav"
    } else if at(0, b"OggS") {
        "ogg"
    } else if at(0, b"fLaC") {
        "flac"
    } else if at(4, b"ftypM4A") {
        "m4a"
    } else if at(4, b"ftyp") {
        "mp4"
    } else if at(0, &[0x1A, 0x45, 0xDF, 0xA3]) {
        "webm"
    } else {
        "mp3"
    }
}

/// `media_type` without its parameters when it names sound or video, and nothing else:
/// the only types a recording is kept and served with, so a stored type can never make
/// it a page.
pub fn playable_type(media_type: &str) -> Option<String> {
    let essence = media_type.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, subtype) = essence.split_once('/')?;
    let fits = matches!(kind, "audio" | "video")
        && !subtype.is_empty()
        && subtype.len() <= 64
        && subtype
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b".+-_".contains(&b));
    fits.then_some(essence)
}

/// The media type of a stored recording, by the extension it was stored with.
pub fn media_type_of(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "wav" => "audio/wav",
        "ogg" | "oga" | "opus" => "audio/ogg",
        "flac" => "audio/flac",
        "m4a" => "audio/mp4",
        "mp3" => "audio/mpeg",
        "mp4" | "m4v" => "video/mp4",
        "mov" => "video/quicktime",
        "webm" => "video/webm",
        "avi" => "video/x-msvideo",
        _ => return None,
    })
}

fn is_media(head: &[u8]) -> bool {
    let at = |offset: usize, magic: &[u8]| head.get(offset..offset + magic.len()) == Some(magic);
    at(0, b"ID3")
        || (head.len() > 1 && head[0] == 0xFF && (head[1] & 0xE0) == 0xE0 && head[1] != 0xFF) // MPEG audio frame
        || (at(0, b"RIFF") && (at(8, b"WAVE") || at(8, b"AVI ")))
        || at(0, b"OggS")
        || at(0, b"fLaC")
        || at(4, b"ftyp") // MP4, M4A, MOV, 3GP
        || at(0, &[0x1A, 0x45, 0xDF, 0xA3]) // WebM, Matroska
        || at(0, b"#!AMR")
        || at(0, &[0x30, 0x26, 0xB2, 0x75]) // ASF: WMA, WMV
}

fn image_kind(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG") {
        Some("PNG")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("JPEG")
    } else if head.starts_with(b"GIF8") {
        Some("GIF")
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        Some("WebP")
    } else {
        None
    }
}

/// A first cue: a number line, then a `-->` timing line.
fn looks_like_srt(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or_default();
    let second = lines.next().unwrap_or_default();
    (first.chars().all(|c| c.is_ascii_digit()) && second.contains("-->")) || first.contains("-->")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_from_content_before_names() {
        type Case<'a> = (&'a [u8], Option<&'a str>, Option<&'a str>, Format);
        let cases: [Case; 11] = [
            (b"\xFF\xFEA\0:\0 \0h\0i\0", Some("notes.txt"), None, Format::Text),
            (
                b"WEBVTT\n\n00:01.000 --> 00:02.000\nHi",
                Some("notes.txt"),
                None,
                Format::Vtt,
            ),
            (
                b"1\n00:00:01,000 --> 00:00:02,000\nHi",
                Some("call.txt"),
                None,
                Format::Srt,
            ),
            (b"%PDF-1.7\n", Some("x.docx"), None, Format::Pdf),
            (b"PK\x03\x04rest", None, None, Format::Docx),
            (b"{\"utterances\":[]}", Some("t.txt"), None, Format::Json),
            (b"Anna: hello", Some("t.md"), None, Format::Markdown),
            (b"Anna: hello", None, Some("text/plain"), Format::Text),
            (b"ID3\x04\0\0\0\0\0\0", Some("a.txt"), None, Format::Media),
            (b"\0\0\0\x20ftypisom", None, None, Format::Media),
            (b"RIFF\0\0\0\0WAVEfmt ", None, None, Format::Media),
        ];
        for (head, name, content_type, expected) in cases {
            assert_eq!(detect(head, name, content_type), Ok(expected), "{name:?}");
        }
    }

    #[test]
    fn images_garbage_and_empty_files_are_refused_with_a_sentence() {
        let png = detect(b"\x89PNG\r\n\x1a\n", Some("scan.png"), None);
        assert!(matches!(png, Err(IngestError::Unsupported(ref m)) if m.contains("PNG image")));
        let garbage = detect(&[0x00, 0x9F, 0x92, 0x96, 0x00, 0x01], Some("x.bin"), None);
        assert!(matches!(garbage, Err(IngestError::Unsupported(ref m)) if m.contains("WebVTT")));
        assert_eq!(
            detect(b"", None, None),
            Err(IngestError::Invalid("The file is empty.".to_owned()))
        );
    }
}
