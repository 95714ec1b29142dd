//! The role matrix: every operation of the API document (so every route of the router),
//! called by the owner, an admin, a researcher and a viewer of a workspace, by a member
//! of another workspace and by no one, each answered as its rule says. An operation
//! without a rule fails the test, so a new route cannot skip this.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, eventually};

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    /// No credentials needed (sign-in, the respondent's join flow, public views, probes).
    Public,
    /// Anyone signed in: it concerns his own things or lists what he can see.
    Signed,
    /// Members of the object's workspace.
    Read,
    /// Like `Read`, but the object is named in the body: an outsider gets 409 (the
    /// reference is unknown), not 404.
    ReadNamed,
    /// Researchers, admins and owners; viewers get 403.
    Write,
    /// Like `Write`, for an object its body names: an outsider gets 409.
    WriteNamed,
    /// Like `Manage`, for a workspace its body names: an outsider gets 409.
    ManageNamed,
    /// Admins and owners; researchers and viewers get 403.
    Manage,
    /// Owners only; everyone else in the workspace gets 403.
    OwnerOnly,
    /// The caller's own thing (a chat thread, a session, a token): the owner's here.
    Own,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Who {
    Owner,
    Admin,
    Researcher,
    Viewer,
    Outsider,
    Anonymous,
}

const EVERYONE: [Who; 6] = [
    Who::Outsider,
    Who::Anonymous,
    Who::Viewer,
    Who::Researcher,
    Who::Admin,
    Who::Owner,
];

#[derive(Debug, PartialEq)]
enum Expect {
    Allowed,
    Forbidden,
    NotFound,
    Conflict,
    Unauthorized,
}

fn expect(rule: Rule, who: Who) -> Expect {
    use Who::*;
    if who == Anonymous {
        return Expect::Unauthorized;
    }
    let in_workspace = matches!(who, Owner | Admin | Researcher | Viewer);
    match rule {
        Rule::Public | Rule::Signed => Expect::Allowed,
        Rule::Own => {
            if who == Owner {
                Expect::Allowed
            } else {
                Expect::NotFound
            }
        }
        _ if !in_workspace => {
            if matches!(rule, Rule::ReadNamed | Rule::WriteNamed | Rule::ManageNamed) {
                Expect::Conflict
            } else {
                Expect::NotFound
            }
        }
        Rule::Read | Rule::ReadNamed => Expect::Allowed,
        Rule::Write | Rule::WriteNamed => {
            if who == Viewer {
                Expect::Forbidden
            } else {
                Expect::Allowed
            }
        }
        Rule::Manage | Rule::ManageNamed => {
            if matches!(who, Owner | Admin) {
                Expect::Allowed
            } else {
                Expect::Forbidden
            }
        }
        Rule::OwnerOnly => {
            if who == Owner {
                Expect::Allowed
            } else {
                Expect::Forbidden
            }
        }
    }
}

/// The objects the calls name, all in the owner's team workspace.
struct Fixture {
    workspace: String,
    project: String,
    record: String,
    /// An utterance of the record.
    utterance: String,
    report: String,
    prompt: String,
    preset: String,
    room: String,
    endpoint: String,
    /// A delivery of the endpoint (of the record's `record.finished`).
    delivery: String,
    invitation: String,
    /// A member the calls change (a viewer).
    member: String,
    /// The owner's assistant thread, and his chat thread about the record.
    thread: String,
    record_thread: String,
    /// A tag of the workspace, and another to merge it into.
    tag: String,
    other_tag: String,
    /// A highlight of the record (tagged), and an insight citing it.
    highlight: String,
    insight: String,
    /// A theme proposed for two untagged highlights.
    theme: String,
    /// The owner's session and one of his tokens (not the one the test uses).
    session: String,
    token: String,
}

async fn created(app: &TestApp, user: &TestUser, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(path, user, body).await;
    assert!(status.is_success(), "{path}: {status} {answer}");
    answer
}

