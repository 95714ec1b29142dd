//! `project.qde`, the XML at the heart of a REFI-QDA project (namespace
//! `urn:QDA-XML:project:1.0`, schema Project-mrt2019.xsd): written from a project's
//! tags, transcripts and highlights, and read back from any tool's export into the few
//! things Insight keeps (codes, text sources, coded selections and their notes).
//! Elements are written in the order the schema's sequences require.

use std::collections::HashMap;

use quick_xml::Writer;
use quick_xml::XmlVersion;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use super::xml_safe;

pub const NAMESPACE: &str = "urn:QDA-XML:project:1.0";

/// A code of the codebook, with the codes under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Code {
    pub guid: String,
    pub name: String,
    /// `#rrggbb` (or `#rgb` as some tools write it).
    pub color: Option<String>,
    pub description: String,
    pub children: Vec<Code>,
}

/// A coded span of a text source: characters `start..end` of its plain text.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub guid: String,
    pub start: i64,
    pub end: i64,
    /// The codes applied (their guids).
    pub codes: Vec<String>,
    /// A memo on the coding: the selection's description and the notes it refers to.
    pub note: String,
    pub creating_user: Option<String>,
    pub created_at: Option<String>,
}

/// A text source: its plain text is in the archive (`internal://…`) or inline.
#[derive(Debug, Clone, PartialEq)]
pub struct TextSource {
    pub guid: String,
    pub name: String,
    pub plain_text_path: Option<String>,
    pub plain_text: Option<String>,
    pub creating_user: Option<String>,
    pub created_at: Option<String>,
    pub selections: Vec<Selection>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub guid: String,
    pub name: String,
}

/// What Insight writes and reads of a project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Project {
    pub name: String,
    pub description: String,
    pub origin: String,
    pub creating_user: Option<String>,
    pub created_at: Option<String>,
    pub users: Vec<User>,
    pub codes: Vec<Code>,
    pub sources: Vec<TextSource>,
    /// Sources of other kinds (PDF, picture, audio, video), which Insight does not read.
    pub other_sources: usize,
}

struct Out(Writer<Vec<u8>>);

impl Out {
    fn open(&mut self, name: &str, attributes: &[(&str, Option<&str>)], empty: bool) {
        let mut element = BytesStart::new(name);
        for (key, value) in attributes {
            if let Some(value) = value {
                element.push_attribute((*key, xml_safe(value).as_str()));
            }
        }
        let event = if empty {
            Event::Empty(element)
        } else {
            Event::Start(element)
        };
        self.0.write_event(event).expect("writing to memory");
    }

    fn close(&mut self, name: &str) {
        self.0
            .write_event(Event::End(BytesEnd::new(name)))
            .expect("writing to memory");
    }

    fn text_element(&mut self, name: &str, text: &str) {
        self.open(name, &[], false);
        let text = xml_safe(text);
        self.0
            .write_event(Event::Text(BytesText::new(&text)))
            .expect("writing to memory");
        self.close(name);
    }

    fn code(&mut self, code: &Code) {
        let empty = code.description.is_empty() && code.children.is_empty();
        let attributes = [
            ("guid", Some(code.guid.as_str())),
            ("name", Some(code.name.as_str())),
            ("isCodable", Some("true")),
            ("color", code.color.as_deref()),
        ];
        self.open("Code", &attributes, empty);
        if !empty {
            if !code.description.is_empty() {
                self.text_element("Description", &code.description);
            }
            for child in &code.children {
                self.code(child);
            }
            self.close("Code");
        }
    }

    fn selection(&mut self, selection: &Selection) {
        let (start, end) = (selection.start.to_string(), selection.end.to_string());
        let attributes = [
            ("guid", Some(selection.guid.as_str())),
            ("startPosition", Some(start.as_str())),
            ("endPosition", Some(end.as_str())),
            ("creatingUser", selection.creating_user.as_deref()),
            ("creationDateTime", selection.created_at.as_deref()),
        ];
        self.open("PlainTextSelection", &attributes, false);
        if !selection.note.is_empty() {
            self.text_element("Description", &selection.note);
        }
        for code in &selection.codes {
            // One coding per code; its guid follows from the selection's and the code's,
            // so the same project always writes the same document.
            let guid = uuid::Uuid::new_v5(
                &uuid::Uuid::NAMESPACE_OID,
                format!("{}/{code}", selection.guid).as_bytes(),
            )
            .to_string();
            let attributes = [
                ("guid", Some(guid.as_str())),
                ("creatingUser", selection.creating_user.as_deref()),
                ("creationDateTime", selection.created_at.as_deref()),
            ];
            self.open("Coding", &attributes, false);
            self.open("CodeRef", &[("targetGUID", Some(code.as_str()))], true);
            self.close("Coding");
        }
        self.close("PlainTextSelection");
    }
}

