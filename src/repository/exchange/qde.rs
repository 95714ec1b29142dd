//! `project.qde`, the XML at the heart of a REFI-QDA project (namespace
//! `urn:QDA-XML:project:1.0`, schema Project-mrt2019.xsd): written from a project's
//! tags, transcripts and highlights, and read back from any tool's export into the few
//! things Insight keeps (codes, text sources, coded selections and their notes).
//! Elements are written in the order the schema's sequences require.

use std::collections::HashMap;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::{NsReader, XmlVersion};

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

/// An element of the document as read: its local name, attributes, text and children.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: HashMap<String, String>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |child| child.name == name)
    }

    fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|child| child.name == name)
    }

    fn child_text(&self, name: &str) -> String {
        self.child(name)
            .map(|child| child.text.trim().to_owned())
            .unwrap_or_default()
    }
}

/// How deep elements may nest: a real project needs a dozen levels; hostile XML is
/// stopped before it costs anything.
const MAX_DEPTH: usize = 256;

fn parse_tree(xml: &str) -> Result<Element, String> {
    let mut reader = NsReader::from_str(xml);
    let mut stack: Vec<Element> = vec![Element::default()];
    let malformed = |reader: &NsReader<&[u8]>, what: String| {
        format!(
            "project.qde is not well-formed XML ({what}, at byte {})",
            reader.error_position()
        )
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|error| malformed(&reader, error.to_string()))?;
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(start) | Event::Empty(start) => {
                let name = start.local_name().as_ref().to_owned();
                let mut element = Element {
                    name,
                    ..Element::default()
                };
                for attribute in start.attributes() {
                    let attribute = attribute.map_err(|error| malformed(&reader, error.to_string()))?;
                    let key = attribute.key.local_name().as_ref().to_owned();
                    let value = attribute
                        .normalized_value(XmlVersion::Implicit1_0)
                        .map_err(|error| malformed(&reader, error.to_string()))?;
                    element.attributes.insert(key, value.into_owned());
                }
                if empty {
                    stack.last_mut().expect("the root stays").children.push(element);
                } else {
                    if stack.len() > MAX_DEPTH {
                        return Err(format!("project.qde nests elements more than {MAX_DEPTH} deep"));
                    }
                    stack.push(element);
                }
            }
            Event::End(_) => {
                let element = stack.pop().expect("the reader checks end names");
                let parent = stack
                    .last_mut()
                    .ok_or_else(|| malformed(&reader, "an end tag without a start".to_owned()))?;
                parent.children.push(element);
            }
            Event::Text(text) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&text.xml10_content());
                }
            }
            Event::CData(data) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&data);
                }
            }
            Event::GeneralRef(reference) => {
                let Some(c) = crate::ingest::docx::resolve_reference(&reference) else {
                    return Err(malformed(&reader, "an entity that XML does not define".to_owned()));
                };
                if let Some(top) = stack.last_mut() {
                    top.text.push(c);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        return Err(malformed(&reader, "the document ends inside an element".to_owned()));
    }
    stack.pop().ok_or_else(|| "project.qde is empty".to_owned())
}

fn read_code(element: &Element) -> Code {
    Code {
        guid: element.attribute("guid").unwrap_or_default().trim().to_owned(),
        name: element.attribute("name").unwrap_or_default().trim().to_owned(),
        color: element.attribute("color").map(|color| color.trim().to_owned()),
        description: element.child_text("Description"),
        children: element.children("Code").map(read_code).collect(),
    }
}

/// Reads `project.qde`. Answers a sentence when it is not XML or not a REFI-QDA project.
pub fn read(xml: &str) -> Result<Project, String> {
    let document = parse_tree(xml.strip_prefix('\u{feff}').unwrap_or(xml))?;
    let Some(root) = document.children.iter().find(|element| element.name == "Project") else {
        return Err("project.qde is XML but not a REFI-QDA project: its root element is not <Project>".to_owned());
    };
    let attribute = |element: &Element, name: &str| element.attribute(name).map(|value| value.trim().to_owned());
    // Notes may be the memo of a coded selection (NoteRef), as AQDA and NVivo write them.
    let notes: HashMap<&str, String> = root
        .child("Notes")
        .into_iter()
        .flat_map(|notes| notes.children("Note"))
        .filter_map(|note| Some((note.attribute("guid")?.trim(), note.child_text("PlainTextContent"))))
        .collect();
    let mut project = Project {
        name: attribute(root, "name").unwrap_or_default(),
        description: root.child_text("Description"),
        origin: attribute(root, "origin").unwrap_or_default(),
        creating_user: attribute(root, "creatingUserGUID"),
        created_at: attribute(root, "creationDateTime"),
        ..Project::default()
    };
    if let Some(users) = root.child("Users") {
        project.users = users
            .children("User")
            .map(|user| User {
                guid: attribute(user, "guid").unwrap_or_default(),
                name: attribute(user, "name").unwrap_or_default(),
            })
            .collect();
    }
    if let Some(codes) = root.child("CodeBook").and_then(|book| book.child("Codes")) {
        project.codes = codes.children("Code").map(read_code).collect();
    }
    for source in root
        .child("Sources")
        .into_iter()
        .flat_map(|sources| sources.children.iter())
    {
        if source.name != "TextSource" {
            project.other_sources += 1;
            continue;
        }
        let selections = source
            .children("PlainTextSelection")
            .filter_map(|selection| {
                let position = |name| selection.attribute(name)?.trim().parse::<i64>().ok();
                let mut note = selection.child_text("Description");
                for reference in selection.children("NoteRef") {
                    if let Some(text) = reference
                        .attribute("targetGUID")
                        .and_then(|guid| notes.get(guid.trim()))
                    {
                        if !note.is_empty() && !text.is_empty() {
                            note.push_str("\n\n");
                        }
                        note.push_str(text);
                    }
                }
                Some(Selection {
                    guid: attribute(selection, "guid").unwrap_or_default(),
                    start: position("startPosition")?,
                    end: position("endPosition")?,
                    codes: selection
                        .children("Coding")
                        .filter_map(|coding| coding.child("CodeRef")?.attribute("targetGUID"))
                        .map(|guid| guid.trim().to_owned())
                        .collect(),
                    note,
                    creating_user: attribute(selection, "creatingUser"),
                    created_at: attribute(selection, "creationDateTime"),
                })
            })
            .collect();
        let inline = source.child("PlainTextContent").map(|content| content.text.clone());
        project.sources.push(TextSource {
            guid: attribute(source, "guid").unwrap_or_default(),
            name: attribute(source, "name").unwrap_or_default(),
            plain_text_path: attribute(source, "plainTextPath"),
            plain_text: inline,
            creating_user: attribute(source, "creatingUser"),
            created_at: attribute(source, "creationDateTime"),
            selections,
        });
    }
    Ok(project)
}

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
}
