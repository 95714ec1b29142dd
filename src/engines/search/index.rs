//! The workspace search index (tantivy): every finished record's utterances, the
//! highlights people made, written reports and insights, in one index on local disk
//! under `INSIGHT_SEARCH_DIR` (default `INSIGHT_DATA_DIR/search/`). The database is the source of truth: the index is
//! built from it and kept in step by `super::indexer`, and a lost index is only rebuilt.
//!
//! Text is analysed per language (Snowball stemming for the languages tantivy stems, no
//! stop words, so "not happy" stays a phrase); a document goes into the field of its
//! language, and a query reads every field. Every query is filtered by the caller's
//! workspaces, so no workspace finds another's text.

use std::collections::HashMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Mutex;

use anyhow::Context as _;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, RangeQuery, TermQuery, TermSetQuery};
use tantivy::schema::{
    DateOptions, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TantivyDocument, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
};
use tantivy::{DateTime, Index, IndexReader, IndexWriter, ReloadPolicy, Term, doc};
use uuid::Uuid;

/// Bumped when the schema, the analysis or the folder's layout changes: an index of
/// another version is rebuilt (and the other version's folder removed).
const VERSION: &str = "v3";
/// The file in a version's folder that names the generation in use.
const CURRENT: &str = "current";
/// The indexing buffer.
const WRITER_BYTES: usize = 64 * 1024 * 1024;
/// Characters of a snippet.
const SNIPPET_CHARS: usize = 240;
/// Hits a query pages through at most (the collector holds offset + limit hits).
const MAX_OFFSET: usize = 10_000;

/// The languages stemmed, by ISO 639-1 code.
const LANGUAGES: [(&str, Language); 18] = [
    ("ar", Language::Arabic),
    ("da", Language::Danish),
    ("nl", Language::Dutch),
    ("en", Language::English),
    ("fi", Language::Finnish),
    ("fr", Language::French),
    ("de", Language::German),
    ("el", Language::Greek),
    ("hu", Language::Hungarian),
    ("it", Language::Italian),
    ("no", Language::Norwegian),
    ("pt", Language::Portuguese),
    ("ro", Language::Romanian),
    ("ru", Language::Russian),
    ("es", Language::Spanish),
    ("sv", Language::Swedish),
    ("ta", Language::Tamil),
    ("tr", Language::Turkish),
];

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Utterance,
    Highlight,
    Report,
    Insight,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Utterance => "utterance",
            Kind::Highlight => "highlight",
            Kind::Report => "report",
            Kind::Insight => "insight",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Kind::Utterance, Kind::Highlight, Kind::Report, Kind::Insight]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// A document to index.
#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: Kind,
    /// The highlight, report or insight; for an utterance, its record.
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub project_id: Uuid,
    pub record_id: Option<Uuid>,
    pub utterance_id: Option<i64>,
    pub start_ms: Option<i64>,
    pub speaker: Option<String>,
    /// Whether the speaker is a respondent.
    pub is_respondent: bool,
    pub tag_ids: Vec<Uuid>,
    pub title: String,
    pub text: String,
    /// The language code (`en`) of the text, if known.
    pub language: Option<String>,
    pub date: chrono::DateTime<chrono::Utc>,
}

/// What is searched for, and where.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub query: String,
    /// The workspaces the caller may read; nothing outside them is found.
    pub workspace_ids: Vec<Uuid>,
    pub project_id: Option<Uuid>,
    /// Any of these projects (none: no such filter).
    pub project_ids: Vec<Uuid>,
    pub record_id: Option<Uuid>,
    pub tag_id: Option<Uuid>,
    pub speaker: Option<String>,
    pub kind: Option<Kind>,
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    pub to: Option<chrono::DateTime<chrono::Utc>>,
    pub limit: usize,
    pub offset: usize,
    /// Retrieval for chat: the found texts whole, without snippets, and no total (it
    /// answers the number of hits returned).
    pub retrieval: bool,
}