/// The project as `project.qde`.
pub fn write(project: &Project) -> String {
    let mut out = Out(Writer::new_with_indent(Vec::new(), b' ', 2));
    out.0
        .write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))
        .expect("writing to memory");
    let attributes = [
        ("xmlns", Some(NAMESPACE)),
        ("name", Some(project.name.as_str())),
        ("origin", Some(project.origin.as_str())),
        ("creatingUserGUID", project.creating_user.as_deref()),
        ("creationDateTime", project.created_at.as_deref()),
    ];
    out.open("Project", &attributes, false);
    // The schema wants at least one element in each list it has, so empty ones are left out.
    if !project.users.is_empty() {
        out.open("Users", &[], false);
        for user in &project.users {
            let attributes = [("guid", Some(user.guid.as_str())), ("name", Some(user.name.as_str()))];
            out.open("User", &attributes, true);
        }
        out.close("Users");
    }
    if !project.codes.is_empty() {
        out.open("CodeBook", &[], false);
        out.open("Codes", &[], false);
        for code in &project.codes {
            out.code(code);
        }
        out.close("Codes");
        out.close("CodeBook");
    }
    if !project.sources.is_empty() {
        out.open("Sources", &[], false);
        for source in &project.sources {
            let attributes = [
                ("guid", Some(source.guid.as_str())),
                ("name", Some(source.name.as_str())),
                ("plainTextPath", source.plain_text_path.as_deref()),
                ("creatingUser", source.creating_user.as_deref()),
                ("creationDateTime", source.created_at.as_deref()),
            ];
            out.open("TextSource", &attributes, source.selections.is_empty());
            if !source.selections.is_empty() {
                for selection in &source.selections {
                    out.selection(selection);
                }
                out.close("TextSource");
            }
        }
        out.close("Sources");
    }
    if !project.description.is_empty() {
        out.text_element("Description", &project.description);
    }
    out.close("Project");
    String::from_utf8(out.0.into_inner()).expect("the writer writes the UTF-8 it is given")
}

/// What reading project.qde may cost; past any of these the file is refused (413).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Elements in the whole document.
    pub elements: u64,
    /// How deep elements may nest.
    pub depth: usize,
    /// Bytes of one tag with its attributes.
    pub tag_bytes: u64,
    /// Bytes of the text of one element.
    pub text_bytes: u64,
    /// Bytes of the whole document.
    pub document_bytes: u64,
}

impl Limits {
    /// Limits no real project comes near, for tests of what is read.
    #[cfg(test)]
    pub fn generous() -> Self {
        Self {
            elements: 1_000_000,
            depth: 64,
            tag_bytes: 65_536,
            text_bytes: 16 << 20,
            document_bytes: 1 << 30,
        }
    }
}

/// Why project.qde was not read: not a project (422), or past a limit (413).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Invalid(String),
    TooLarge(String),
}

impl From<String> for Refusal {
    fn from(sentence: String) -> Self {
        Self::Invalid(sentence)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(sentence) | Self::TooLarge(sentence) => f.write_str(sentence),
        }
    }
}

/// A reader that refuses to hand out more than the document's budget, or more than one
/// token's worth since the parser last finished an event: quick-xml buffers a whole tag or
/// text run before it reports it, so the cap has to act below it.
struct Capped<R> {
    inner: R,
    read: u64,
    since_event: std::rc::Rc<std::cell::Cell<u64>>,
    limits: Limits,
    refused: std::rc::Rc<std::cell::RefCell<Option<Refusal>>>,
}

