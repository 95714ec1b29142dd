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
//! still reports the panic.) This needs `panic = "unwind"`, the default. Extraction is CPU-bound
//! (about half a second for 200 pages in a release build): call it from `spawn_blocking`.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::content::Content;
use pdf_extract::{
    Dictionary, Document, LoadOptions, MediaBox, Object, ObjectId, OutputDev, OutputError, Stream, Transform,
};

use super::IngestError;

/// The most bytes one stream of the file may unpack to.
pub const MAX_STREAM_BYTES: usize = 50 * 1024 * 1024;
/// The most bytes all streams but images together may unpack to.
pub const MAX_TOTAL_STREAM_BYTES: usize = 256 * 1024 * 1024;
/// The most bytes of drawing operators interpreted, counting a form XObject each time it is drawn.
const MAX_CONTENT_WORK: usize = 256 * 1024 * 1024;
/// The most form XObjects drawn in the whole document.
const MAX_FORM_CALLS: usize = 100_000;
/// How deep form XObjects may nest.
const MAX_FORM_DEPTH: usize = 16;
/// How far up the page tree inherited attributes are looked for.
const MAX_PAGE_TREE_DEPTH: usize = 64;
/// Letter, the default when a page has no usable MediaBox.
const DEFAULT_MEDIA_BOX: [f32; 4] = [0.0, 0.0, 612.0, 792.0];

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
    if find(bytes.get(..1024).unwrap_or(bytes), b"%PDF-").is_none() {
        return Err(IngestError::Invalid(
            "The file is not a PDF: it does not start with the %PDF- header. Expected a PDF document with a text layer."
                .to_owned(),
        ));
    }
    check_load_time_streams(bytes)?;
    match catch_unwind(AssertUnwindSafe(|| extract(bytes))) {
        Ok(result) => result,
        Err(_) => Err(IngestError::Invalid(UNREADABLE.to_owned())),
    }
}