async fn fixture(app: &TestApp, owner: &TestUser, workspace: &str, member: &TestUser) -> Fixture {
    let project = created(
        app,
        owner,
        "/projects/",
        json!({ "name": "Pricing", "workspace_id": workspace }),
    )
    .await["id"]
        .as_str()
        .expect("project")
        .to_owned();
    // Before the record, so that its `record.finished` is a delivery to this endpoint
    // (refused at once: nothing listens on port 9).
    let endpoint = created(
        app,
        owner,
        "/webhooks/endpoints",
        json!({ "url": "http://127.0.0.1:9/hooks", "workspace_id": workspace }),
    )
    .await["id"]
        .as_str()
        .expect("endpoint")
        .to_owned();
    let text = "Interviewer: How do you find the price?\nAnna: Too high for what we get. The price tiers confuse us.";
    let record = created(
        app,
        owner,
        &format!("/projects/{project}/records"),
        json!({ "title": "Anna", "text": text }),
    )
    .await["id"]
        .as_str()
        .expect("record")
        .to_owned();
    let utterance = app.wait_finished(owner, &record).await["utterances"][1]["id"]
        .as_i64()
        .expect("utterance id")
        .to_string();
    let (_, deliveries) = app
        .get(&format!("/webhooks/endpoints/{endpoint}/deliveries"), owner)
        .await;
    let delivery = deliveries[0]["id"].as_str().expect("a delivery").to_owned();
    let prompt = created(
        app,
        owner,
        "/prompts/",
        json!({ "title": "Pains", "text": "List the pains.", "workspace_id": workspace }),
    )
    .await["id"]
        .as_str()
        .expect("prompt")
        .to_owned();
    let preset = created(
        app,
        owner,
        "/presets/",
        json!({ "title": "Ours", "prompt_ids": [prompt], "workspace_id": workspace }),
    )
    .await["id"]
        .as_str()
        .expect("preset")
        .to_owned();
    let report = created(
        app,
        owner,
        &format!("/projects/{project}/reports"),
        json!({ "title": "Findings", "prompts_ids": [prompt] }),
    )
    .await["id"]
        .as_str()
        .expect("report")
        .to_owned();
    let room = created(app, owner, "/api/interviews/rooms", json!({ "project_id": project })).await["rooms"][0]["id"]
        .as_str()
        .expect("room")
        .to_owned();
    let invitation = created(
        app,
        owner,
        &format!("/workspaces/{workspace}/invitations"),
        json!({ "email": format!("guest-{}@example.org", uuid::Uuid::new_v4().simple()), "role": "viewer" }),
    )
    .await["id"]
        .as_str()
        .expect("invitation")
        .to_owned();
    let thread = created(app, owner, "/agent/threads", json!({ "project_id": project })).await["id"].clone();
    let thread = thread.as_i64().map(|id| id.to_string()).expect("thread id");
    let record_thread = created(app, owner, &format!("/insight/{record}/chat/new-thread/"), json!({})).await["id"]
        .as_i64()
        .map(|id| id.to_string())
        .expect("record thread id");
    let (session, _) = app
        .store
        .start_session(insight::store::SessionStart {
            user_id: owner.id,
            lifetime: chrono::Duration::hours(1),
            ip: None,
            user_agent: Some("matrix"),
            method: "password",
        })
        .await
        .expect("session");
    let token = created(app, owner, "/me/tokens", json!({ "name": "spare", "scope": "read" })).await["id"]
        .as_str()
        .expect("token")
        .to_owned();
    let tag = created(
        app,
        owner,
        &format!("/workspaces/{workspace}/tags"),
        json!({ "name": format!("Pricing {}", uuid::Uuid::new_v4().simple()) }),
    )
    .await["id"]
        .as_str()
        .expect("tag")
        .to_owned();
    let other_tag = created(
        app,
        owner,
        &format!("/workspaces/{workspace}/tags"),
        json!({ "name": format!("Cost {}", uuid::Uuid::new_v4().simple()) }),
    )
    .await["id"]
        .as_str()
        .expect("tag")
        .to_owned();
    let highlight = created(
        app,
        owner,
        &format!("/insight/{record}/highlights"),
        json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 8 }, "tag_ids": [tag] }),
    )
    .await["id"]
        .as_str()
        .expect("highlight")
        .to_owned();
    let insight = created(
        app,
        owner,
        &format!("/projects/{project}/insights"),
        json!({ "title": "The price is the pain", "highlight_ids": [highlight] }),
    )
    .await["id"]
        .as_str()
        .expect("insight")
        .to_owned();
    // Two untagged highlights that share words, grouped into a proposed theme.
    for (from, to) in [(26, 53), (30, 41)] {
        created(
            app,
            owner,
            &format!("/insight/{record}/highlights"),
            json!({ "start": { "utterance_id": 2, "offset": from }, "end": { "utterance_id": 2, "offset": to } }),
        )
        .await;
    }
    created(app, owner, &format!("/projects/{project}/highlights/themes"), json!({})).await;
    let theme = eventually(Duration::from_secs(10), "no proposed theme", async || {
        let (_, proposals) = app.get(&format!("/projects/{project}/themes"), owner).await;
        proposals[0]["id"].as_str().map(str::to_owned).ok_or(proposals)
    })
    .await;
    Fixture {
        theme,
        workspace: workspace.to_owned(),
        project,
        record,
        utterance,
        report,
        prompt,
        preset,
        room,
        endpoint,
        delivery,
        invitation,
        member: member.id.to_string(),
        thread,
        record_thread,
        tag,
        other_tag,
        highlight,
        insight,
        session: session.to_string(),
        token,
    }
}

