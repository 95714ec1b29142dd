//! Compression bombs. Every stream the libraries would unpack is unpacked here first, with a
//! cap: cross-reference and object streams, which `lopdf` unpacks while loading, from the raw
//! bytes before loading and by a load hook as they are parsed; every other stream after
//! loading, replaced by its unpacked bytes. Image data is dropped.

use std::io::Read;

use pdf_extract::{Dictionary, Document, LoadOptions, Object, ObjectId, Stream};

use crate::engines::ingest::IngestError;

/// The most bytes one stream of the file may unpack to.
pub const MAX_STREAM_BYTES: usize = 50 * 1024 * 1024;
/// The most bytes all streams but images together may unpack to.
pub const MAX_TOTAL_STREAM_BYTES: usize = 256 * 1024 * 1024;

/// The options to load a document with: [`check_object_stream`] as the load hook, with this
/// thread's count of unpacked object-stream bytes started afresh.
pub(super) fn load_options() -> LoadOptions {
    OBJECT_STREAM_BYTES.with(|total| total.set(0));
    LoadOptions {
        filter: Some(check_object_stream),
        ..LoadOptions::default()
    }
}

/// Whether the load hook emptied an object stream that unpacks to too much.
pub(super) fn has_marked_stream(doc: &Document) -> bool {
    doc.objects
        .values()
        .any(|object| matches!(object, Object::Stream(stream) if stream.dict.has(TOO_LARGE_MARK.as_bytes())))
}

pub(super) fn too_large_stream() -> IngestError {
    IngestError::Invalid(format!(
        "The PDF is too large to read: part of it unpacks to more than {} MB. Split it into smaller files and upload those.",
        MAX_STREAM_BYTES / (1024 * 1024)
    ))
}

fn too_large_total() -> IngestError {
    IngestError::Invalid(format!(
        "The PDF is too large to read: it unpacks to more than {} MB besides its images. Split it into smaller files and upload those.",
        MAX_TOTAL_STREAM_BYTES / (1024 * 1024)
    ))
}

pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// `lopdf` unpacks cross-reference streams while reading the file's structure, before any
/// check on parsed objects can run: find them in the raw bytes (by their `/XRef` type, also
/// `/ObjStm`) and make sure they unpack to at most [`MAX_STREAM_BYTES`] each and
/// [`MAX_TOTAL_STREAM_BYTES`] together. Object streams are also checked as they are parsed
/// (see [`check_object_stream`]).
pub(super) fn check_load_time_streams(bytes: &[u8]) -> Result<(), IngestError> {
    /// How far before the type the stream's `/Filter` is looked for.
    const DICT_BEFORE: usize = 64 * 1024;
    let mut types = [Finder::new(b"/XRef"), Finder::new(b"/ObjStm")];
    let mut keywords = Finder::new(b"stream");
    let mut last_keyword = None;
    let mut total = 0usize;
    let mut from = 0;
    while let Some(at) = types
        .iter_mut()
        .filter_map(|finder| finder.next_at_or_after(bytes, from))
        .min()
    {
        from = at + 1;
        // The stream this dictionary belongs to: the next `stream` keyword (not `endstream`).
        let Some(keyword) = keywords.next_at_or_after(bytes, at) else {
            break;
        };
        if last_keyword == Some(keyword) || (keyword >= 3 && bytes.get(keyword - 3..keyword) == Some(b"end")) {
            continue;
        }
        last_keyword = Some(keyword);
        let after = keyword + b"stream".len();
        let data_start = match bytes.get(after..after + 2) {
            Some([b'\r', b'\n']) => after + 2,
            Some([b'\n' | b'\r', _]) => after + 1,
            _ => continue,
        };
        let dict = bytes.get(at.saturating_sub(DICT_BEFORE)..keyword).unwrap_or_default();
        let filters = dict
            .windows(7)
            .rposition(|w| w == b"/Filter")
            .map(|f| raw_filters(dict.get(f + 7..).unwrap_or_default()))
            .unwrap_or_default();
        let mut data: Option<Vec<u8>> = None;
        for filter in filters {
            let input = data.as_deref().unwrap_or(bytes.get(data_start..).unwrap_or_default());
            let output = match filter.as_slice() {
                b"FlateDecode" => inflate_bounded(input, MAX_STREAM_BYTES),
                b"LZWDecode" => lzw_bounded(input, find(dict, b"/EarlyChange 0").is_none(), MAX_STREAM_BYTES),
                b"ASCII85Decode" => ascii85(input),
                _ => break,
            };
            if output.len() > MAX_STREAM_BYTES {
                return Err(too_large_stream());
            }
            data = Some(output);
        }
        total = total.saturating_add(data.map_or(0, |data| data.len()));
        if total > MAX_TOTAL_STREAM_BYTES {
            return Err(too_large_total());
        }
    }
    Ok(())
}