fn extract(bytes: &[u8]) -> Result<String, IngestError> {
    OBJECT_STREAM_BYTES.with(|total| total.set(0));
    let options = LoadOptions {
        filter: Some(check_object_stream),
        ..LoadOptions::default()
    };
    let mut doc = Document::load_mem_with_options(bytes, options).map_err(|error| match error {
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
    let marked = doc
        .objects
        .values()
        .any(|object| matches!(object, Object::Stream(stream) if stream.dict.has(TOO_LARGE_MARK.as_bytes())));
    if marked {
        return Err(too_large_stream());
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
    unpack_streams(&mut doc)?;
    flatten_page_attributes(&mut doc, &pages);
    check_drawing_work(&doc, &drawn)?;

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

fn too_large_stream() -> IngestError {
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

fn too_complex() -> IngestError {
    IngestError::Invalid(
        "The PDF is too complex to read: its pages draw nested or repeated content beyond our limits. Save or print it to a new PDF and upload that."
            .to_owned(),
    )
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
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
fn check_load_time_streams(bytes: &[u8]) -> Result<(), IngestError> {
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

fn is_image(stream: &Stream) -> bool {
    matches!(stream.dict.get(b"Subtype").and_then(Object::as_name), Ok(b"Image"))
}

/// Unpacks every stream with a cap, replacing its content by the unpacked bytes so that the
/// libraries never unpack it themselves, and drops image data.
fn unpack_streams(doc: &mut Document) -> Result<(), IngestError> {
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

/// Copies `Resources` and `MediaBox` from the page tree onto each page, so that `pdf-extract`
/// finds them without walking up `Parent` links (which it would do forever in a cycle), and
/// drops `ArtBox`, which it indexes without checking.
fn flatten_page_attributes(doc: &mut Document, pages: &[ObjectId]) {
    for &page in pages {
        let resources = inherited(doc, page, b"Resources").cloned();
        let media_box = inherited(doc, page, b"MediaBox").and_then(|object| media_box(doc, object));
        let Some(Object::Dictionary(dict)) = doc.objects.get_mut(&page) else {
            continue;
        };
        match resources {
            Some(resources) => dict.set("Resources", resources),
            None => dict.set("Resources", Dictionary::new()),
        }
        let media_box = media_box.unwrap_or(DEFAULT_MEDIA_BOX);
        dict.set(
            "MediaBox",
            media_box.iter().map(|&value| Object::Real(value)).collect::<Vec<_>>(),
        );
        dict.remove(b"ArtBox");
    }
}

/// A page attribute, from the page or the nearest ancestor that has it.
fn inherited<'a>(doc: &'a Document, page: ObjectId, key: &[u8]) -> Option<&'a Object> {
    let mut node = doc.objects.get(&page)?.as_dict().ok()?;
    let mut seen = HashSet::from([page]);
    for _ in 0..MAX_PAGE_TREE_DEPTH {
        if let Ok(value) = node.get(key) {
            return Some(value);
        }
        let parent = node.get(b"Parent").and_then(Object::as_reference).ok()?;
        if !seen.insert(parent) {
            return None;
        }
        node = doc.objects.get(&parent)?.as_dict().ok()?;
    }
    None
}

fn media_box(doc: &Document, object: &Object) -> Option<[f32; 4]> {
    let (_, object) = doc.dereference(object).ok()?;
    let values = object.as_array().ok()?;
    let mut numbers = [0.0f32; 4];
    if values.len() != 4 {
        return None;
    }
    for (slot, value) in numbers.iter_mut().zip(values) {
        let (_, value) = doc.dereference(value).ok()?;
        let number = value.as_float().ok()?;
        if !number.is_finite() {
            return None;
        }
        *slot = number;
    }
    Some(numbers)
}

/// Follows what `pdf-extract` will draw, page by page and through form XObjects, and refuses
/// documents that nest too deep or repeat too much.
fn check_drawing_work(doc: &Document, pages: &[ObjectId]) -> Result<(), IngestError> {
    let has_forms = doc.objects.values().any(|object| {
        matches!(object, Object::Stream(stream)
            if matches!(stream.dict.get(b"Subtype").and_then(Object::as_name), Ok(b"Form")))
    });
    let mut budget = Budget {
        work: 0,
        forms: 0,
        cache: HashMap::new(),
    };
    for &page in pages {
        let content_len: usize = doc
            .get_page_contents(page)
            .into_iter()
            .filter_map(|id| doc.get_object(id).and_then(Object::as_stream).ok())
            .map(|stream| stream.content.len())
            .sum();
        budget.spend(content_len)?;
        if !has_forms {
            continue;
        }
        let Some(resources) = doc
            .objects
            .get(&page)
            .and_then(|page| page.as_dict().ok())
            .and_then(|page| page.get(b"Resources").ok())
            .and_then(|resources| doc.dereference(resources).ok())
            .and_then(|(_, resources)| resources.as_dict().ok())
        else {
            continue;
        };
        let content = doc.get_page_content(page).unwrap_or_default();
        let names = xobject_names(&content);
        budget.walk(doc, &names, resources, 1)?;
    }
    Ok(())
}

struct Budget {
    work: usize,
    forms: usize,
    /// The XObject names each form draws, by form.
    cache: HashMap<ObjectId, Vec<Vec<u8>>>,
}

impl Budget {
    fn spend(&mut self, bytes: usize) -> Result<(), IngestError> {
        self.work = self.work.saturating_add(bytes);
        if self.work > MAX_CONTENT_WORK {
            Err(too_complex())
        } else {
            Ok(())
        }
    }

    /// Draws the XObjects `names` as `pdf-extract` would: looked up in `resources`, a form with
    /// resources of its own drawing with those, otherwise with the caller's.
    fn walk(
        &mut self,
        doc: &Document,
        names: &[Vec<u8>],
        resources: &Dictionary,
        depth: usize,
    ) -> Result<(), IngestError> {
        let Some(xobjects) = resources
            .get(b"XObject")
            .ok()
            .and_then(|xobjects| doc.dereference(xobjects).ok())
            .and_then(|(_, xobjects)| xobjects.as_dict().ok())
        else {
            return Ok(());
        };
        for name in names {
            let Some((Some(id), form)) = xobjects.get(name).ok().and_then(|form| doc.dereference(form).ok()) else {
                continue;
            };
            let Ok(form) = form.as_stream() else { continue };
            if is_image(form) {
                continue;
            }
            if depth > MAX_FORM_DEPTH {
                return Err(too_complex());
            }
            self.forms += 1;
            if self.forms > MAX_FORM_CALLS {
                return Err(too_complex());
            }
            self.spend(form.content.len())?;
            let inner = form
                .dict
                .get(b"Resources")
                .ok()
                .and_then(|inner| doc.dereference(inner).ok())
                .and_then(|(_, inner)| inner.as_dict().ok())
                .unwrap_or(resources);
            let inner_names = match self.cache.get(&id) {
                Some(inner_names) => inner_names.clone(),
                None => {
                    let content = form.decompressed_content().unwrap_or_else(|_| form.content.clone());
                    let inner_names = xobject_names(&content);
                    self.cache.insert(id, inner_names.clone());
                    inner_names
                }
            };
            if !inner_names.is_empty() {
                self.walk(doc, &inner_names, inner, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// The operands of the `Do` operators in a content stream.
fn xobject_names(content: &[u8]) -> Vec<Vec<u8>> {
    let Ok(content) = Content::decode(content) else {
        return Vec::new();
    };
    content
        .operations
        .into_iter()
        .filter(|operation| operation.operator == "Do")
        .filter_map(|operation| operation.operands.into_iter().next())
        .filter_map(|operand| match operand {
            Object::Name(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// Collects characters into lines: a character starts a new line when it sits lower or higher
/// than the previous one by more than half the font size; a gap wider than a tenth of the font
/// size becomes a space.
#[derive(Default)]
struct LineOutput {
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

    fn finish(mut self) -> String {
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
    use std::io::Write;

    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name)).as_slice()
        };
    }

    const INTERVIEW: &str = "Interview with Anna, product manager\n\
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

    fn invalid(result: Result<String, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    /// A PDF from object bodies; object 1 is the catalog.
    fn build_pdf(objects: &[(u32, Vec<u8>)]) -> Vec<u8> {
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

    fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut body = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\nendstream");
        body
    }

    const FONT: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

    /// A one-page PDF whose page draws `content` with font F1 and the given XObjects, plus `extra` objects.
    fn one_page(content: Vec<u8>, xobjects: &str, extra: Vec<(u32, Vec<u8>)>) -> Vec<u8> {
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

    fn text_op(text: &str, y: u32) -> String {
        format!("BT /F1 12 Tf 72 {y} Td ({text}) Tj ET\n")
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
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
    fn forms_are_drawn_and_a_cyclic_page_tree_without_media_box_is_read() {
        assert_eq!(
            extract_text(fixture!("pdf_forms_and_cyclic_parent.pdf")).unwrap(),
            "Page one, before the form\nDrawn by the form\nPage two\nDrawn by the form"
        );
    }

    #[test]
    fn self_drawing_form_is_too_complex() {
        assert!(invalid(extract_text(fixture!("pdf_recursive_form.pdf"))).contains("too complex"));
    }

    #[test]
    fn deeply_nested_forms() {
        let nest = |depth: u32| {
            let mut extra = Vec::new();
            for level in 0..depth {
                let id = 10 + level;
                let inner = if level + 1 < depth {
                    "/Next Do\n".to_owned()
                } else {
                    text_op("Deepest", 600)
                };
                extra.push((
                    id,
                    stream(
                        &format!("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> /XObject << /Next {} 0 R >> >>", id + 1),
                        inner.as_bytes(),
                    ),
                ));
            }
            one_page(
                stream("", format!("{}/Next Do\n", text_op("Top", 700)).as_bytes()),
                "/Next 10 0 R",
                extra,
            )
        };
        assert_eq!(extract_text(&nest(5)).unwrap(), "Top\nDeepest");
        assert!(invalid(extract_text(&nest(40))).contains("too complex"));
    }

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
    fn lines_words_and_spaces() {
        // Two pieces on one baseline with a gap, a line below, text with its own spaces.
        let content = "BT /F1 12 Tf 72 700 Td (Anna:) Tj 60 0 Td (Hello) Tj 0 -14 Td (  second   line  ) Tj ET\n\
                       BT /F1 12 Tf 72 650 Td [(Ker) -20 (ned) -600 (apart)] TJ ET\n";
        let pdf = one_page(stream("", content.as_bytes()), "", vec![]);
        assert_eq!(extract_text(&pdf).unwrap(), "Anna: Hello\nsecond   line\nKerned apart");
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
