//! The uploaded bytes as text, for every text-based parser (plain text, Markdown, WebVTT,
//! SubRip, JSON).

use std::borrow::Cow;

use crate::engines::ingest::IngestError;

/// The uploaded bytes as text: UTF-8 (a byte order mark is dropped), or UTF-16 with a byte order
/// mark (or without one, when the zero bytes of ASCII text show the byte order). Line ends
/// become `\n`.
pub fn decode(bytes: &[u8]) -> Result<String, IngestError> {
    let text = if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        utf8(rest)?
    } else if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) || bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Err(IngestError::Invalid(
            "The file is UTF-32 text, which is not supported: save it as UTF-8 and upload it again.".into(),
        ));
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        utf16(rest, false)?
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        utf16(rest, true)?
    } else if let Some(text) = sniff_utf16(bytes).and_then(|big_endian| utf16(bytes, big_endian).ok())
        && !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{b}' | '\u{c}'))
    {
        text
    } else {
        utf8(bytes)?
    };
    if text.contains('\0') {
        return Err(IngestError::Invalid(
            "The file looks like a binary file, not text: expected a transcript saved as UTF-8 text.".into(),
        ));
    }
    Ok(normalize_line_ends(&text).into_owned())
}

fn utf8(bytes: &[u8]) -> Result<String, IngestError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(error) => {
            let before = bytes.get(..error.valid_up_to()).unwrap_or_default();
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            Err(IngestError::Invalid(format!(
                "The file is not UTF-8 text (line {line} holds bytes of another encoding): save it as \
                 UTF-8 and upload it again."
            )))
        }
    }
}

fn utf16(bytes: &[u8], big_endian: bool) -> Result<String, IngestError> {
    let invalid = || {
        IngestError::Invalid(
            "The file is not valid UTF-16 text: it is cut off or holds broken characters. Save it as \
             UTF-8 and upload it again."
                .into(),
        )
    };
    let pairs = bytes.chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return Err(invalid());
    }
    let units = pairs.map(|pair| match pair {
        [a, b] if big_endian => u16::from_be_bytes([*a, *b]),
        [a, b] => u16::from_le_bytes([*a, *b]),
        _ => 0xFFFF,
    });
    let mut text = String::with_capacity(bytes.len() / 2);
    for unit in char::decode_utf16(units) {
        text.push(unit.map_err(|_| invalid())?);
    }
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        return Ok(rest.to_owned());
    }
    Ok(text)
}

/// UTF-16 without a byte order mark: most characters of a transcript are ASCII, whose other byte
/// is zero. Looks at the first 4 KiB; `Some(true)` for big endian. The caller still checks that
/// the decoded text has no control characters, so that binary data is not taken for text.
fn sniff_utf16(bytes: &[u8]) -> Option<bool> {
    let sample = bytes.get(..4096).unwrap_or(bytes);
    let pairs = sample.len() / 2;
    if pairs < 4 || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let (mut even_zeros, mut odd_zeros) = (0, 0);
    for pair in sample.chunks_exact(2) {
        if let [a, b] = pair {
            even_zeros += usize::from(*a == 0);
            odd_zeros += usize::from(*b == 0);
        }
    }
    let many = |zeros: usize| zeros * 10 >= pairs * 6;
    let few = |zeros: usize| zeros * 10 <= pairs;
    if many(odd_zeros) && few(even_zeros) {
        Some(false)
    } else if many(even_zeros) && few(odd_zeros) {
        Some(true)
    } else {
        None
    }
}

/// `\r\n` and lone `\r` become `\n`.
pub(super) fn normalize_line_ends(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            out.push('\n');
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ingest::text::tests::invalid_message;

    #[test]
    fn decodes_encodings_and_line_ends() {
        assert_eq!(
            decode(b"\xEF\xBB\xBFAnna: Hi\r\nBen: Ho\rX"),
            Ok("Anna: Hi\nBen: Ho\nX".to_owned())
        );
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Zoë\r\n€".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16le), Ok("Zoë\n€".to_owned()));
        let utf16be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("Zoë 𝄞".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode(&utf16be), Ok("Zoë 𝄞".to_owned()));
        let no_bom: Vec<u8> = "Anna: Hallo, wie geht's?"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode(&no_bom), Ok("Anna: Hallo, wie geht's?".to_owned()));
        let no_bom_be: Vec<u8> = "Anna: Hallo, wie geht's?"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        assert_eq!(decode(&no_bom_be), Ok("Anna: Hallo, wie geht's?".to_owned()));
        assert_eq!(decode(b""), Ok(String::new()));
    }

    #[test]
    fn refuses_what_is_not_text() {
        let latin1 = invalid_message(decode(b"Anna: Hi\nBen: Gr\xFC\xDFe"));
        assert!(
            latin1.starts_with("The file is not UTF-8 text") && latin1.contains("line 2"),
            "{latin1}"
        );
        let zip = invalid_message(decode(b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xb1"));
        assert!(zip.starts_with("The file"), "{zip}");
        let odd = invalid_message(decode(&[0xFF, 0xFE, 0x41, 0x00, 0x42]));
        assert!(odd.contains("UTF-16"), "{odd}");
        let lone_surrogate = invalid_message(decode(&[0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00]));
        assert!(lone_surrogate.contains("UTF-16"), "{lone_surrogate}");
        let utf32 = invalid_message(decode(&[0xFF, 0xFE, 0, 0, 0x41, 0, 0, 0]));
        assert!(utf32.contains("UTF-32"), "{utf32}");
        let garbage = invalid_message(decode(&[0x00, 0x9F, 0x92, 0x96, 0x00, 0x01]));
        assert!(garbage.starts_with("The file is not UTF-8 text"), "{garbage}");
        let garbage = invalid_message(decode(&[0x01, 0x00, 0x02, 0x00, 0x41, 0x00, 0x42, 0x00]));
        assert!(garbage.contains("binary"), "{garbage}");
        let nul = invalid_message(decode(b"Anna\0: Hi there, this has a NUL"));
        assert!(nul.contains("binary"), "{nul}");
    }
}
