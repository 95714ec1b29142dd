//! Conversations: chat about one record ("Chat message" in the interface document) and
//! the research assistant across a project. Threads have integer ids; messages are kept
//! in order with the citations of each answer.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::patch::Patch;

super::string_enum! {
    /// What an answer draws on: the record's transcript, the project's reports that
    /// cover it, or both.
    SearchScope { All = "all", Transcript = "transcript", Report = "report" }
}

super::string_enum! {
    /// Who wrote a message.
    MessageType { User = "user", Assistant = "assistant" }
}

super::string_enum! {
    /// How much effort the research assistant spends: `thinking` asks the model to
    /// reason at length.
    AgentMode { Fast = "fast", Thinking = "thinking" }
}

/// Where a thread belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadKind {
    /// Chat about one record.
    Record,
    /// The research assistant.
    Agent,
}

impl ThreadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Record => "record",
            Self::Agent => "agent",
        }
    }
}

/// How a chat answer searches.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SearchSettings {
    /// Whether web search is used for the answer (needs `INSIGHT_SEARCH_PROVIDER`; 503
    /// without). Default false.
    #[serde(default)]
    #[schema(required = false, default = false)]
    pub use_web: bool,
    /// Default `all`.
    #[serde(default)]
    #[schema(required = false, nullable = false)]
    pub search_scope: Option<SearchScope>,
}

/// A question about a record (spec operation 2).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ChatMessageCreate {
    #[serde(default)]
    #[schema(required = false)]
    pub search_settings: Option<SearchSettings>,
    #[schema(min_length = 1, max_length = 20000)]
    pub message: String,
    /// The thread to continue; none starts a new one.
    #[serde(default)]
    #[schema(required = false, minimum = 1, maximum = 9_007_199_254_740_991_f64)]
    pub thread_id: Option<i64>,
}

/// A record chat thread's new name.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ThreadRename {
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
}

/// A question to the research assistant.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct AgentChatCreate {
    #[schema(min_length = 1, max_length = 20000)]
    pub message: String,
    /// The thread to continue; none starts a new one.
    #[serde(default)]
    #[schema(required = false, minimum = 1, maximum = 9_007_199_254_740_991_f64)]
    pub thread_id: Option<i64>,
    /// The project to answer about; for a new thread, or to point a thread at another
    /// project. Default: the thread's project.
    #[serde(default)]
    #[schema(required = false)]
    pub project_id: Option<Uuid>,
    /// Answer across these projects (of any of the user's workspaces) instead of one.
    #[serde(default)]
    #[schema(required = false, nullable = false, max_items = 100)]
    pub project_ids: Option<Vec<Uuid>>,
    /// Answer across every project of this workspace (with `project_ids`: those of them in
    /// it).
    #[serde(default)]
    #[schema(required = false, nullable = false)]
    pub workspace_id: Option<Uuid>,
    /// Default `fast`.
    #[serde(default)]
    #[schema(required = false, nullable = false)]
    pub reasoning_mode: Option<AgentMode>,
}

/// A new research assistant thread.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct AgentThreadCreate {
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 200)]
    pub title: Option<String>,
    #[serde(default)]
    #[schema(required = false)]
    pub project_id: Option<Uuid>,
}

/// Changes to a research assistant thread: a field left out stays as it is.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct AgentThreadUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 200)]
    pub title: Patch<String>,
    /// `null` detaches the thread from its project. (`format: uuid` only annotates in
    /// JSON Schema, so the pattern says that `""` is no id.)
    #[serde(default)]
    #[schema(
        value_type = Option<Uuid>,
        required = false,
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    pub project_id: Patch<Uuid>,
}

/// A passage of a record an answer rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UtteranceCitation {
    pub utterance_id: i64,
    pub start_ms: Option<i64>,
    pub speaker: String,
    /// The utterance's words.
    pub quote: String,
}

/// A passage of one of a project's records (research assistant answers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RecordCitation {
    pub record_id: Uuid,
    pub record_name: String,
    pub utterance_id: i64,
    pub start_ms: Option<i64>,
    pub speaker: String,
    pub quote: String,
}

/// A web page an answer rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WebCitation {
    pub url: String,
    pub title: String,
}

/// What an answer cites; `kind` tells which (`utterance`, `record` or `web`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Citation {
    Record(RecordCitation),
    Utterance(UtteranceCitation),
    Web(WebCitation),
}

/// Citations are read back from the database, where those stored before they had a
/// `kind` are told apart by their fields.
impl<'de> Deserialize<'de> for Citation {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let has = |field: &str| value.get(field).is_some();
        if has("record_id") {
            serde_json::from_value(value)
                .map(Citation::Record)
                .map_err(D::Error::custom)
        } else if has("utterance_id") {
            serde_json::from_value(value)
                .map(Citation::Utterance)
                .map_err(D::Error::custom)
        } else {
            serde_json::from_value(value)
                .map(Citation::Web)
                .map_err(D::Error::custom)
        }
    }
}

/// One message of a thread. A chat answer is the `assistant` message.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ChatMessage {
    pub id: Uuid,
    pub message_type: MessageType,
    /// Markdown. An answer cites its passages as `[record name, mm:ss]` and web pages
    /// as links; every quoted sentence is in the transcript.
    pub content: String,
    pub created_at: DateTime<Utc>,
    pub thread_id: i64,
    pub citations: Vec<Citation>,
    /// What wrote an answer (left out of questions, and of answers written before it was
    /// kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub provenance: Option<crate::domain::usage::Provenance>,
}

/// A conversation.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ChatThread {
    pub id: i64,
    /// The record a record chat is about (left out for the research assistant).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub record_id: Option<Uuid>,
    /// The project the research assistant answers about (left out when it has none, and
    /// for a record chat).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub project_id: Option<Uuid>,
    /// The first question, shortened, unless renamed.
    pub title: String,
    pub messages_count: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A thread's messages, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ChatHistory {
    /// Left out when the record has no thread yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub thread_id: Option<i64>,
    pub messages: Vec<ChatMessage>,
}

/// A thread's title from its first question: its first line, at most 80 characters.
pub fn thread_title(question: &str) -> String {
    let line = question.trim().lines().next().unwrap_or("").trim();
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title = title.trim_end().to_owned();
        title.push('…');
    }
    if title.is_empty() { "New chat".to_owned() } else { title }
}