/// One document found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub kind: Kind,
    pub id: Uuid,
    pub project_id: Uuid,
    pub record_id: Option<Uuid>,
    pub utterance_id: Option<i64>,
    pub start_ms: Option<i64>,
    pub speaker: Option<String>,
    pub is_respondent: bool,
    pub title: String,
    /// The whole text found (an utterance's words, a highlight's quote and note...).
    pub text: String,
    /// HTML: the text around the matches, escaped, the matched words in `<mark>`.
    pub snippet: String,
    pub score: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    kind: Field,
    id: Field,
    workspace: Field,
    project: Field,
    record: Field,
    utterance: Field,
    start_ms: Field,
    speaker: Field,
    speaker_key: Field,
    respondent: Field,
    tags: Field,
    date: Field,
    title: Field,
    language: Field,
}

/// Instances that may share one search folder, each with its own index in it.
const SLOTS: usize = 16;

/// The index: its reader for queries, its one writer for changes.
///
/// On disk an instance's index lives in a generation folder of its slot
/// (`slot-N/v3/g7/`), and the slot's `current` file names the one in use: a rebuild
/// writes the next generation beside it and switches when that is complete.
pub struct SearchIndex {
    /// Held while the process lives: the slot of the search folder this index is in.
    _slot: Option<std::sync::Arc<std::fs::File>>,
    /// The version folder and this generation's name, on disk.
    place: Option<(std::path::PathBuf, String)>,
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: Fields,
    /// The text field of each language code, and `""` for text in no known language.
    texts: Vec<(&'static str, Field)>,
}

fn analyzer(language: Option<Language>) -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser);
    match language {
        Some(language) => builder.filter(Stemmer::new(language)).build(),
        None => builder.filter(AsciiFoldingFilter).build(),
    }
}

