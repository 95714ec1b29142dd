//! The page tree and what its pages draw, made safe for `pdf-extract`: inherited attributes
//! are copied onto each page, so that a cyclic page tree cannot make it recurse forever, and
//! form XObjects are followed with a depth and work limit, so that a form that draws itself
//! cannot overflow the stack (which aborts the process rather than unwinding).

use std::collections::{HashMap, HashSet};

use pdf_extract::content::Content;
use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::streams::is_image;
use crate::engines::ingest::IngestError;

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

fn too_complex() -> IngestError {
    IngestError::Invalid(
        "The PDF is too complex to read: its pages draw nested or repeated content beyond our limits. Save or print it to a new PDF and upload that."
            .to_owned(),
    )
}

/// Copies `Resources` and `MediaBox` from the page tree onto each page, so that `pdf-extract`
/// finds them without walking up `Parent` links (which it would do forever in a cycle), and
/// drops `ArtBox`, which it indexes without checking.
pub(super) fn flatten_page_attributes(doc: &mut Document, pages: &[ObjectId]) {
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
pub(super) fn check_drawing_work(doc: &Document, pages: &[ObjectId]) -> Result<(), IngestError> {
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

#[cfg(test)]
mod tests {
    use crate::engines::ingest::pdf::extract_text;
    use crate::engines::ingest::pdf::tests::{invalid, one_page, stream, text_op};

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
}