/// The rule of an operation, and the body its call sends.
fn rule(method: &Method, path: &str, f: &Fixture) -> Option<(Rule, Option<Value>)> {
    use Rule::*;
    let m = method.as_str();
    let r = |rule| Some((rule, None));
    let b = |rule, body: Value| Some((rule, Some(body)));
    match (m, path) {
        (_, "/healthz" | "/readyz" | "/metrics") => r(Public),
        (_, p) if p.starts_with("/api/interviews/join/") => r(Public),
        ("GET", "/api/interviews/agent-config/{room_id}") => r(Public),
        ("POST", "/api/interviews/session-report") => r(Public),
        ("POST", p) if p.starts_with("/api/webhooks/") => r(Public),
        ("GET", "/insight/public/{rec_id}/persona-report") => r(Public),
        ("GET", "/projects/public/{project_id}/reports/{report_id}") => r(Public),
        ("POST", "/auth/login" | "/auth/signup" | "/auth/password-reset" | "/auth/password-reset/confirm") => r(Public),
        ("GET", "/auth/oidc/login" | "/auth/oidc/callback") => r(Public),
        ("POST", "/invitations/{token}/accept") => r(Public),

        ("GET", "/me" | "/me/sessions" | "/me/tokens" | "/workspaces" | "/search") => r(Signed),
        ("POST", "/me/tokens") => b(Signed, json!({ "name": "mine", "scope": "write" })),
        ("PUT", "/me/password") => b(
            Signed,
            json!({ "current_password": "", "new_password": "a long passphrase 42" }),
        ),
        ("POST", "/auth/logout") => r(Signed),
        ("POST", "/workspaces") => b(Signed, json!({ "name": "Another team" })),
        ("GET", "/projects/" | "/prompts/" | "/presets/" | "/presets/system/" | "/webhooks/endpoints") => r(Signed),
        ("GET", "/agent/threads" | "/api/interviews/rooms") => r(Signed),
        ("DELETE", "/me/sessions/{session_id}" | "/me/tokens/{token_id}") => r(Own),

        ("GET", "/workspaces/{workspace_id}" | "/workspaces/{workspace_id}/members") => r(Read),
        ("PATCH", "/workspaces/{workspace_id}") => b(Manage, json!({ "name": "Research team" })),
        ("DELETE", "/workspaces/{workspace_id}") => r(OwnerOnly),
        ("PATCH", "/workspaces/{workspace_id}/members/{user_id}") => b(Manage, json!({ "role": "viewer" })),
        ("DELETE", "/workspaces/{workspace_id}/members/{user_id}") => r(Manage),
        ("GET", "/workspaces/{workspace_id}/invitations" | "/workspaces/{workspace_id}/audit") => r(Manage),
        ("POST", "/workspaces/{workspace_id}/invitations") => {
            b(Manage, json!({ "email": "someone@example.org", "role": "researcher" }))
        }
        ("DELETE", "/workspaces/{workspace_id}/invitations/{invitation_id}") => r(Manage),

        ("POST", "/projects/") => b(WriteNamed, json!({ "name": "New study", "workspace_id": f.workspace })),
        ("GET", "/projects/{project_id}") => r(Read),
        ("PUT", "/projects/{project_id}") => b(Write, json!({ "name": "Renamed" })),
        ("DELETE", "/projects/{project_id}") => r(Write),
        ("GET", "/projects/{project_id}/records") => r(Read),
        ("POST", "/projects/{project_id}/records") => b(
            Write,
            json!({ "title": "Bob", "text": "Interviewer: Hi?\nBob: Hello." }),
        ),
        ("GET", "/projects/{project_id}/reports") => r(Read),
        ("POST", "/projects/{project_id}/reports") => b(Write, json!({ "title": "More", "prompts_ids": [f.prompt] })),
        ("POST", "/projects/{project_id}/reports/estimate") => {
            b(Write, json!({ "title": "More", "prompts_ids": [f.prompt] }))
        }
        ("GET", "/workspaces/{workspace_id}/usage") => r(Read),
        (
            "GET",
            "/projects/{project_id}/reports/{report_id}"
            | "/projects/{project_id}/reports/{report_id}/generation"
            | "/projects/{project_id}/reports/{report_id}/versions",
        ) => r(Read),
        ("PUT", "/projects/{project_id}/reports/{report_id}") => b(Write, json!({ "title": "Retitled" })),
        ("DELETE", "/projects/{project_id}/reports/{report_id}") => r(Write),
        (
            "POST",
            "/projects/{project_id}/reports/{report_id}/cancel"
            | "/projects/{project_id}/reports/{report_id}/regenerate",
        ) => r(Write),

        ("GET", "/insight/{rec_id}/" | "/insight/{rec_id}/persona-report") => r(Read),
        ("PATCH", "/insight/{rec_id}/") => b(Write, json!({ "name": "Anna (pricing)" })),
        ("DELETE", "/insight/{rec_id}/") => r(Write),
        ("PATCH", "/insight/{rec_id}/speaker_name") => b(Write, json!({ "speaker": "Anna", "name": "Anna K." })),
        ("PATCH", "/insight/{rec_id}/utterances/{utterance_id}") => {
            b(Write, json!({ "text": "Far too high for what we get." }))
        }
        ("PATCH", "/insight/{rec_id}/speaker_respondent") => {
            b(Write, json!({ "speaker": "Anna", "is_respondent": true }))
        }
        ("GET", "/insight/{rec_id}/chat/" | "/insight/{rec_id}/chat/threads/") => r(Read),
        ("POST", "/insight/{rec_id}/chat/") => b(Read, json!({ "message": "What did Anna say about the price?" })),
        ("POST", "/insight/{rec_id}/chat/new-thread/") => r(Read),
        ("PATCH", "/insight/{rec_id}/chat/threads/{thread_id}") => b(Own, json!({ "title": "Pricing" })),

        ("POST", "/agent/chat") => b(ReadNamed, json!({ "message": "What hurts?", "project_id": f.project })),
        ("POST", "/agent/threads") => b(ReadNamed, json!({ "project_id": f.project })),
        ("GET", "/agent/threads/{thread_id}" | "/agent/threads/{thread_id}/history") => r(Own),
        ("PATCH", "/agent/threads/{thread_id}") => b(Own, json!({ "title": "Pricing" })),
        ("DELETE", "/agent/threads/{thread_id}") => r(Own),

        ("POST", "/prompts/") => b(
            WriteNamed,
            json!({ "title": "Gains", "text": "List the gains.", "workspace_id": f.workspace }),
        ),
        ("GET", "/prompts/{prompt_id}/") => r(Read),
        ("PUT", "/prompts/{prompt_id}/") => b(Write, json!({ "title": "Pains", "text": "List every pain." })),
        ("DELETE", "/prompts/{prompt_id}/") => r(Write),
        ("POST", "/presets/") => b(
            WriteNamed,
            json!({ "title": "Also ours", "prompt_ids": [f.prompt], "workspace_id": f.workspace }),
        ),
        ("GET", "/presets/{preset_id}/") => r(Read),
        ("PUT", "/presets/{preset_id}/") => b(Write, json!({ "title": "Ours", "prompt_ids": [f.prompt] })),
        ("DELETE", "/presets/{preset_id}/") => r(Write),
        ("POST", "/presets/{preset_id}/clone/") => r(Read),

        ("POST", "/api/interviews/rooms") => b(WriteNamed, json!({ "project_id": f.project })),
        ("GET", "/api/interviews/rooms/{room_id}") => r(Read),
        ("PATCH", "/api/interviews/rooms/{room_id}") => b(Write, json!({ "room_name": "Pricing talk" })),
        ("DELETE", "/api/interviews/rooms/{room_id}") => r(Write),

        ("POST", "/webhooks/endpoints") => b(
            ManageNamed,
            json!({ "url": "https://93.184.216.34/more", "workspace_id": f.workspace }),
        ),
        ("GET", "/webhooks/endpoints/{endpoint_id}" | "/webhooks/endpoints/{endpoint_id}/deliveries") => r(Manage),
        ("DELETE", "/webhooks/endpoints/{endpoint_id}") => r(Manage),

        ("GET", "/workspaces/{workspace_id}/tags") => r(Read),
        ("GET", "/workspaces/{workspace_id}/settings") => r(Read),
        ("PATCH", "/workspaces/{workspace_id}/settings") => b(Manage, json!({ "known_names": ["Zora Quist"] })),
        ("POST", "/workspaces/{workspace_id}/erasure") => b(Manage, json!({ "email": "nobody@example.org" })),
        ("GET", "/insight/{rec_id}/pii") => r(Read),
        ("POST", "/insight/{rec_id}/redact") => r(Write),
        // The same name again is a 409, which the matrix counts as allowed (not refused).
        ("POST", "/workspaces/{workspace_id}/tags") => b(Write, json!({ "name": "Onboarding" })),
        ("PATCH", "/tags/{tag_id}") => b(Write, json!({ "description": "What they pay, and how" })),
        ("DELETE", "/tags/{tag_id}") => r(Write),
        ("POST", "/tags/{tag_id}/merge") => b(Write, json!({ "into_tag_id": f.other_tag })),
        ("POST", "/webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/retry") => r(Manage),

        ("POST", "/insight/{rec_id}/highlights") => b(
            Write,
            json!({ "start": { "utterance_id": f.utterance.parse::<i64>().unwrap_or(2), "offset": 0 },
                    "end": { "utterance_id": f.utterance.parse::<i64>().unwrap_or(2), "offset": 3 } }),
        ),
        ("GET", "/insight/{rec_id}/highlights" | "/projects/{project_id}/highlights" | "/tags/{tag_id}/highlights") => {
            r(Read)
        }
        ("POST", "/insight/{rec_id}/highlights/suggest") => b(Write, json!({ "tag_ids": [f.tag] })),
        ("GET", "/highlights/{highlight_id}") => r(Read),
        ("PATCH", "/highlights/{highlight_id}") => b(Write, json!({ "note": "Said twice" })),
        ("DELETE", "/highlights/{highlight_id}") => r(Write),
        ("GET", "/projects/{project_id}/insights") => r(Read),
        ("POST", "/projects/{project_id}/insights") => b(
            Write,
            json!({ "title": "Price before value", "highlight_ids": [f.highlight] }),
        ),
        ("GET", "/projects/{project_id}/reports/{report_id}/insights") => r(Read),
        ("PUT" | "DELETE", "/projects/{project_id}/reports/{report_id}/insights/{insight_id}") => r(Write),
        ("POST", "/projects/{project_id}/highlights/themes") => r(Write),
        ("GET", "/projects/{project_id}/themes") => r(Read),
        ("POST", "/themes/{theme_id}/accept") => b(
            Write,
            json!({ "name": format!("Tiers {}", uuid::Uuid::new_v4().simple()) }),
        ),
        ("DELETE", "/themes/{theme_id}") => r(Write),
        ("GET", "/insights/{insight_id}") => r(Read),
        ("PATCH", "/insights/{insight_id}") => b(Write, json!({ "body": "Three of five said so." })),
        ("DELETE", "/insights/{insight_id}") => r(Write),
        ("GET", "/projects/{project_id}/highlights.csv" | "/projects/{project_id}/export.qdpx") => r(Read),
        // `fill` adds the format these need.
        ("GET", "/projects/{project_id}/reports/{report_id}/export" | "/insight/{rec_id}/export") => r(Read),
        // A JSON body is a 415 for those who may import (the matrix counts it as allowed):
        // the role is checked before the upload is read.
        ("POST", "/workspaces/{workspace_id}/import/qdpx" | "/workspaces/{workspace_id}/import/archive") => {
            b(Write, json!({}))
        }
        ("GET", "/projects/{project_id}/archive") => r(Write),
        _ => None,
    }
}