impl<R: std::io::Read> std::io::Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let n64 = n as u64;
        self.read += n64;
        self.since_event.set(self.since_event.get() + n64);
        let refusal = if self.read > self.limits.document_bytes {
            Some(Refusal::TooLarge(format!(
                "project.qde unpacks to more than Insight reads for this upload ({} bytes, \
                 INSIGHT_IMPORT_MAX_EXPANSION times the upload); it may be a zip bomb.",
                self.limits.document_bytes
            )))
        } else if self.since_event.get() > self.limits.text_bytes.max(self.limits.tag_bytes) + 65_536 {
            Some(too_long_text(&self.limits))
        } else {
            None
        };
        if let Some(refusal) = refusal {
            *self.refused.borrow_mut() = Some(refusal);
            return Err(std::io::Error::other("over a limit"));
        }
        Ok(n)
    }
}

fn too_long_text(limits: &Limits) -> Refusal {
    Refusal::TooLarge(format!(
        "project.qde has a text longer than {} bytes (INSIGHT_IMPORT_MAX_TEXT_BYTES).",
        limits.text_bytes
    ))
}

/// Where in the document the reader is: the part of the REFI-QDA schema Insight reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Root,
    Project,
    ProjectDescription,
    Users,
    CodeBook,
    Codes,
    Code,
    CodeDescription,
    Sources,
    TextSource,
    PlainTextContent,
    Selection,
    SelectionDescription,
    Coding,
    Notes,
    Note,
    NoteContent,
    /// Anything else: read past.
    Other,
}

type OpenSelection = (Option<i64>, Option<i64>, Selection, Vec<String>);

/// What is being built while the reader is inside it.
#[derive(Default)]
struct Building {
    project: Project,
    project_seen: bool,
    /// Codes open, outermost first.
    codes: Vec<Code>,
    source: Option<TextSource>,
    /// The selection open: its start and end as written, the selection, the notes it names.
    selection: Option<OpenSelection>,
    note: Option<(String, String)>,
    /// Selections' note references, resolved once all notes are known: (source, selection, guids).
    notes: HashMap<String, String>,
    note_refs: Vec<(usize, usize, Vec<String>)>,
    /// The text being taken, and the depth of the element it belongs to.
    text: Option<(usize, String)>,
}

fn child_place(parent: Place, name: &str) -> Place {
    match (parent, name) {
        (Place::Root, "Project") => Place::Project,
        (Place::Project, "Description") => Place::ProjectDescription,
        (Place::Project, "Users") => Place::Users,
        (Place::Project, "CodeBook") => Place::CodeBook,
        (Place::CodeBook, "Codes") => Place::Codes,
        (Place::Codes | Place::Code, "Code") => Place::Code,
        (Place::Code, "Description") => Place::CodeDescription,
        (Place::Project, "Sources") => Place::Sources,
        (Place::Sources, "TextSource") => Place::TextSource,
        (Place::TextSource, "PlainTextContent") => Place::PlainTextContent,
        (Place::TextSource, "PlainTextSelection") => Place::Selection,
        (Place::Selection, "Description") => Place::SelectionDescription,
        (Place::Selection, "Coding") => Place::Coding,
        (Place::Project, "Notes") => Place::Notes,
        (Place::Notes, "Note") => Place::Note,
        (Place::Note, "PlainTextContent") => Place::NoteContent,
        _ => Place::Other,
    }
}