fn schema() -> (Schema, Fields, Vec<(&'static str, Field)>) {
    let mut builder = Schema::builder();
    let fields = Fields {
        key: builder.add_text_field("key", STRING),
        kind: builder.add_text_field("kind", STRING | STORED),
        id: builder.add_text_field("id", STRING | STORED),
        workspace: builder.add_text_field("workspace", STRING),
        project: builder.add_text_field("project", STRING | STORED),
        record: builder.add_text_field("record", STRING | STORED),
        utterance: builder.add_i64_field("utterance", STORED),
        start_ms: builder.add_i64_field("start_ms", STORED),
        speaker: builder.add_text_field("speaker", STORED),
        speaker_key: builder.add_text_field("speaker_key", STRING),
        respondent: builder.add_i64_field("respondent", STORED),
        tags: builder.add_text_field("tags", STRING),
        date: builder.add_date_field("date", DateOptions::from(INDEXED).set_fast().set_stored()),
        title: builder.add_text_field("title", STORED),
        language: builder.add_text_field("language", STRING | STORED),
    };
    let mut texts = Vec::new();
    let text_field = |name: &str| {
        TextOptions::default().set_stored().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(name)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    texts.push(("", builder.add_text_field("text", text_field("insight_plain"))));
    for (code, _) in LANGUAGES {
        let name = format!("text_{code}");
        texts.push((
            code,
            builder.add_text_field(&name, text_field(&format!("insight_{code}"))),
        ));
    }
    (builder.build(), fields, texts)
}

fn register_analyzers(index: &Index) {
    let manager = index.tokenizers();
    manager.register("insight_plain", analyzer(None));
    for (code, language) in LANGUAGES {
        manager.register(&format!("insight_{code}"), analyzer(Some(language)));
    }
}

/// The text field code for a language tag (`en-GB` → `en`, `nb` → `no`), `""` for none.
fn language_code(language: Option<&str>) -> &'static str {
    let Some(language) = language else { return "" };
    let primary = language.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
    let primary = match primary.as_str() {
        "nb" | "nn" => "no",
        other => other,
    };
    LANGUAGES
        .iter()
        .find(|(code, _)| *code == primary)
        .map_or("", |(code, _)| code)
}

/// Whether a folder's name is a generation's (`g7`).
fn is_generation(name: &str) -> bool {
    name.strip_prefix('g')
        .is_some_and(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

fn term(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::Basic,
    ))
}

/// tantivy keeps times in nanoseconds, which run out in 2262: later (and much earlier)
/// times are clamped, which only a date filter far out could notice.
fn date(at: chrono::DateTime<chrono::Utc>) -> DateTime {
    const LIMIT: i64 = i64::MAX / 1000 - 1;
    DateTime::from_timestamp_micros(at.timestamp_micros().clamp(-LIMIT, LIMIT))
}

/// The key a change replaces documents by: all utterances of a record go together.
pub fn key(kind: Kind, id: Uuid) -> String {
    match kind {
        Kind::Utterance => format!("record:{id}"),
        other => format!("{}:{id}", other.as_str()),
    }
}

impl SearchIndex {
    /// Opens the index under `dir` (made, or made again when of another version or
    /// unreadable); the payload of its last commit says how far it has caught up.
    /// Instances sharing the folder (they share `INSIGHT_DATA_DIR`) each take a slot of
    /// their own, held by a file lock while the process lives, and keep it across restarts.
    pub fn open(dir: &Path) -> anyhow::Result<(Self, Option<String>)> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
        let mut taken = None;
        for slot in 0..SLOTS {
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(format!("slot-{slot}.lock")))
                .with_context(|| format!("cannot make a lock file in {}", dir.display()))?;
            if lock.try_lock().is_ok() {
                taken = Some((slot, lock));
                break;
            }
        }
        let Some((slot, lock)) = taken else {
            anyhow::bail!(
                "all {SLOTS} search index slots in {} are in use by other instances",
                dir.display()
            );
        };
        let slot_dir = dir.join(format!("slot-{slot}"));
        let versions = slot_dir.join(VERSION);
        std::fs::create_dir_all(&versions).with_context(|| format!("cannot make {}", versions.display()))?;
        // Other versions' folders are of no use any more.
        for entry in std::fs::read_dir(&slot_dir).into_iter().flatten().flatten() {
            if entry.file_name() != VERSION {
                std::fs::remove_dir_all(entry.path()).ok();
            }
        }
        let current = std::fs::read_to_string(versions.join(CURRENT))
            .ok()
            .map(|name| name.trim().to_owned())
            .filter(|name| is_generation(name));
        // A generation a rebuild left unfinished (the process ended first) is removed.
        for entry in std::fs::read_dir(&versions).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_generation(&name) && Some(&name) != current.as_ref() {
                std::fs::remove_dir_all(entry.path()).ok();
            }
        }
        let slot = std::sync::Arc::new(lock);
        let (schema, _, _) = schema();
        if let Some(name) = &current {
            let path = versions.join(name);
            let opened = Index::open_in_dir(&path).ok().filter(|index| index.schema() == schema);
            if let Some(index) = opened {
                let payload = index.load_metas().ok().and_then(|metas| metas.payload);
                let index = Self::from_index(index, Some(slot), Some((versions, name.clone())), WRITER_BYTES)?;
                return Ok((index, payload));
            }
            std::fs::remove_dir_all(&path).ok();
        }
        let index = Self::generation(slot, &versions, "g1")?;
        index.make_current()?;
        Ok((index, None))
    }

    /// A new, empty generation of this index in the same slot, to build beside the one in
    /// use; [`SearchIndex::make_current`] then switches to it.
    pub fn beside(&self) -> anyhow::Result<Self> {
        let (Some(slot), Some((versions, name))) = (&self._slot, &self.place) else {
            return Self::in_memory();
        };
        let number: u64 = name.trim_start_matches('g').parse().unwrap_or(0);
        let next = format!("g{}", number + 1);
        std::fs::remove_dir_all(versions.join(&next)).ok();
        Self::generation(slot.clone(), versions, &next)
    }

    fn generation(slot: std::sync::Arc<std::fs::File>, versions: &Path, name: &str) -> anyhow::Result<Self> {
        let path = versions.join(name);
        std::fs::create_dir_all(&path).with_context(|| format!("cannot make {}", path.display()))?;
        let (schema, _, _) = schema();
        let index = Index::create_in_dir(&path, schema).context("cannot make the search index")?;
        Self::from_index(
            index,
            Some(slot),
            Some((versions.to_path_buf(), name.to_owned())),
            WRITER_BYTES,
        )
    }

    fn from_index(
        index: Index,
        slot: Option<std::sync::Arc<std::fs::File>>,
        place: Option<(std::path::PathBuf, String)>,
        writer_bytes: usize,
    ) -> anyhow::Result<Self> {
        let (_, fields, texts) = schema();
        register_analyzers(&index);
        let writer = index
            .writer(writer_bytes)
            .context("cannot open the search index for writing")?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .context("cannot read the search index")?;
        Ok(Self {
            _slot: slot,
            place,
            index,
            reader,
            writer: Mutex::new(writer),
            fields,
            texts,
        })
    }

    /// Makes this generation the one the slot opens from now on (atomically: the name is
    /// written beside and renamed over the old one).
    pub fn make_current(&self) -> anyhow::Result<()> {
        let Some((versions, name)) = &self.place else {
            return Ok(());
        };
        let written = versions.join(format!("{CURRENT}.new"));
        {
            use std::io::Write as _;
            let mut file = std::fs::File::create(&written).context("cannot write the search index's pointer")?;
            file.write_all(name.as_bytes())?;
            file.sync_all()?;
        }
        std::fs::rename(&written, versions.join(CURRENT)).context("cannot switch the search index")?;
        if let Ok(folder) = std::fs::File::open(versions) {
            folder.sync_all().ok();
        }
        Ok(())
    }

    /// Lets go of a generation no longer in use and removes its files, once the merges
    /// its writer began have ended (blocking).
    pub fn retire(self) {
        let place = self.place.clone();
        if let Ok(writer) = self.writer.into_inner() {
            writer.wait_merging_threads().ok();
        }
        drop(self.reader);
        drop(self.index);
        if let Some((versions, name)) = place {
            std::fs::remove_dir_all(versions.join(name)).ok();
        }
    }

    /// An index in memory, for tests.
    pub fn in_memory() -> anyhow::Result<Self> {
        let (schema, _, _) = schema();
        Self::from_index(Index::create_in_ram(schema), None, None, 15_000_000)
    }

    fn text_field(&self, code: &str) -> Field {
        self.texts
            .iter()
            .find(|(known, _)| *known == code)
            .map_or(self.texts[0].1, |(_, field)| *field)
    }

    /// The document an entry is indexed as, in the field of its language.
    fn document(&self, entry: &Entry) -> TantivyDocument {
        let f = self.fields;
        let code = match language_code(entry.language.as_deref()) {
            "" => language_code(crate::engines::search::bm25::guess_language(&entry.text)),
            code => code,
        };
        let mut document = doc!(
            f.key => key(entry.kind, if entry.kind == Kind::Utterance { entry.record_id.unwrap_or(entry.id) } else { entry.id }),
            f.kind => entry.kind.as_str(),
            f.id => entry.id.to_string(),
            f.workspace => entry.workspace_id.to_string(),
            f.project => entry.project_id.to_string(),
            f.date => date(entry.date),
            f.title => entry.title.as_str(),
            f.language => code,
            f.respondent => i64::from(entry.is_respondent),
            self.text_field(code) => entry.text.as_str(),
        );
        if let Some(record) = entry.record_id {
            document.add_text(f.record, record.to_string());
        }
        if let Some(utterance) = entry.utterance_id {
            document.add_i64(f.utterance, utterance);
        }
        if let Some(start_ms) = entry.start_ms {
            document.add_i64(f.start_ms, start_ms);
        }
        if let Some(speaker) = &entry.speaker {
            document.add_text(f.speaker, speaker);
            document.add_text(f.speaker_key, speaker.trim().to_lowercase());
        }
        for tag in &entry.tag_ids {
            document.add_text(f.tags, tag.to_string());
        }
        document
    }

    /// Replaces the documents under each key with `entries`, and commits with `payload`
    /// (blocking: call from a blocking thread).
    pub fn apply(&self, removed: &[String], entries: &[Entry], payload: Option<&str>) -> anyhow::Result<()> {
        let f = self.fields;
        let mut writer = self
            .writer
            .lock()
            .map_err(|_| anyhow::anyhow!("the search writer is poisoned"))?;
        for key in removed {
            writer.delete_term(Term::from_field_text(f.key, key));
        }
        for entry in entries {
            writer.add_document(self.document(entry))?;
        }
        let mut commit = writer.prepare_commit()?;
        if let Some(payload) = payload {
            commit.set_payload(payload);
        }
        commit.commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Adds documents without committing them (a build commits once at its end, so
    /// nobody sees a part of it; blocking).
    pub fn add(&self, entries: &[Entry]) -> anyhow::Result<()> {
        let writer = self
            .writer
            .lock()
            .map_err(|_| anyhow::anyhow!("the search writer is poisoned"))?;
        for entry in entries {
            writer.add_document(self.document(entry))?;
        }
        Ok(())
    }

    /// Rewrites the segments that hold deleted documents without them, and removes the
    /// files they were in (blocking). A deleted or replaced document is only marked as such:
    /// its words stay in its segment's files until a merge rewrites the segment, which after
    /// an erasure or a redaction cannot wait for the merge policy.
    pub fn purge_deleted(&self) -> anyhow::Result<()> {
        const ATTEMPTS: usize = 5;
        let mut writer = self
            .writer
            .lock()
            .map_err(|_| anyhow::anyhow!("the search writer is poisoned"))?;
        for attempt in 1..=ATTEMPTS {
            let holding: Vec<_> = self
                .index
                .searchable_segment_metas()?
                .iter()
                .filter(|segment| segment.has_deletes())
                .map(|segment| segment.id())
                .collect();
            if holding.is_empty() {
                break;
            }
            match writer.merge(&holding).wait() {
                Ok(_) => {}
                // A merge the merge policy began on the same segments ended first: look again.
                Err(_) if attempt < ATTEMPTS => std::thread::sleep(std::time::Duration::from_millis(50)),
                Err(error) => return Err(error).context("cannot rewrite the search index without deleted documents"),
            }
        }
        // The reader lets go of the old segments first: files a searcher holds are kept.
        self.reader.reload()?;
        writer
            .garbage_collect_files()
            .wait()
            .context("cannot remove the search index's old files")?;
        Ok(())
    }

    /// Removes every document (before a build; blocking).
    pub fn clear(&self) -> anyhow::Result<()> {
        let mut writer = self
            .writer
            .lock()
            .map_err(|_| anyhow::anyhow!("the search writer is poisoned"))?;
        writer.delete_all_documents()?;
        writer.commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Documents in the index.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the index takes on disk (0 in memory).
    pub fn disk_bytes(&self) -> u64 {
        self.reader
            .searcher()
            .space_usage()
            .map_or(0, |usage| usage.total().get_bytes())
    }

    /// The documents that match, best first, and how many match in all (blocking).
    pub fn search(&self, request: &Request) -> anyhow::Result<(Vec<Found>, usize)> {
        let f = self.fields;
        if request.workspace_ids.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let searcher = self.reader.searcher();
        // Only the languages some document is in: each other field would cost a lookup per
        // term and segment for nothing.
        let fields: Vec<Field> = self
            .texts
            .iter()
            .map(|(_, field)| *field)
            .filter(|field| {
                searcher.segment_readers().iter().any(|segment| {
                    segment
                        .inverted_index(*field)
                        .is_ok_and(|index| index.terms().num_terms() > 0)
                })
            })
            .collect();
        if fields.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let parser = QueryParser::for_index(&self.index, fields);
        let (text_query, _) = parser.parse_query_lenient(&request.query);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
            (Occur::Must, text_query.box_clone()),
            (
                Occur::Must,
                Box::new(TermSetQuery::new(
                    request
                        .workspace_ids
                        .iter()
                        .map(|id| Term::from_field_text(f.workspace, &id.to_string())),
                )),
            ),
        ];
        if let Some(project) = request.project_id {
            clauses.push((Occur::Must, term(f.project, &project.to_string())));
        }
        if !request.project_ids.is_empty() {
            clauses.push((
                Occur::Must,
                Box::new(TermSetQuery::new(
                    request
                        .project_ids
                        .iter()
                        .map(|id| Term::from_field_text(f.project, &id.to_string())),
                )),
            ));
        }
        if let Some(record) = request.record_id {
            clauses.push((Occur::Must, term(f.record, &record.to_string())));
        }
        if let Some(tag) = request.tag_id {
            clauses.push((Occur::Must, term(f.tags, &tag.to_string())));
        }
        if let Some(speaker) = &request.speaker {
            clauses.push((Occur::Must, term(f.speaker_key, &speaker.trim().to_lowercase())));
        }
        if let Some(kind) = request.kind {
            clauses.push((Occur::Must, term(f.kind, kind.as_str())));
        }
        if request.from.is_some() || request.to.is_some() {
            let lower = request.from.map_or(Bound::Unbounded, |at| {
                Bound::Included(Term::from_field_date(f.date, date(at)))
            });
            let upper = request.to.map_or(Bound::Unbounded, |at| {
                Bound::Excluded(Term::from_field_date(f.date, date(at)))
            });
            clauses.push((Occur::Must, Box::new(RangeQuery::new(lower, upper))));
        }
        let query = BooleanQuery::new(clauses);
        if request.offset > MAX_OFFSET {
            return Ok((Vec::new(), searcher.search(&query, &Count)?));
        }
        let limit = request.limit.max(1);
        let top_docs = TopDocs::with_limit(limit).and_offset(request.offset).order_by_score();
        // Retrieval needs no total: the best hits alone let tantivy skip blocks that cannot
        // make the top.
        let (top, total) = if request.retrieval {
            let top = searcher.search(&query, &top_docs)?;
            let total = top.len();
            (top, total)
        } else {
            searcher.search(&query, &(top_docs, Count))?
        };
        let mut generators: HashMap<Field, SnippetGenerator> = HashMap::new();
        let mut found = Vec::with_capacity(top.len());
        for (score, address) in top {
            let document: TantivyDocument = searcher.doc(address)?;
            let text = |field: Field| {
                document
                    .get_first(field)
                    .and_then(|value| value.as_str())
                    .map(str::to_owned)
            };
            let number = |field: Field| document.get_first(field).and_then(|value| value.as_i64());
            let uuid = |field: Field| text(field).and_then(|id| Uuid::parse_str(&id).ok());
            let Some(kind) = text(f.kind).as_deref().and_then(Kind::parse) else {
                continue;
            };
            let field = self.text_field(&text(f.language).unwrap_or_default());
            let snippet = if request.retrieval {
                String::new()
            } else {
                let generator = match generators.entry(field) {
                    std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                    std::collections::hash_map::Entry::Vacant(entry) => {
                        let mut generator = SnippetGenerator::create(&searcher, &*text_query, field)?;
                        generator.set_max_num_chars(SNIPPET_CHARS);
                        entry.insert(generator)
                    }
                };
                let mut snippet = generator.snippet_from_doc(&document);
                snippet.set_snippet_prefix_postfix("<mark>", "</mark>");
                if snippet.fragment().is_empty() {
                    let whole = text(field).unwrap_or_default();
                    let start: String = whole.chars().take(SNIPPET_CHARS).collect();
                    html_escape(&start)
                } else {
                    snippet.to_html()
                }
            };
            found.push(Found {
                kind,
                id: uuid(f.id).unwrap_or_default(),
                project_id: uuid(f.project).unwrap_or_default(),
                record_id: uuid(f.record),
                utterance_id: number(f.utterance),
                start_ms: number(f.start_ms),
                speaker: text(f.speaker),
                is_respondent: number(f.respondent) == Some(1),
                title: text(f.title).unwrap_or_default(),
                text: text(field).unwrap_or_default(),
                snippet,
                score,
            });
        }
        Ok((found, total))
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utterance(workspace: Uuid, record: Uuid, n: i64, speaker: &str, text: &str, language: Option<&str>) -> Entry {
        Entry {
            kind: Kind::Utterance,
            id: record,
            workspace_id: workspace,
            project_id: workspace,
            record_id: Some(record),
            utterance_id: Some(n),
            start_ms: Some(n * 1000),
            speaker: Some(speaker.to_owned()),
            is_respondent: speaker != "Interviewer",
            tag_ids: Vec::new(),
            title: "Interview".to_owned(),
            text: text.to_owned(),
            language: language.map(str::to_owned),
            date: chrono::Utc::now(),
        }
    }

    fn ask(index: &SearchIndex, workspaces: &[Uuid], query: &str) -> Vec<Found> {
        let request = Request {
            query: query.to_owned(),
            workspace_ids: workspaces.to_vec(),
            limit: 10,
            ..Request::default()
        };
        index.search(&request).expect("search").0
    }

    /// Whether any file under `dir` holds `needle`.
    fn on_disk(dir: &Path, needle: &str) -> bool {
        let mut folders = vec![dir.to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("read the folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let Ok(bytes) = std::fs::read(&path)
                    && bytes.windows(needle.len()).any(|window| window == needle.as_bytes())
                {
                    return true;
                }
            }
        }
        false
    }

    #[test]
    fn a_purge_leaves_no_word_of_deleted_documents_in_the_files() {
        let dir = tempfile::tempdir().expect("dir");
        let (index, _) = SearchIndex::open(dir.path()).expect("index");
        let workspace = Uuid::new_v4();
        let (erased, kept) = (Uuid::new_v4(), Uuid::new_v4());
        let address = "zorblax.quinn@example.org";
        let said = format!("Write to {address} any time.");
        index
            .apply(
                &[],
                &[
                    utterance(workspace, erased, 1, "Zorblax Quinn", &said, Some("en")),
                    utterance(workspace, kept, 1, "Bo", "The invoices arrive late.", Some("en")),
                ],
                None,
            )
            .expect("apply");
        // One segment for both (each indexing thread writes its own): the deletion then
        // leaves a segment that still has a document.
        let segments = index.index.searchable_segment_ids().expect("segments");
        if segments.len() > 1 {
            let mut writer = index.writer.lock().expect("writer");
            writer.merge(&segments).wait().expect("merge");
        }
        index.reader.reload().expect("reload");
        assert!(on_disk(dir.path(), address), "the files hold the words first");
        index.apply(&[key(Kind::Utterance, erased)], &[], None).expect("delete");
        assert!(ask(&index, &[workspace], "write").is_empty());
        assert!(
            on_disk(dir.path(), address),
            "a deletion alone leaves the words in the segment"
        );
        index.purge_deleted().expect("purge");
        for gone in [address, "Zorblax Quinn", "zorblax quinn"] {
            assert!(!on_disk(dir.path(), gone), "{gone} is still in the files");
        }
        assert_eq!(ask(&index, &[workspace], "invoices").len(), 1, "the rest is found");
    }

    #[test]
    fn a_generation_built_beside_is_opened_after_the_switch_and_the_old_one_removed() {
        let dir = tempfile::tempdir().expect("dir");
        let workspace = Uuid::new_v4();
        let versions = dir.path().join("slot-0").join(VERSION);
        {
            let (first, payload) = SearchIndex::open(dir.path()).expect("index");
            assert_eq!(payload, None, "a new index has caught up with nothing");
            first
                .apply(
                    &[],
                    &[utterance(
                        workspace,
                        Uuid::new_v4(),
                        1,
                        "Bo",
                        "Invoices arrive late.",
                        Some("en"),
                    )],
                    Some("1"),
                )
                .expect("apply");
            let second = first.beside().expect("beside");
            second
                .apply(
                    &[],
                    &[utterance(
                        workspace,
                        Uuid::new_v4(),
                        1,
                        "Bo",
                        "Exports fail at night.",
                        Some("en"),
                    )],
                    Some("2"),
                )
                .expect("apply");
            assert_eq!(
                ask(&first, &[workspace], "invoices").len(),
                1,
                "the one in use answers meanwhile"
            );
            assert!(ask(&first, &[workspace], "exports").is_empty());
            second.make_current().expect("switch");
            first.retire();
            assert!(!versions.join("g1").exists(), "the old generation's files are removed");
            drop(second);
        }
        // A start after the switch opens the new generation, and removes one a build left.
        std::fs::create_dir_all(versions.join("g3")).expect("an unfinished build");
        std::fs::create_dir_all(dir.path().join("slot-0").join("v2")).expect("an older version");
        let (index, payload) = SearchIndex::open(dir.path()).expect("reopen");
        assert_eq!(payload.as_deref(), Some("2"));
        assert_eq!(ask(&index, &[workspace], "exports").len(), 1);
        assert!(ask(&index, &[workspace], "invoices").is_empty());
        assert!(!versions.join("g3").exists(), "the unfinished build is removed");
        assert!(
            !dir.path().join("slot-0").join("v2").exists(),
            "the older version is removed"
        );
    }

    #[test]
    fn stems_per_language_keeps_phrases_marks_matches_and_keeps_workspaces_apart() {
        let index = SearchIndex::in_memory().expect("index");
        let (ours, theirs) = (Uuid::new_v4(), Uuid::new_v4());
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        index
            .apply(
                &[],
                &[
                    utterance(
                        ours,
                        a,
                        1,
                        "Anna",
                        "The pricing is not happy <b>making</b> us.",
                        Some("en"),
                    ),
                    utterance(
                        ours,
                        a,
                        2,
                        "Anna",
                        "We are happy, not with the prices though.",
                        Some("en"),
                    ),
                    utterance(ours, b, 1, "Jens", "Die Preise sind zu hoch für uns.", None),
                    utterance(theirs, c, 1, "Eve", "Pricing is fine for us.", Some("en")),
                ],
                Some("7"),
            )
            .expect("apply");
        let prices = ask(&index, &[ours], "price");
        assert_eq!(prices.len(), 2, "stemmed: pricing, prices: {prices:?}");
        assert!(prices.iter().all(|hit| hit.record_id == Some(a)));
        let phrase = ask(&index, &[ours], "\"not happy\"");
        assert_eq!(phrase.len(), 1, "{phrase:?}");
        assert_eq!(phrase[0].utterance_id, Some(1));
        assert!(
            phrase[0].snippet.contains("<mark>not</mark> <mark>happy</mark>"),
            "{}",
            phrase[0].snippet
        );
        assert!(
            phrase[0].snippet.contains("&lt;b&gt;"),
            "the text is escaped: {}",
            phrase[0].snippet
        );
        // German guessed from its words, and stemmed as German.
        let german = ask(&index, &[ours], "Preis");
        assert_eq!(german.len(), 1, "{german:?}");
        assert_eq!(german[0].speaker.as_deref(), Some("Jens"));
        // The other workspace's text is never found, and no workspace finds nothing.
        assert!(ask(&index, &[ours], "fine").is_empty());
        assert_eq!(ask(&index, &[theirs], "pricing").len(), 1);
        assert!(ask(&index, &[], "pricing").is_empty());
        // Replacing a record's documents by its key.
        index.apply(&[key(Kind::Utterance, a)], &[], None).expect("remove");
        assert!(ask(&index, &[ours], "price").is_empty());
    }
}