fn fill(path: &str, f: &Fixture) -> String {
    let query = match path {
        "/projects/{project_id}/reports/{report_id}/export" => "?format=md",
        "/insight/{rec_id}/export" => "?format=txt",
        _ => "",
    };
    format!("{path}{query}")
        .replace("{workspace_id}", &f.workspace)
        .replace("{project_id}", &f.project)
        .replace("{rec_id}", &f.record)
        .replace("{utterance_id}", &f.utterance)
        .replace("{report_id}", &f.report)
        .replace("{prompt_id}", &f.prompt)
        .replace("{preset_id}", &f.preset)
        .replace("{room_id}", &f.room)
        .replace("{endpoint_id}", &f.endpoint)
        .replace("{delivery_id}", &f.delivery)
        .replace("{invitation_id}", &f.invitation)
        .replace("{user_id}", &f.member)
        .replace(
            "{thread_id}",
            if path.starts_with("/insight/") {
                &f.record_thread
            } else {
                &f.thread
            },
        )
        .replace("{session_id}", &f.session)
        .replace("{token_id}", &f.token)
        .replace("{tag_id}", &f.tag)
        .replace("{highlight_id}", &f.highlight)
        .replace("{insight_id}", &f.insight)
        .replace("{theme_id}", &f.theme)
}