/// Reads `project.qde` as a stream, keeping only what Insight takes of it, within
/// `limits`. Answers a sentence when it is not XML, not a REFI-QDA project, or too large.
pub fn read_stream<R: std::io::BufRead>(mut input: R, limits: Limits) -> Result<Project, Refusal> {
    if input
        .fill_buf()
        .map(|head| head.starts_with(b"\xEF\xBB\xBF"))
        .unwrap_or(false)
    {
        input.consume(3);
    }
    let since_event = std::rc::Rc::new(std::cell::Cell::new(0));
    let refused = std::rc::Rc::new(std::cell::RefCell::new(None));
    let capped = Capped {
        inner: input,
        read: 0,
        since_event: since_event.clone(),
        limits,
        refused: refused.clone(),
    };
    let mut reader = quick_xml::Reader::from_reader(std::io::BufReader::with_capacity(16 * 1024, capped));
    let mut buf = Vec::new();
    let mut places: Vec<Place> = vec![Place::Root];
    let mut elements: u64 = 0;
    let mut building = Building::default();
    let malformed = |position: u64, what: String| {
        Refusal::Invalid(format!(
            "project.qde is not well-formed XML ({what}, at byte {position})"
        ))
    };
    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(error) => {
                if let Some(refusal) = refused.borrow_mut().take() {
                    return Err(refusal);
                }
                return Err(malformed(reader.error_position(), error.to_string()));
            }
        };
        since_event.set(0);
        let position = reader.buffer_position();
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let empty = matches!(event, Event::Empty(_));
                elements += 1;
                if elements > limits.elements {
                    return Err(Refusal::TooLarge(format!(
                        "project.qde has more than {} elements (INSIGHT_IMPORT_MAX_ELEMENTS).",
                        limits.elements
                    )));
                }
                if start.len() as u64 > limits.tag_bytes {
                    return Err(Refusal::TooLarge(format!(
                        "project.qde has a tag longer than {} bytes with its attributes \
                         (INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES).",
                        limits.tag_bytes
                    )));
                }
                if places.len() > limits.depth {
                    return Err(Refusal::TooLarge(format!(
                        "project.qde nests elements more than {} deep (INSIGHT_IMPORT_MAX_DEPTH).",
                        limits.depth
                    )));
                }
                let parent = *places.last().expect("the root stays");
                let place = child_place(parent, start.local_name().as_ref());
                let mut attributes: HashMap<String, String> = HashMap::new();
                if place != Place::Other || matches!(parent, Place::Selection | Place::Coding | Place::Users) {
                    for attribute in start.attributes() {
                        let attribute = attribute.map_err(|error| malformed(position, error.to_string()))?;
                        let key = attribute.key.local_name().as_ref().to_owned();
                        let value = attribute
                            .normalized_value(XmlVersion::Implicit1_0)
                            .map_err(|error| malformed(position, error.to_string()))?;
                        attributes.insert(key, value.trim().to_owned());
                    }
                }
                building.open(place, parent, start.local_name().as_ref(), attributes, places.len());
                if empty {
                    building.close(place, places.len());
                } else {
                    places.push(place);
                }
            }
            Event::End(_) => {
                let place = places.pop().expect("the reader checks end names");
                if places.is_empty() {
                    return Err(malformed(position, "an end tag without a start".to_owned()));
                }
                building.close(place, places.len());
            }
            Event::Text(text) => building.take_text(places.len(), &text.xml10_content(), &limits)?,
            Event::CData(data) => {
                building.take_text(places.len(), &data, &limits)?;
            }
            Event::GeneralRef(reference) => {
                let Some(c) = crate::engines::ingest::docx::resolve_reference(&reference) else {
                    return Err(malformed(position, "an entity that XML does not define".to_owned()));
                };
                building.take_text(places.len(), c.encode_utf8(&mut [0; 4]), &limits)?;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if places.len() != 1 {
        return Err(malformed(
            reader.buffer_position(),
            "the document ends inside an element".to_owned(),
        ));
    }
    building.finish()
}