/// Finds successive occurrences of a needle, each byte of the haystack searched at most once
/// however often it is asked.
struct Finder {
    needle: &'static [u8],
    /// The last occurrence found, and where the search for it started.
    found: Option<usize>,
    searched_from: usize,
    exhausted: bool,
}

impl Finder {
    fn new(needle: &'static [u8]) -> Self {
        Self {
            needle,
            found: None,
            searched_from: 0,
            exhausted: false,
        }
    }

    /// The first occurrence at or after `from`.
    fn next_at_or_after(&mut self, haystack: &[u8], from: usize) -> Option<usize> {
        if let Some(found) = self.found
            && found >= from
            && self.searched_from <= from
        {
            return Some(found);
        }
        if self.exhausted {
            return None;
        }
        let start = from.max(self.searched_from);
        self.searched_from = start;
        self.found = haystack
            .get(start..)
            .and_then(|rest| find(rest, self.needle))
            .map(|at| start + at);
        if self.found.is_none() {
            self.exhausted = true;
        }
        self.found
    }
}

/// The filter names after a `/Filter` key in raw PDF syntax: `/Name` or `[/A /B]`.
fn raw_filters(rest: &[u8]) -> Vec<Vec<u8>> {
    let rest = rest.trim_ascii_start();
    let (list, single) = match rest.first() {
        Some(b'[') => (rest.get(1..).unwrap_or_default(), false),
        Some(b'/') => (rest, true),
        _ => return Vec::new(),
    };
    let mut names = Vec::new();
    let mut cursor = list;
    loop {
        cursor = cursor.trim_ascii_start();
        let Some(name) = cursor.strip_prefix(b"/") else { break };
        let len = name
            .iter()
            .position(|b| b.is_ascii_whitespace() || b"/[]<>()".contains(b))
            .unwrap_or(name.len());
        names.push(name.get(..len).unwrap_or_default().to_vec());
        cursor = name.get(len..).unwrap_or_default();
        if single || names.len() >= 8 {
            break;
        }
    }
    names
}

/// ASCII85-decodes with `lopdf` (at most 4 bytes out per byte in).
fn ascii85(input: &[u8]) -> Vec<u8> {
    let mut single = Stream::new(Dictionary::new(), input.to_vec());
    single.dict.set("Filter", Object::Name(b"ASCII85Decode".to_vec()));
    single.decompressed_content().unwrap_or_default()
}

/// Load-time hook ([`pdf_extract::LoadOptions::filter`]): `lopdf` unpacks object streams as
/// it parses them, right after this; one that would unpack to more than [`MAX_STREAM_BYTES`],
/// or past [`MAX_TOTAL_STREAM_BYTES`] with those before it, is emptied and marked, and the
/// document refused after loading. (`lopdf` calls the hook on the loading thread: its `rayon`
/// feature is off.)
fn check_object_stream(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    if let Object::Stream(stream) = object {
        if stream.dict.has_type(b"ObjStm") {
            let size = decode_stream(stream).map(|data| data.map_or(stream.content.len(), |data| data.len()));
            let total = OBJECT_STREAM_BYTES.with(|total| {
                let sum = total
                    .get()
                    .saturating_add(size.as_ref().map_or(usize::MAX, |size| *size));
                total.set(sum);
                sum
            });
            if size.is_err() || total > MAX_TOTAL_STREAM_BYTES {
                stream.dict.remove(b"Filter");
                stream.set_content(Vec::new());
                stream.dict.set(TOO_LARGE_MARK, true);
            }
        }
        // The returned object is only used for objects inside object streams, never streams.
        return Some((id, Object::Null));
    }
    Some((id, object.clone()))
}

