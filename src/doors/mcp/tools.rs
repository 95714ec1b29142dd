//! The MCP tools: each takes its arguments, calls the use case the JSON API calls for the
//! same thing, and answers structured JSON (with the same JSON as text, for clients
//! that read only text). Refusals are tool errors carrying the API's sentence.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde_json::{Value, json};
use uuid::Uuid;

use super::args::*;
use super::{Caller, Insight, caller_of, refused};
use crate::app::research::search::Query;
use crate::domain::conversation::AgentChatCreate;
use crate::domain::highlight::{Anchor, HighlightCreate};
use crate::domain::paging::PageRequest;
use crate::domain::report::ReportCreateFields;
use crate::error::{Error, Result};

type ToolResult = Result<CallToolResult, ErrorData>;

/// How long `create_report` waits for the report by default, and at most.
const WAIT_DEFAULT_SECONDS: u64 = 120;
const WAIT_MOST_SECONDS: u64 = 600;

#[tool_router(vis = "pub(super)")]
impl Insight {
    #[tool(
        description = "List the projects the user can see, across their workspaces.",
        annotations(read_only_hint = true)
    )]
    async fn list_projects(&self, context: RequestContext<RoleServer>) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        let projects = crate::app::projects::list(&self.services, &caller).await;
        answer(projects.map(|projects| json!({ "projects": projects })))
    }

    #[tool(
        description = "List a project's records (interview transcripts and notes), newest first.",
        annotations(read_only_hint = true)
    )]
    async fn list_records(
        &self,
        Parameters(args): Parameters<ProjectArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.records(caller, args.project_id).await)
    }

    #[tool(
        description = "Read a record's transcript: each utterance with its id, speaker, times and text, and a link to each moment in the console.",
        annotations(read_only_hint = true)
    )]
    async fn read_transcript(
        &self,
        Parameters(args): Parameters<RecordArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.transcript(caller, args.record_id).await)
    }

    #[tool(
        description = "Search everything the user can read: transcripts (each utterance), highlights, reports and insights. Each hit links to the exact moment.",
        annotations(read_only_hint = true)
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.find(caller, args).await)
    }

    #[tool(
        description = "Ask a question about a project: answered from its transcripts and reports, citing the moments it quotes. The question and answer are kept as a research assistant thread.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn ask_project(
        &self,
        Parameters(args): Parameters<AskArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.ask(caller, args).await)
    }

    #[tool(
        description = "List a project's reports, newest first, with their status.",
        annotations(read_only_hint = true)
    )]
    async fn list_reports(
        &self,
        Parameters(args): Parameters<ReportListArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.reports(caller, args).await)
    }

    #[tool(
        description = "Read a report: its Markdown content (findings cite their sources as [record name, mm:ss]) and status.",
        annotations(read_only_hint = true)
    )]
    async fn read_report(
        &self,
        Parameters(args): Parameters<ReportArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.report(caller, args.project_id, args.report_id).await)
    }

    #[tool(
        description = "List the report presets the user can use (system presets first), each with its prompts.",
        annotations(read_only_hint = true)
    )]
    async fn list_presets(&self, context: RequestContext<RoleServer>) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        let presets = crate::app::library::presets(&self.services.store, &caller, &PageRequest::everything()).await;
        answer(presets.map(|page| json!({ "presets": page.items })))
    }

    #[tool(
        description = "List a workspace's tags, for filing highlights.",
        annotations(read_only_hint = true)
    )]
    async fn list_tags(
        &self,
        Parameters(args): Parameters<WorkspaceArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.tags(caller, args.workspace_id).await)
    }

    #[tool(
        description = "Create a report of a project from a preset (or prompts) and wait until it is written; answers the report with its Markdown. Needs a token with scope write.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn create_report(
        &self,
        Parameters(args): Parameters<CreateReportArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.write_report(caller, args, &context).await)
    }

    #[tool(
        description = "Add a highlight to a record: a quote of an utterance (or several whole utterances), optionally filed under tags and with a note. Needs a token with scope write.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn add_highlight(
        &self,
        Parameters(args): Parameters<HighlightArgs>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let caller = caller_of(&context.extensions)?;
        answer(self.highlight(caller, args).await)
    }
}

impl Insight {
    /// The console's address of a path, for an assistant to cite.
    fn link(&self, path: &str) -> String {
        format!(
            "{}{path}",
            self.services.settings.server.public_url.trim_end_matches('/')
        )
    }

    async fn records(&self, caller: Caller, project_id: Uuid) -> Result<Value> {
        let records = crate::app::records::list(&self.services, &caller, project_id, &PageRequest::everything())
            .await?
            .items;
        Ok(json!({ "records": records }))
    }

    async fn transcript(&self, caller: Caller, record_id: Uuid) -> Result<Value> {
        let detail = crate::app::records::detail(&self.services.store, &caller, record_id).await?;
        let mut value = serde_json::to_value(&detail).map_err(anyhow::Error::from)?;
        if let Some(utterances) = value.get_mut("utterances").and_then(Value::as_array_mut) {
            for utterance in utterances {
                if let Some(id) = utterance.get("id").and_then(Value::as_i64) {
                    let url = self.link(&crate::domain::search::moment_path(record_id, id));
                    utterance["url"] = json!(url);
                }
            }
        }
        value["url"] = json!(self.link(&format!("/r/{record_id}")));
        Ok(value)
    }