impl Building {
    fn open(&mut self, place: Place, parent: Place, name: &str, mut attributes: HashMap<String, String>, depth: usize) {
        let mut take = |key: &str| attributes.remove(key);
        match place {
            Place::Project => {
                self.project_seen = true;
                self.project.name = take("name").unwrap_or_default();
                self.project.origin = take("origin").unwrap_or_default();
                self.project.creating_user = take("creatingUserGUID");
                self.project.created_at = take("creationDateTime");
            }
            Place::Users => {}
            Place::Code => self.codes.push(Code {
                guid: take("guid").unwrap_or_default(),
                name: take("name").unwrap_or_default(),
                color: take("color"),
                description: String::new(),
                children: Vec::new(),
            }),
            Place::TextSource => {
                self.source = Some(TextSource {
                    guid: take("guid").unwrap_or_default(),
                    name: take("name").unwrap_or_default(),
                    plain_text_path: take("plainTextPath"),
                    plain_text: None,
                    creating_user: take("creatingUser"),
                    created_at: take("creationDateTime"),
                    selections: Vec::new(),
                });
            }
            Place::Selection => {
                let position = |value: Option<String>| value?.parse::<i64>().ok();
                let start = position(take("startPosition"));
                let end = position(take("endPosition"));
                let selection = Selection {
                    guid: take("guid").unwrap_or_default(),
                    start: 0,
                    end: 0,
                    codes: Vec::new(),
                    note: String::new(),
                    creating_user: take("creatingUser"),
                    created_at: take("creationDateTime"),
                };
                self.selection = Some((start, end, selection, Vec::new()));
            }
            Place::Note => self.note = Some((take("guid").unwrap_or_default(), String::new())),
            Place::ProjectDescription
            | Place::CodeDescription
            | Place::PlainTextContent
            | Place::SelectionDescription
            | Place::NoteContent => self.text = Some((depth + 1, String::new())),
            Place::Other => match (parent, name) {
                (Place::Sources, _) => self.project.other_sources += 1,
                (Place::Coding, "CodeRef") => {
                    if let (Some((_, _, selection, _)), Some(guid)) = (self.selection.as_mut(), take("targetGUID")) {
                        selection.codes.push(guid);
                    }
                }
                (Place::Selection, "NoteRef") => {
                    if let (Some((_, _, _, refs)), Some(guid)) = (self.selection.as_mut(), take("targetGUID")) {
                        refs.push(guid);
                    }
                }
                _ => {}
            },
            _ => {}
        }
        if parent == Place::Users && name == "User" {
            self.project.users.push(User {
                guid: take("guid").unwrap_or_default(),
                name: take("name").unwrap_or_default(),
            });
        }
    }

    /// Text directly inside the element being taken (not inside its children).
    fn take_text(&mut self, depth: usize, text: &str, limits: &Limits) -> Result<(), Refusal> {
        if let Some((at, taken)) = self.text.as_mut()
            && *at == depth
        {
            if (taken.len() + text.len()) as u64 > limits.text_bytes {
                return Err(too_long_text(limits));
            }
            taken.push_str(text);
        }
        Ok(())
    }

    /// The text of the element at `depth` (the element's own depth is one less than its text's).
    fn text_of(&mut self, depth: usize) -> Option<String> {
        match self.text.take() {
            Some((at, text)) if at == depth + 1 => Some(text),
            other => {
                self.text = other;
                None
            }
        }
    }