thread_local! {
    /// What the object streams of the document being loaded on this thread unpack to.
    static OBJECT_STREAM_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

const TOO_LARGE_MARK: &str = "InsightTooLarge";

/// Inflates a zlib stream to at most `cap + 1` bytes, keeping what came out before an error, and
/// falls back to raw deflate when nothing came out, as `lopdf` does.
fn inflate_bounded(input: &[u8], cap: usize) -> Vec<u8> {
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut output = read_bounded(flate2::read::ZlibDecoder::new(input).take(limit));
    if output.is_empty() && input.len() > 2 {
        output = read_bounded(flate2::read::DeflateDecoder::new(input.get(2..).unwrap_or_default()).take(limit));
    }
    output
}

/// Everything a reader gives until its end or its first error.
fn read_bounded(mut reader: impl Read) -> Vec<u8> {
    let mut output = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => return output,
            Ok(n) => output.extend_from_slice(buffer.get(..n).unwrap_or_default()),
        }
    }
}

/// LZW-decodes to at most `cap + 1` bytes, with the settings `lopdf` uses.
fn lzw_bounded(input: &[u8], early_change: bool, cap: usize) -> Vec<u8> {
    use weezl::{BitOrder, LzwStatus, decode::Decoder};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut output = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    let mut rest = input;
    while output.len() <= cap {
        let result = decoder.decode_bytes(rest, &mut buffer);
        output.extend_from_slice(buffer.get(..result.consumed_out).unwrap_or_default());
        rest = rest.get(result.consumed_in..).unwrap_or_default();
        match result.status {
            Ok(LzwStatus::Ok) => {}
            Ok(LzwStatus::Done | LzwStatus::NoProgress) | Err(_) => break,
        }
    }
    output
}

pub(super) fn is_image(stream: &Stream) -> bool {
    matches!(stream.dict.get(b"Subtype").and_then(Object::as_name), Ok(b"Image"))
}

/// Unpacks every stream with a cap, replacing its content by the unpacked bytes so that the
/// libraries never unpack it themselves, and drops image data.
pub(super) fn unpack_streams(doc: &mut Document) -> Result<(), IngestError> {
    let mut total = 0usize;
    for object in doc.objects.values_mut() {
        let Object::Stream(stream) = object else { continue };
        if is_image(stream) {
            stream.dict.remove(b"Filter");
            stream.dict.remove(b"DecodeParms");
            stream.set_content(Vec::new());
            continue;
        }
        let Some(decoded) = decode_stream(stream)? else {
            // A filter `lopdf` does not implement either: it reads the raw bytes.
            total = total.saturating_add(stream.content.len());
            continue;
        };
        total = total.saturating_add(decoded.len());
        if total > MAX_TOTAL_STREAM_BYTES {
            return Err(too_large_total());
        }
        if has_predictor(stream) {
            // Checked, but left for `lopdf` to undo the predictor (which does not grow the data).
            continue;
        }
        stream.dict.remove(b"Filter");
        stream.dict.remove(b"DecodeParms");
        stream.set_content(decoded);
    }
    Ok(())
}

fn has_predictor(stream: &Stream) -> bool {
    stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|params| params.get(b"Predictor"))
        .and_then(Object::as_i64)
        .is_ok_and(|predictor| predictor > 1)
}