    async fn find(&self, caller: Caller, args: SearchArgs) -> Result<Value> {
        let query = Query {
            q: args.query,
            workspace_id: args.workspace_id,
            project_id: args.project_id,
            record_id: args.record_id,
            tag_id: None,
            speaker: args.speaker,
            kind: args.kind.map(HitKindArg::kind),
            from: None,
            to: None,
        };
        let page = PageRequest {
            limit: args.limit.unwrap_or(20).clamp(1, 100) as usize,
            after: None,
        };
        let (mut results, _) = crate::app::research::search::search(&self.services, &caller, query, &page).await?;
        for hit in &mut results.hits {
            hit.url = self.link(&hit.url);
        }
        Ok(serde_json::to_value(results).map_err(anyhow::Error::from)?)
    }

    async fn ask(&self, caller: Caller, args: AskArgs) -> Result<Value> {
        let body = AgentChatCreate {
            message: args.question,
            thread_id: None,
            project_id: Some(args.project_id),
            project_ids: None,
            workspace_id: None,
            reasoning_mode: None,
        };
        let message = crate::app::conversation::assistant::ask(&self.services, &caller, body)
            .await?
            .finish()
            .await?;
        Ok(json!({
            "answer": message.content,
            "citations": message.citations,
            "thread_id": message.thread_id,
        }))
    }

    async fn reports(&self, caller: Caller, args: ReportListArgs) -> Result<Value> {
        let reports = crate::app::reports::list(
            &self.services,
            &caller,
            args.project_id,
            args.include_archived,
            &PageRequest::everything(),
        )
        .await?
        .items;
        Ok(json!({ "reports": reports }))
    }

    async fn report(&self, caller: Caller, project_id: Uuid, report_id: Uuid) -> Result<Value> {
        let report = crate::app::reports::get(&self.services, &caller, project_id, report_id).await?;
        let mut value = serde_json::to_value(report).map_err(anyhow::Error::from)?;
        value["url"] = json!(self.link(&format!("/p/{project_id}/reports/{report_id}")));
        Ok(value)
    }

    async fn tags(&self, caller: Caller, workspace_id: Uuid) -> Result<Value> {
        let tags = crate::app::research::tags::list(&self.services.store, &caller, workspace_id).await?;
        Ok(json!({ "tags": tags }))
    }

    async fn write_report(
        &self,
        caller: Caller,
        args: CreateReportArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value> {
        let fields = ReportCreateFields {
            title: args.title,
            prompts_ids: args.prompts_ids,
            preset_id: args.preset_id,
            records_ids: args.records_ids,
            category: None,
            context: None,
            context_expand: None,
            report_language: args.report_language,
            reasoning_mode: None,
        };
        let project_id = args.project_id;
        let created = crate::app::reports::create(&self.services, &caller, project_id, fields).await?;
        let wait = Duration::from_secs(args.wait_seconds.unwrap_or(WAIT_DEFAULT_SECONDS).min(WAIT_MOST_SECONDS));
        let deadline = tokio::time::Instant::now() + wait;
        let progress_token = context.meta.get_progress_token();
        // Progress is told to a client that asked for it; one that stopped listening still
        // gets the report at the end, and one that went away (or a server stopping) ends the
        // wait while the report is written all the same.
        let (peer, progress_token) = (context.peer.clone(), progress_token.clone());
        let progress = move |generation: crate::domain::report::Generation| {
            let (peer, progress_token) = (peer.clone(), progress_token.clone());
            async move {
                if let Some(token) = progress_token {
                    let note = ProgressNotificationParam::new(token, generation.progress)
                        .with_total(1.0)
                        .with_message(format!(
                            "{} ({:.0}% written)",
                            generation.status.as_str(),
                            generation.progress * 100.0
                        ));
                    let _ = peer.notify_progress(note).await;
                }
            }
        };
        crate::app::reports::wait(
            &self.services,
            &caller,
            project_id,
            created.id,
            deadline,
            progress,
            context.ct.cancelled(),
        )
        .await?;
        self.report(caller, project_id, created.id).await
    }

    async fn highlight(&self, caller: Caller, args: HighlightArgs) -> Result<Value> {
        let store = &self.services.store;
        let detail = crate::app::records::detail(store, &caller, args.record_id).await?;
        let utterance = |id: i64| {
            detail
                .utterances
                .iter()
                .find(|utterance| utterance.id == id)
                .ok_or_else(|| Error::conflict(format!("The record has no utterance {id}; read_transcript lists them")))
        };
        let first = utterance(args.utterance_id)?;
        let (start, end) = match (args.through_utterance_id, args.quote.as_deref().map(str::trim)) {
            (Some(last), _) => {
                let last = utterance(last)?;
                (0, (last.id, last.text.chars().count()))
            }
            (None, Some(quote)) if !quote.is_empty() => {
                let at = first.text.find(quote).ok_or_else(|| {
                    Error::conflict(format!(
                        "Utterance {} does not say {quote:?}; quote its words exactly",
                        first.id
                    ))
                })?;
                let offset = first.text[..at].chars().count();
                (offset, (first.id, offset + quote.chars().count()))
            }
            (None, _) => (0, (first.id, first.text.chars().count())),
        };
        let body = HighlightCreate {
            start: Anchor {
                utterance_id: first.id,
                offset: start as i64,
            },
            end: Anchor {
                utterance_id: end.0,
                offset: end.1 as i64,
            },
            tag_ids: args.tag_ids,
            note: args.note,
        };
        let highlight = crate::app::research::highlights::create(store, &caller, args.record_id, body).await?;
        let mut value = serde_json::to_value(highlight).map_err(anyhow::Error::from)?;
        value["url"] = json!(self.link(&crate::domain::search::moment_path(args.record_id, first.id)));
        Ok(value)
    }
}

fn answer(result: Result<Value>) -> ToolResult {
    Ok(match result {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => refused(error),
    })
}
