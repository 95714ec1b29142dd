//! The `.qdpx` container: a zip holding `project.qde` and a `sources/` folder. Read in
//! memory only (an entry's name never becomes a path on disk, so no name can write
//! outside a folder), and within budgets: how many entries, and how many bytes all the
//! entries Insight reads may unpack to, whatever their headers claim.

use std::collections::HashMap;
use std::io::{Read, Seek, Write};

use zip::write::SimpleFileOptions;

use super::qde::{Limits, Project, Refusal};

/// Most entries an archive may list.
pub const MAX_ENTRIES: usize = 10_000;

/// A zip opened for reading, with its entries found by name without case.
pub struct Archive<R: Read + Seek> {
    zip: zip::ZipArchive<R>,
    /// Entry index by lower-case name with `/` separators.
    names: HashMap<String, usize>,
    /// Bytes that reading may still unpack.
    budget: u64,
    /// The folder `project.qde` is in (`""` at the top, or `name/`).
    base: String,
}

fn key(name: &str) -> String {
    name.replace('\\', "/").to_lowercase()
}

impl<R: Read + Seek> Archive<R> {
    /// Opens the zip and finds `project.qde` (at the top, or in one folder as some tools
    /// pack it). Answers a sentence for the person who sent it when it is none.
    pub fn open(reader: R, budget: u64) -> Result<Self, String> {
        let zip = zip::ZipArchive::new(reader)
            .map_err(|_| "The file is not a .qdpx project: it is not a zip archive (or it is damaged).".to_owned())?;
        if zip.len() > MAX_ENTRIES {
            return Err(format!(
                "The .qdpx archive lists {} files; a project may have at most {MAX_ENTRIES}.",
                zip.len()
            ));
        }
        let names: HashMap<String, usize> = zip
            .file_names()
            .enumerate()
            .filter_map(|(index, name)| Some((key(&name.ok()?), index)))
            .collect();
        let base = if names.contains_key("project.qde") {
            String::new()
        } else {
            names
                .keys()
                .filter_map(|name| name.strip_suffix("project.qde"))
                .filter(|folder| folder.ends_with('/') && folder.matches('/').count() == 1)
                .min()
                .map(str::to_owned)
                .ok_or_else(|| {
                    "The zip archive has no project.qde: a REFI-QDA project (.qdpx) holds its project.qde \
                     and a sources folder. Export the project from your QDA tool as a REFI-QDA project."
                        .to_owned()
                })?
        };
        Ok(Self {
            zip,
            names,
            budget,
            base,
        })
    }

    /// `project.qde`, read within the budget.
    #[cfg(test)]
    pub fn project_xml(&mut self) -> Result<Vec<u8>, String> {
        let name = format!("{}project.qde", self.base);
        self.read(&name)
            .map_err(|refusal| refusal.to_string())?
            .ok_or_else(|| "The zip archive has no project.qde.".to_owned())
    }

    /// `project.qde`, read as a stream within `limits` and what is left of the budget.
    pub fn read_project(&mut self, mut limits: Limits) -> Result<Project, Refusal> {
        let name = format!("{}project.qde", self.base);
        let Some(&index) = self.names.get(&key(&name)) else {
            return Err("The zip archive has no project.qde.".to_owned().into());
        };
        let entry = self
            .zip
            .by_index(index)
            .map_err(|_| format!("The .qdpx archive is damaged: {name} cannot be unpacked."))?;
        limits.document_bytes = limits.document_bytes.min(self.budget);
        let mut counted = Counted { inner: entry, read: 0 };
        let project = super::qde::read_stream(std::io::BufReader::new(&mut counted), limits)?;
        self.budget = self.budget.saturating_sub(counted.read);
        Ok(project)
    }

    /// The file a source's `plainTextPath` names inside the archive (`internal://…`, in
    /// the sources folder); `None` when it is not in the archive.
    pub fn source(&mut self, plain_text_path: &str) -> Result<Option<Vec<u8>>, Refusal> {
        let Some(file) = plain_text_path.strip_prefix("internal://") else {
            return Ok(None);
        };
        let file = file.trim_start_matches('/');
        if file.is_empty() || file.contains("..") {
            return Ok(None);
        }
        let name = format!("{}sources/{file}", self.base);
        self.read(&name)
    }

    fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, Refusal> {
        let Some(&index) = self.names.get(&key(name)) else {
            return Ok(None);
        };
        let damaged = || format!("The .qdpx archive is damaged: {name} cannot be unpacked.");
        let entry = self.zip.by_index(index).map_err(|_| Refusal::Invalid(damaged()))?;
        let budget = self.budget;
        let too_large = || {
            Refusal::TooLarge(format!(
                "The .qdpx project unpacks to more than Insight reads for this upload ({budget} bytes left \
                 for {name}; INSIGHT_IMPORT_MAX_EXPANSION times the upload); it may be a zip bomb. Export a \
                 smaller project."
            ))
        };
        if entry.size() > self.budget {
            return Err(too_large());
        }
        let mut data = Vec::new();
        // The declared size can lie: never inflate more than what is left, whatever it says.
        entry
            .take(self.budget.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|_| Refusal::Invalid(damaged()))?;
        let read = u64::try_from(data.len()).unwrap_or(u64::MAX);
        if read > self.budget {
            return Err(too_large());
        }
        self.budget -= read;
        Ok(Some(data))
    }
}

/// A reader that counts what it hands out.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// A zip of the given files, compressed.
pub fn write(files: &[(String, Vec<u8>)]) -> anyhow::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(name.as_str(), options)?;
        zip.write_all(bytes)?;
    }
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(name, bytes)| ((*name).to_owned(), bytes.to_vec()))
            .collect();
        write(&files).expect("zip")
    }

    #[test]
    fn finds_the_project_and_sources_whatever_their_case_or_folder() {
        let bytes = zip_of(&[("Project.QDE", b"<Project/>"), ("Sources/A.txt", b"hello")]);
        let mut archive = Archive::open(Cursor::new(bytes), 1000).expect("open");
        assert_eq!(archive.project_xml().unwrap(), b"<Project/>");
        assert_eq!(archive.source("internal://a.txt").unwrap().unwrap(), b"hello");
        assert_eq!(archive.source("relative://a.txt").unwrap(), None);
        assert_eq!(archive.source("internal://../a.txt").unwrap(), None);

        let nested = zip_of(&[("study/project.qde", b"<Project/>"), ("study/sources/b.txt", b"hi")]);
        let mut archive = Archive::open(Cursor::new(nested), 1000).expect("open");
        assert_eq!(archive.source("internal://b.txt").unwrap().unwrap(), b"hi");
    }

    #[test]
    fn refuses_what_is_no_project_and_stops_at_the_budget() {
        assert!(Archive::open(Cursor::new(b"not a zip".to_vec()), 1000).is_err());
        let no_project = zip_of(&[("sources/a.txt", b"hello")]);
        let error = Archive::open(Cursor::new(no_project), 1000).err().expect("refused");
        assert!(error.contains("no project.qde"), "{error}");
        let zeros = vec![0u8; 100_000];
        let bomb = zip_of(&[("project.qde", &zeros)]);
        assert!(bomb.len() < 1_000, "it compresses well");
        let mut archive = Archive::open(Cursor::new(bomb), 50_000).expect("open");
        let error = archive.project_xml().expect_err("over the budget");
        assert!(error.contains("zip bomb"), "{error}");
    }
}