/// The stream unpacked through its filters, or `None` when it has no filter or one that `lopdf`
/// does not unpack (DCT, CCITT, JBIG2, ...).
fn decode_stream(stream: &Stream) -> Result<Option<Vec<u8>>, IngestError> {
    let Ok(filters) = stream.filters() else { return Ok(None) };
    if filters.is_empty() {
        return Ok(None);
    }
    let early_change = stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|params| params.get(b"EarlyChange"))
        .and_then(Object::as_i64)
        .map_or(true, |value| value != 0);
    let mut data: Option<Vec<u8>> = None;
    for filter in filters {
        let input = data.as_deref().unwrap_or(&stream.content);
        let output = match filter {
            b"FlateDecode" => inflate_bounded(input, MAX_STREAM_BYTES),
            b"LZWDecode" => lzw_bounded(input, early_change, MAX_STREAM_BYTES),
            // At most 4 bytes out per byte in; `lopdf` decodes it.
            b"ASCII85Decode" => ascii85(input),
            _ => return Ok(None),
        };
        if output.len() > MAX_STREAM_BYTES {
            return Err(too_large_stream());
        }
        data = Some(output);
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ingest::pdf::extract_text;
    use crate::engines::ingest::pdf::tests::{deflate, invalid, one_page, stream, text_op};

    #[test]
    fn bombs_are_refused() {
        for bomb in [
            fixture!("pdf_bomb_content_stream.pdf"),
            fixture!("pdf_bomb_object_stream.pdf"),
            // Found by the load hook, not by the byte search.
            fixture!("pdf_bomb_object_stream_escaped.pdf"),
        ] {
            let message = invalid(extract_text(bomb));
            assert!(message.contains("more than 50 MB"), "{message}");
        }
        assert!(check_load_time_streams(fixture!("pdf_bomb_object_stream.pdf")).is_err());
        assert!(check_load_time_streams(fixture!("pdf_bomb_object_stream_escaped.pdf")).is_ok());
    }

    #[test]
    fn finder_finds_each_occurrence_in_order() {
        let haystack = b"..ab..ab.ab";
        let mut finder = Finder::new(b"ab");
        assert_eq!(finder.next_at_or_after(haystack, 0), Some(2));
        assert_eq!(finder.next_at_or_after(haystack, 1), Some(2));
        assert_eq!(finder.next_at_or_after(haystack, 3), Some(6));
        assert_eq!(finder.next_at_or_after(haystack, 7), Some(9));
        assert_eq!(finder.next_at_or_after(haystack, 10), None);
        assert_eq!(finder.next_at_or_after(haystack, 11), None);
    }

    #[test]
    fn compressed_and_encoded_content_streams() {
        let content = text_op("Flate and ASCII85", 700);
        let a85 = {
            let mut out = String::new();
            for chunk in deflate(content.as_bytes()).chunks(4) {
                let mut word = [0u8; 4];
                word[..chunk.len()].copy_from_slice(chunk);
                let mut value = u32::from_be_bytes(word);
                let mut digits = [0u8; 5];
                for digit in digits.iter_mut().rev() {
                    *digit = (value % 85) as u8 + b'!';
                    value /= 85;
                }
                out.push_str(std::str::from_utf8(&digits[..chunk.len() + 1]).unwrap());
            }
            out.push_str("~>");
            out
        };
        let pdf = one_page(
            stream("/Filter [/ASCII85Decode /FlateDecode]", a85.as_bytes()),
            "",
            vec![],
        );
        assert_eq!(extract_text(&pdf).unwrap(), "Flate and ASCII85");

        let content = text_op("LZW", 700);
        let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let lzw = encoder.encode(content.as_bytes()).unwrap();
        let pdf = one_page(stream("/Filter /LZWDecode", &lzw), "", vec![]);
        assert_eq!(extract_text(&pdf).unwrap(), "LZW");
    }

    #[test]
    fn images_drawn_on_a_page_are_skipped() {
        let pixels = deflate(&[0x80; 64 * 64]);
        let image = stream(
            "/Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
            &pixels,
        );
        let content = format!("q 64 0 0 64 72 600 cm /Im1 Do Q\n{}", text_op("Caption", 580));
        let pdf = one_page(stream("", content.as_bytes()), "/Im1 6 0 R", vec![(6, image)]);
        assert_eq!(extract_text(&pdf).unwrap(), "Caption");
    }

    #[test]
    fn raw_filter_names() {
        assert_eq!(raw_filters(b" /FlateDecode /Length 5"), vec![b"FlateDecode".to_vec()]);
        assert_eq!(
            raw_filters(b"[/ASCII85Decode/FlateDecode] >>"),
            vec![b"ASCII85Decode".to_vec(), b"FlateDecode".to_vec()]
        );
        assert!(raw_filters(b" 5 0 R").is_empty());
        assert!(raw_filters(b"").is_empty());
    }

    #[test]
    fn bounded_decoders_stop_at_the_cap() {
        let zeros = deflate(&vec![0u8; 100_000]);
        assert_eq!(inflate_bounded(&zeros, 1000).len(), 1001);
        assert_eq!(inflate_bounded(&zeros, 200_000).len(), 100_000);
        assert!(inflate_bounded(b"not deflate", 1000).is_empty());
        let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let lzw = encoder.encode(&vec![7u8; 100_000]).unwrap();
        assert!(lzw_bounded(&lzw, true, 1000).len() <= 1000 + 16 * 1024);
        assert_eq!(lzw_bounded(&lzw, true, 200_000).len(), 100_000);
    }
}