    fn close(&mut self, place: Place, depth: usize) {
        match place {
            Place::ProjectDescription => {
                if let Some(text) = self.text_of(depth).filter(|_| self.project.description.is_empty()) {
                    self.project.description = text.trim().to_owned();
                }
            }
            Place::CodeDescription => {
                let text = self.text_of(depth);
                if let (Some(code), Some(text)) = (self.codes.last_mut(), text)
                    && code.description.is_empty()
                {
                    code.description = text.trim().to_owned();
                }
            }
            Place::Code => {
                if let Some(code) = self.codes.pop() {
                    match self.codes.last_mut() {
                        Some(parent) => parent.children.push(code),
                        None => self.project.codes.push(code),
                    }
                }
            }
            Place::PlainTextContent => {
                let text = self.text_of(depth);
                if let (Some(source), Some(text)) = (self.source.as_mut(), text)
                    && source.plain_text.is_none()
                {
                    source.plain_text = Some(text);
                }
            }
            Place::SelectionDescription => {
                let text = self.text_of(depth);
                if let (Some((_, _, selection, _)), Some(text)) = (self.selection.as_mut(), text)
                    && selection.note.is_empty()
                {
                    selection.note = text.trim().to_owned();
                }
            }
            Place::Selection => {
                if let (Some((Some(start), Some(end), mut selection, refs)), Some(source)) =
                    (self.selection.take(), self.source.as_mut())
                {
                    selection.start = start;
                    selection.end = end;
                    if !refs.is_empty() {
                        self.note_refs
                            .push((self.project.sources.len(), source.selections.len(), refs));
                    }
                    source.selections.push(selection);
                }
            }
            Place::TextSource => {
                if let Some(source) = self.source.take() {
                    self.project.sources.push(source);
                }
            }
            Place::NoteContent => {
                let text = self.text_of(depth);
                if let (Some((_, content)), Some(text)) = (self.note.as_mut(), text) {
                    *content = text.trim().to_owned();
                }
            }
            Place::Note => {
                if let Some((guid, content)) = self.note.take() {
                    self.notes.entry(guid).or_insert(content);
                }
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Result<Project, Refusal> {
        if !self.project_seen {
            return Err(Refusal::Invalid(
                "project.qde is XML but not a REFI-QDA project: its root element is not <Project>".to_owned(),
            ));
        }
        // Notes may be the memo of a coded selection (NoteRef), as AQDA and NVivo write them.
        for (source, selection, refs) in self.note_refs {
            let note = &mut self.project.sources[source].selections[selection].note;
            for guid in refs {
                if let Some(text) = self.notes.get(&guid) {
                    if !note.is_empty() && !text.is_empty() {
                        note.push_str("\n\n");
                    }
                    note.push_str(text);
                }
            }
        }
        Ok(self.project)
    }
}

/// Reads `project.qde` held in memory (tests).
#[cfg(test)]
pub fn read(xml: &str) -> Result<Project, String> {
    let limits = Limits {
        elements: u64::MAX,
        depth: MAX_DEPTH,
        tag_bytes: u64::MAX / 4,
        text_bytes: u64::MAX / 4,
        document_bytes: u64::MAX,
    };
    read_stream(xml.as_bytes(), limits).map_err(|refusal| refusal.to_string())
}

/// How deep [`read`] lets elements nest.
#[cfg(test)]
const MAX_DEPTH: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Project {
        Project {
            name: "Invoices & <pricing>".to_owned(),
            description: "Why \"small\" teams\nstruggle".to_owned(),
            origin: "Insight".to_owned(),
            creating_user: Some("0b8f1a52-3a55-4c47-9a43-3d4a6b1c2d3e".to_owned()),
            created_at: Some("2026-01-02T03:04:05Z".to_owned()),
            users: vec![User {
                guid: "0b8f1a52-3a55-4c47-9a43-3d4a6b1c2d3e".to_owned(),
                name: "ann@example.org".to_owned(),
            }],
            codes: vec![Code {
                guid: "6f1c1e9a-3f0e-4b7e-9a8e-1d2c3b4a5f60".to_owned(),
                name: "Pricing".to_owned(),
                color: Some("#d62728".to_owned()),
                description: "What they pay".to_owned(),
                children: vec![Code {
                    guid: "7a2d2f0b-4a1f-4c8f-8b9f-2e3d4c5b6a71".to_owned(),
                    name: "Too expensive".to_owned(),
                    color: Some("#ff7f0e".to_owned()),
                    description: String::new(),
                    children: Vec::new(),
                }],
            }],
            sources: vec![TextSource {
                guid: "8b3e3a1c-5b2a-4d9a-9caa-3f4e5d6c7b82".to_owned(),
                name: "Anna".to_owned(),
                plain_text_path: Some("internal://8b3e3a1c-5b2a-4d9a-9caa-3f4e5d6c7b82.txt".to_owned()),
                plain_text: None,
                creating_user: None,
                created_at: None,
                selections: vec![Selection {
                    guid: "9c4f4b2d-6c3b-4eab-8dbb-4a5f6e7d8c93".to_owned(),
                    start: 6,
                    end: 24,
                    codes: vec!["7a2d2f0b-4a1f-4c8f-8b9f-2e3d4c5b6a71".to_owned()],
                    note: "Said twice\u{0}".to_owned(),
                    creating_user: None,
                    created_at: None,
                }],
            }],
            other_sources: 0,
        }
    }

    #[test]
    fn what_is_written_reads_back() {
        let written = write(&sample());
        assert!(written.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>"));
        assert!(written.contains("xmlns=\"urn:QDA-XML:project:1.0\""));
        let read = read(&written).expect("read");
        let mut expected = sample();
        // NUL cannot be in XML: written as a space, and texts are read trimmed.
        expected.sources[0].selections[0].note = "Said twice".to_owned();
        assert_eq!(read, expected);
    }

    #[test]
    fn other_sources_are_counted_and_notes_joined() {
        let xml = r#"<?xml version="1.0"?>
            <qda:Project xmlns:qda="urn:QDA-XML:project:1.0" name="P">
              <qda:Sources>
                <qda:PDFSource guid="a" name="scan.pdf"/>
                <qda:TextSource guid="b" name="t"><qda:PlainTextContent>Hi &amp; bye</qda:PlainTextContent>
                  <qda:PlainTextSelection guid="c" startPosition="0" endPosition="2">
                    <qda:Description>memo</qda:Description>
                    <qda:Coding guid="d"><qda:CodeRef targetGUID="e"/></qda:Coding>
                    <qda:NoteRef targetGUID="n"/>
                  </qda:PlainTextSelection>
                  <qda:PlainTextSelection guid="x" startPosition="nope" endPosition="2"/>
                </qda:TextSource>
                <qda:AudioSource guid="f"/>
              </qda:Sources>
              <qda:Notes><qda:Note guid="n"><qda:PlainTextContent>note</qda:PlainTextContent></qda:Note></qda:Notes>
            </qda:Project>"#;
        let project = read(xml).expect("read");
        assert_eq!(project.other_sources, 2);
        assert_eq!(project.sources[0].plain_text.as_deref(), Some("Hi & bye"));
        assert_eq!(project.sources[0].selections.len(), 1);
        assert_eq!(project.sources[0].selections[0].note, "memo\n\nnote");
        assert_eq!(project.sources[0].selections[0].codes, ["e"]);
    }

    #[test]
    fn broken_or_foreign_xml_is_a_sentence() {
        for xml in [
            "<Project name='x'><Sources>",
            "<Project></Sources>",
            "not xml <",
            "<a>&bogus;</a>",
        ] {
            let error = read(xml).expect_err(xml);
            assert!(error.contains("project.qde"), "{error}");
        }
        let error = read("<Codebook/>").expect_err("not a project");
        assert!(error.contains("<Project>"), "{error}");
        let deep = "<a>".repeat(MAX_DEPTH + 2);
        assert!(read(&deep).is_err());
    }

    #[test]
    fn limits_stop_a_hostile_document_as_it_streams() {
        let limits = Limits {
            elements: 1_000,
            ..Limits::generous()
        };
        let many = format!("<Project>{}</Project>", "<a/>".repeat(2_000));
        let refusal = read_stream(many.as_bytes(), limits).expect_err("too many");
        assert!(
            matches!(&refusal, Refusal::TooLarge(s) if s.contains("INSIGHT_IMPORT_MAX_ELEMENTS")),
            "{refusal}"
        );
        let deep = format!("<Project>{}", "<a>".repeat(100));
        let refusal = read_stream(deep.as_bytes(), Limits::generous()).expect_err("too deep");
        assert!(
            matches!(&refusal, Refusal::TooLarge(s) if s.contains("INSIGHT_IMPORT_MAX_DEPTH")),
            "{refusal}"
        );
        let small = Limits {
            text_bytes: 1_000,
            tag_bytes: 1_000,
            ..Limits::generous()
        };
        let wide = format!("<Project name=\"{}\"/>", "x".repeat(5_000));
        let refusal = read_stream(wide.as_bytes(), small).expect_err("too wide");
        assert!(
            matches!(&refusal, Refusal::TooLarge(s) if s.contains("INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES")),
            "{refusal}"
        );
        let spaces = format!("<Project>{}</Project>", " ".repeat(200_000));
        let refusal = read_stream(spaces.as_bytes(), small).expect_err("too long a text");
        assert!(
            matches!(&refusal, Refusal::TooLarge(s) if s.contains("INSIGHT_IMPORT_MAX_TEXT_BYTES")),
            "{refusal}"
        );
        let described = format!("<Project><Description>{}</Description></Project>", "y".repeat(5_000));
        let refusal = read_stream(described.as_bytes(), small).expect_err("too long a description");
        assert!(matches!(refusal, Refusal::TooLarge(_)));
        let budget = Limits {
            document_bytes: 10_000,
            ..Limits::generous()
        };
        let refusal = read_stream(spaces.as_bytes(), budget).expect_err("over the document budget");
        assert!(
            matches!(&refusal, Refusal::TooLarge(s) if s.contains("INSIGHT_IMPORT_MAX_EXPANSION")),
            "{refusal}"
        );
    }
}
