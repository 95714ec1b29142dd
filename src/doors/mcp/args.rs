//! The MCP tools' arguments: their JSON Schemas are what an assistant sees of each tool.

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;
use uuid::Uuid;

use crate::engines::search::index::Kind;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProjectArgs {
    /// The project's id (from list_projects).
    #[schemars(with = "String")]
    pub project_id: Uuid,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportListArgs {
    /// The project's id (from list_projects).
    #[schemars(with = "String")]
    pub project_id: Uuid,
    /// Include archived reports. Default false.
    #[serde(default)]
    pub include_archived: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecordArgs {
    /// The record's id (from list_records or search).
    #[schemars(with = "String")]
    pub record_id: Uuid,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportArgs {
    #[schemars(with = "String")]
    pub project_id: Uuid,
    /// The report's id (from list_reports).
    #[schemars(with = "String")]
    pub report_id: Uuid,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words and "quoted phrases"; -word leaves out, OR widens. Words match in the
    /// material's language (pricing finds prices).
    pub query: String,
    /// Only this workspace.
    #[schemars(with = "Option<String>")]
    pub workspace_id: Option<Uuid>,
    /// Only this project.
    #[schemars(with = "Option<String>")]
    pub project_id: Option<Uuid>,
    /// Only this record.
    #[schemars(with = "Option<String>")]
    pub record_id: Option<Uuid>,
    /// Only what this speaker said.
    pub speaker: Option<String>,
    /// Only hits of this kind.
    pub kind: Option<HitKindArg>,
    /// How many hits, best first: 1 to 100, default 20.
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskArgs {
    /// The project to answer from.
    #[schemars(with = "String")]
    pub project_id: Uuid,
    /// The question, as a researcher would ask it.
    pub question: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateReportArgs {
    #[schemars(with = "String")]
    pub project_id: Uuid,
    /// The report's title.
    pub title: String,
    /// A preset (from list_presets) whose prompts write the report. Give this,
    /// prompts_ids, or both.
    #[schemars(with = "Option<String>")]
    pub preset_id: Option<Uuid>,
    /// Prompts to run instead of (or before) the preset's.
    #[schemars(with = "Option<Vec<String>>")]
    pub prompts_ids: Option<Vec<Uuid>>,
    /// The records to write from; left out, every record of the project.
    #[schemars(with = "Option<Vec<String>>")]
    pub records_ids: Option<Vec<Uuid>>,
    /// ISO 639-1 code of the report's language, e.g. en.
    pub report_language: Option<String>,
    /// How long to wait for the report to be written, in seconds (0 to 600, default
    /// 120). A report still being written is answered as it stands.
    pub wait_seconds: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct HighlightArgs {
    /// The record (from list_records or search).
    #[schemars(with = "String")]
    pub record_id: Uuid,
    /// The utterance the highlight starts in (an id read_transcript gives).
    pub utterance_id: i64,
    /// The exact words quoted from that utterance; left out, the whole utterance.
    pub quote: Option<String>,
    /// To quote several utterances whole: the last of them (the quote is then left out).
    pub through_utterance_id: Option<i64>,
    /// Tags of the record's workspace to file the highlight under (from list_tags).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub tag_ids: Vec<Uuid>,
    /// A note on the highlight.
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WorkspaceArgs {
    /// The workspace (each project names its workspace_id).
    #[schemars(with = "String")]
    pub workspace_id: Uuid,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HitKindArg {
    Utterance,
    Highlight,
    Report,
    Insight,
}

impl HitKindArg {
    pub fn kind(self) -> Kind {
        match self {
            Self::Utterance => Kind::Utterance,
            Self::Highlight => Kind::Highlight,
            Self::Report => Kind::Report,
            Self::Insight => Kind::Insight,
        }
    }
}