struct Team {
    owner: TestUser,
    admin: TestUser,
    researcher: TestUser,
    viewer: TestUser,
    outsider: TestUser,
    workspace: String,
}

impl Team {
    fn who(&self, who: Who) -> Option<&TestUser> {
        match who {
            Who::Owner => Some(&self.owner),
            Who::Admin => Some(&self.admin),
            Who::Researcher => Some(&self.researcher),
            Who::Viewer => Some(&self.viewer),
            Who::Outsider => Some(&self.outsider),
            Who::Anonymous => None,
        }
    }
}

async fn team(app: &TestApp) -> Team {
    let owner = app.user().await;
    let workspace = created(app, &owner, "/workspaces", json!({ "name": "Research" })).await["id"]
        .as_str()
        .expect("workspace")
        .to_owned();
    let mut members = Vec::new();
    for role in ["admin", "researcher", "viewer"] {
        let user = app.user().await;
        let id = uuid::Uuid::parse_str(&workspace).expect("uuid");
        let role = insight::domain::workspace::Role::parse(role).expect("role");
        assert!(app.store.add_member(id, user.id, role).await.expect("add member"));
        members.push(user);
    }
    let viewer = members.pop().expect("viewer");
    let researcher = members.pop().expect("researcher");
    let admin = members.pop().expect("admin");
    Team {
        owner,
        admin,
        researcher,
        viewer,
        outsider: app.user().await,
        workspace,
    }
}

async fn call(
    app: &TestApp,
    method: &Method,
    path: &str,
    user: Option<&TestUser>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = app.client.request(method.clone(), app.url(path));
    if let Some(user) = user {
        request = request.bearer_auth(&user.token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status();
    // Downloads (CSV, zip) answer other than JSON; only the status matters here.
    let bytes = response.bytes().await.expect("body read");
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(format!("{} bytes", bytes.len())));
    (status, body)
}

fn check(rule: Rule, who: Who, method: &Method, path: &str, status: StatusCode, body: &Value) {
    let expected = expect(rule, who);
    let ok = match expected {
        Expect::Allowed => !matches!(status.as_u16(), 401 | 403 | 404) && !status.is_server_error(),
        Expect::Forbidden => status == StatusCode::FORBIDDEN,
        Expect::NotFound => status == StatusCode::NOT_FOUND,
        Expect::Conflict => status == StatusCode::CONFLICT,
        Expect::Unauthorized => status == StatusCode::UNAUTHORIZED,
    };
    assert!(
        ok,
        "{method} {path} as {who:?} ({rule:?}): expected {expected:?}, got {status} {body}"
    );
}

#[tokio::test]
async fn every_route_answers_each_role_as_its_rule_says() {
    // The owner makes a fixture for each deletion: past the per-user quotas.
    let app = TestApp::start_with(|settings| {
        // The fixture's endpoint is local, so its deliveries fail at once.
        settings.webhooks.webhooks_allow_http = true;
        settings.webhooks.webhooks_allow_private = true;
        settings.quotas.webhook_endpoints = 10_000;
        settings.quotas.projects = 10_000;
        settings.quotas.prompts = 10_000;
        settings.quotas.presets = 10_000;
        settings.quotas.rooms_per_day = 10_000;
        settings.quotas.assistant_threads = 10_000;
    })
    .await;
    let team = team(&app).await;
    let spare_member = app.user().await;
    let workspace_id = uuid::Uuid::parse_str(&team.workspace).expect("uuid");
    app.store
        .add_member(workspace_id, spare_member.id, insight::domain::workspace::Role::Viewer)
        .await
        .expect("add member");
    let shared = fixture(&app, &team.owner, &team.workspace, &spare_member).await;

    let (status, document) = app.call(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in ["get", "put", "post", "delete", "patch"] {
            if item.get(method).is_some() {
                operations.push((
                    Method::from_bytes(method.to_uppercase().as_bytes()).expect("method"),
                    path.clone(),
                ));
            }
        }
    }
    assert!(
        operations.len() > 80,
        "the document lists {} operations",
        operations.len()
    );
    let missing: Vec<String> = operations
        .iter()
        .filter(|(method, path)| rule(method, path, &shared).is_none())
        .map(|(method, path)| format!("{method} {path}"))
        .collect();
    assert!(
        missing.is_empty(),
        "operations without a rule in the role matrix: {missing:?}"
    );

    let mut checked = 0;
    // Changes first by those refused, then by those allowed (whose changes may move the
    // fixture on); deletions each on a fixture of their own.
    // A merge takes its tag away (and an accepted theme goes), so like a deletion each is
    // made on a fixture of its own.
    let consumes = |method: &Method, path: &str| {
        *method == Method::DELETE || path.ends_with("/merge") || path == "/themes/{theme_id}/accept"
    };
    for (method, path) in operations.iter().filter(|(method, path)| !consumes(method, path)) {
        let (rule, body) = rule(method, path, &shared).expect("rule");
        if rule == Rule::Public {
            continue;
        }
        let url = fill(path, &shared);
        for who in EVERYONE {
            let (status, answer) = call(&app, method, &url, team.who(who), body.clone()).await;
            check(rule, who, method, path, status, &answer);
            checked += 1;
        }
    }
    for (method, path) in operations.iter().filter(|(method, path)| consumes(method, path)) {
        let (rule, _) = rule(method, path, &shared).expect("rule");
        for who in EVERYONE {
            let allowed = expect(rule, who) == Expect::Allowed;
            let own;
            let f = if allowed {
                // A fresh member to remove, in a fresh fixture.
                let member = app.user().await;
                app.store
                    .add_member(workspace_id, member.id, insight::domain::workspace::Role::Viewer)
                    .await
                    .expect("add member");
                let workspace = if path.starts_with("/workspaces/{workspace_id}")
                    && !path.contains("members")
                    && !path.contains("invitations")
                {
                    created(&app, &team.owner, "/workspaces", json!({ "name": "To delete" })).await["id"]
                        .as_str()
                        .expect("workspace")
                        .to_owned()
                } else {
                    team.workspace.clone()
                };
                own = fixture(&app, &team.owner, &workspace, &member).await;
                &own
            } else {
                &shared
            };
            let url = fill(path, f);
            let (_, body) = self::rule(method, path, f).expect("rule");
            let (status, answer) = call(&app, method, &url, team.who(who), body).await;
            check(rule, who, method, path, status, &answer);
            checked += 1;
        }
    }
    eprintln!("role matrix: {} operations, {checked} calls", operations.len());
    app.stop().await;
}
