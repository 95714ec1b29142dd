//! What holds under hostile and careless input: every route of the router (read from
//! the API document it publishes, plus the respondent's pages) answers bytes that are not
//! UTF-8, NUL, megabyte strings, wrong types and deep nesting without a 5xx and in the
//! contract's shapes; the defects found by probing stay fixed.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::records::upload;
use crate::support::{TestApp, TestUser, assert_validation_body, error_locs, error_types};

const AGENT: &str = "an-agent-secret-of-some-length";

/// Real objects of one user, so hostile input reaches past "not found".
struct Seeded {
    user: TestUser,
    ids: Vec<(&'static str, String)>,
}

async fn seed(app: &TestApp) -> Seeded {
    let user = app.user().await;
    let project = app.project(&user, "Checkout study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Interview 1", "text": "Interviewer: What happened?\nAnna: The shipping cost surprised me." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("record id").to_owned();
    let utterance = app.wait_finished(&user, &record).await["utterances"][0]["id"]
        .as_i64()
        .expect("utterance id")
        .to_string();
    let report = app.report(&user, &project).await;
    let (_, rooms) = app
        .post("/api/interviews/rooms", &user, json!({ "project_id": project }))
        .await;
    let room = rooms["rooms"][0]["id"].as_str().expect("room id").to_owned();
    let token = rooms["rooms"][0]["access_token"].as_str().expect("token").to_owned();
    let (_, prompt) = app
        .post("/prompts/", &user, json!({ "title": "Pains", "text": "What hurts?" }))
        .await;
    let prompt = prompt["id"].as_str().expect("prompt id").to_owned();
    let (_, preset) = app
        .post("/presets/", &user, json!({ "title": "Mine", "prompt_ids": [prompt] }))
        .await;
    let preset = preset["id"].as_str().expect("preset id").to_owned();
    let (_, thread) = app.post("/agent/threads", &user, json!({})).await;
    let thread = thread["id"].to_string();
    let (_, endpoint) = app
        .post(
            "/webhooks/endpoints",
            &user,
            json!({ "url": "https://hooks.example.com/insight" }),
        )
        .await;
    let endpoint = endpoint["id"].as_str().expect("endpoint id").to_owned();
    let workspace = user.id.to_string();
    let (_, invitation) = app
        .post(
            &format!("/workspaces/{workspace}/invitations"),
            &user,
            json!({ "email": "guest@example.org", "role": "viewer" }),
        )
        .await;
    let invitation_token = invitation["url"]
        .as_str()
        .and_then(|url| url.rsplit('/').next())
        .expect("invitation link")
        .to_owned();
    let invitation = invitation["id"].as_str().expect("invitation id").to_owned();
    let (_, spare) = app
        .post("/me/tokens", &user, json!({ "name": "spare", "scope": "read" }))
        .await;
    let token_id = spare["id"].as_str().expect("token id").to_owned();
    let (_, tag) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &user,
            json!({ "name": "Pricing" }),
        )
        .await;
    let tag = tag["id"].as_str().expect("tag id").to_owned();
    let (_, highlight) = app
        .post(
            &format!("/insight/{record}/highlights"),
            &user,
            json!({ "start": { "utterance_id": 2, "offset": 4 }, "end": { "utterance_id": 2, "offset": 17 }, "tag_ids": [tag] }),
        )
        .await;
    let highlight = highlight["id"].as_str().expect("highlight id").to_owned();
    let (_, insight) = app
        .post(
            &format!("/projects/{project}/insights"),
            &user,
            json!({ "title": "Shipping costs surprise", "highlight_ids": [highlight] }),
        )
        .await;
    let insight = insight["id"].as_str().expect("insight id").to_owned();
    Seeded {
        user,
        ids: vec![
            ("project_id", project),
            ("rec_id", record),
            ("utterance_id", utterance),
            ("report_id", report),
            ("room_id", room),
            ("access_token", token),
            ("prompt_id", prompt),
            ("preset_id", preset),
            ("thread_id", thread),
            ("endpoint_id", endpoint),
            ("workspace_id", workspace.clone()),
            ("user_id", workspace),
            ("invitation_id", invitation),
            ("token", invitation_token),
            ("token_id", token_id),
            ("session_id", uuid::Uuid::new_v4().to_string()),
            // No delivery exists; an unknown one must still be answered in the contract's shapes.
            ("delivery_id", uuid::Uuid::new_v4().to_string()),
            ("tag_id", tag),
            ("highlight_id", highlight),
            ("insight_id", insight),
            // No theme is proposed; an unknown one is answered in the contract's shapes.
            ("theme_id", uuid::Uuid::new_v4().to_string()),
        ],
    }
}

/// Every route: its method and path template, from the document the router publishes
/// and the pages the router adds.
fn routes() -> Vec<(Method, String, Value)> {
    let doc = serde_json::to_value(insight::document()).expect("the document is JSON");
    let mut routes = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method");
            routes.push((method, path.clone(), operation.clone()));
        }
    }
    for page in insight::doors::http::routes::interview_page::PATHS {
        routes.push((Method::GET, page.to_owned(), Value::Null));
    }
    // Deleting last, so the other routes reach the seeded objects.
    routes.sort_by_key(|(method, _, _)| *method == Method::DELETE);
    routes
}

fn fill(template: &str, seeded: &Seeded, hostile: Option<&str>) -> String {
    let mut path = template.to_owned();
    for (name, id) in &seeded.ids {
        path = path.replace(&format!("{{{name}}}"), hostile.unwrap_or(id));
    }
    assert!(
        !path.contains('{'),
        "a path parameter without a seeded value: {template}"
    );
    path
}

/// The schema of an operation's JSON body, with `$ref`s resolved one level.
fn body_schema(operation: &Value, doc: &Value) -> Option<Value> {
    let schema = operation["requestBody"]["content"]["application/json"]["schema"].clone();
    if schema.is_null() {
        return None;
    }
    Some(resolve(&schema, doc))
}

fn resolve(schema: &Value, doc: &Value) -> Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or_default();
            doc["components"]["schemas"][name].clone()
        }
        None => schema.clone(),
    }
}

/// A value of every JSON type that `schema` does not allow.
fn wrong_types(schema: &Value) -> Vec<Value> {
    let allowed: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    [
        ("string", json!("text")),
        ("integer", json!(7)),
        ("number", json!(7.5)),
        ("boolean", json!(true)),
        ("array", json!([1, "two"])),
        ("object", json!({ "x": 1 })),
        ("null", Value::Null),
    ]
    .into_iter()
    .filter(|(kind, _)| !(allowed.contains(kind) || (*kind == "integer" && allowed.contains(&"number"))))
    .filter(|_| !allowed.is_empty())
    .map(|(_, value)| value)
    .collect()
}

fn nested(depth: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(depth * 6 + 2);
    for _ in 0..depth {
        body.extend_from_slice(b"{\"a\":");
    }
    body.extend_from_slice(b"1");
    body.extend(std::iter::repeat_n(b'}', depth));
    body
}

/// Asserts an answer is no server error and, when it is an error, in the contract's
/// shape (the respondent's page may answer its own HTML).
async fn check(response: reqwest::Response, what: &str) {
    let status = response.status();
    let html = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    let text = response.text().await.unwrap_or_default();
    assert!(!status.is_server_error(), "{what}: {status} {text}");
    if status.is_client_error() && !html {
        let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{what}: {status}, not JSON: {text}"));
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            assert_validation_body(&body);
        } else {
            assert!(body["detail"].is_string(), "{what}: {status} {body}");
        }
    }
}

#[tokio::test]
async fn every_route_answers_hostile_input_without_a_server_error() {
    let app = TestApp::start_with(|settings| {
        settings.interviews.agent_secret = Some(insight::secret::KeyMaterial::new(AGENT));
        settings.server.public_rate_per_minute = 1_000_000;
        settings.server.public_rate_burst = 100_000;
    })
    .await;
    let seeded = seed(&app).await;
    let doc = serde_json::to_value(insight::document()).expect("the document is JSON");
    let megabyte = "x".repeat(1_000_000);
    let send = |method: &Method, path: &str| {
        app.client
            .request(method.clone(), app.url(path))
            .bearer_auth(&seeded.user.token)
            .header("x-agent-secret", AGENT)
    };
    let routes = routes();
    assert!(routes.len() > 60, "the router's routes: {}", routes.len());
    for (method, template, operation) in &routes {
        let route = format!("{method} {template}");
        // Path parameters: bytes that are not UTF-8, NUL, an overlong encoding, a
        // surrogate, a slash, long text.
        if template.contains('{') {
            for hostile in ["%FF", "%00", "%C0%AF", "%ED%A0%80", "a%2Fb", &"y".repeat(16 * 1024)] {
                let path = fill(template, &seeded, Some(hostile));
                check(
                    send(method, &path).send().await.expect("sent"),
                    &format!("{route} path {hostile:.12}"),
                )
                .await;
            }
        }
        let path = fill(template, &seeded, None);
        // The query: the same, for every parameter the lists and filters read.
        let query = "limit=%FF&cursor=%00&project_id=%FF&thread_id=99999999999999999999999&archived=%FF&x=%00";
        check(
            send(method, &format!("{path}?{query}")).send().await.expect("sent"),
            &format!("{route} query"),
        )
        .await;
        // Headers whose bytes are not UTF-8.
        let odd = reqwest::header::HeaderValue::from_bytes(b"\xff\xfe").expect("opaque header bytes");
        check(
            app.client
                .request(method.clone(), app.url(&path))
                .header("authorization", odd.clone())
                .header("x-agent-secret", odd.clone())
                .header("x-forwarded-for", odd.clone())
                .header("content-type", odd)
                .send()
                .await
                .expect("sent"),
            &format!("{route} headers"),
        )
        .await;
        if ![Method::POST, Method::PUT, Method::PATCH].contains(method) {
            continue;
        }
        // Bodies every writing route gets.
        let raw: Vec<(&str, Vec<u8>)> = vec![
            ("not UTF-8", b"{\"title\": \"\xff\xfe\"}".to_vec()),
            ("a raw NUL", b"{\"title\": \"a\x00b\"}".to_vec()),
            (
                "an escaped NUL",
                br#"{"title": "a\u0000b", "name": "\u0000", "message": "\u0000"}"#.to_vec(),
            ),
            ("deep objects", nested(10_000)),
            ("deep arrays", [vec![b'['; 10_000], vec![b']'; 10_000]].concat()),
            (
                "a number beyond 64 bits",
                br#"{"thread_id": 1e400, "count": 99999999999999999999}"#.to_vec(),
            ),
        ];
        for (what, body) in raw {
            check(
                send(method, &path)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .expect("sent"),
                &format!("{route} body {what}"),
            )
            .await;
        }
        let Some(schema) = body_schema(operation, &doc) else {
            continue;
        };
        let properties: Vec<(String, Value)> = schema["properties"]
            .as_object()
            .map(|props| props.iter().map(|(k, v)| (k.clone(), resolve(v, &doc))).collect())
            .unwrap_or_default();
        // Every field with each type it does not take, and each text at a megabyte.
        for (field, field_schema) in &properties {
            for value in wrong_types(field_schema) {
                check(
                    send(method, &path)
                        .json(&json!({ field: value }))
                        .send()
                        .await
                        .expect("sent"),
                    &format!("{route} {field}={value}"),
                )
                .await;
            }
        }
        let mut huge = serde_json::Map::new();
        for (field, _) in &properties {
            huge.insert(field.clone(), json!(megabyte));
            check(
                send(method, &path)
                    .json(&json!({ field: megabyte }))
                    .send()
                    .await
                    .expect("sent"),
                &format!("{route} {field} of a megabyte"),
            )
            .await;
        }
        check(
            send(method, &path)
                .json(&Value::Object(huge))
                .send()
                .await
                .expect("sent"),
            &format!("{route} every field a megabyte"),
        )
        .await;
    }
    app.stop().await;
}

#[tokio::test]
async fn path_segments_that_are_not_utf8_are_422s_naming_the_parameter() {
    let app = TestApp::start_with(|settings| {
        settings.interviews.agent_secret = Some(insight::secret::KeyMaterial::new(AGENT));
    })
    .await;
    let user = app.user().await;
    for (path, name) in [
        ("/projects/%FF", "project_id"),
        ("/projects/%FF/reports/%FE", "project_id"),
        ("/insight/public/%FF/persona-report", "rec_id"),
        ("/insight/%FF/chat/", "rec_id"),
        ("/api/interviews/agent-config/%FF", "room_id"),
        ("/api/interviews/join/%FF", "access_token"),
        ("/agent/threads/%FF", "thread_id"),
        ("/webhooks/endpoints/%FF", "endpoint_id"),
    ] {
        let response = app
            .client
            .get(app.url(path))
            .bearer_auth(&user.token)
            .header("x-agent-secret", AGENT)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        let body: Value = response.json().await.expect("JSON");
        assert_validation_body(&body);
        assert_eq!(error_locs(&body)[0], json!(["path", name]), "{path}: {body}");
        assert_eq!(error_types(&body)[0], "string_unicode", "{path}: {body}");
    }
    // A head of a megabyte is refused before the service sees it, by the HTTP layer (with
    // no body of ours; clients cannot even build such a URL), and the server goes on.
    for target in ["/projects/", "/projects/?q="] {
        let address = app.base.trim_start_matches("http://").to_owned();
        let mut stream = tokio::net::TcpStream::connect(address).await.expect("connect");
        let head = format!(
            "GET {target}{} HTTP/1.1\r\nHost: insight\r\n\r\n",
            "z".repeat(1_000_000)
        );
        // The server may stop reading and answer before the head is all sent.
        let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
        let mut answer = vec![0u8; 64];
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            tokio::io::AsyncReadExt::read(&mut stream, &mut answer),
        )
        .await
        .expect("an answer or a close within 10 s");
        let line = String::from_utf8_lossy(&answer[..read.unwrap_or(0)]).into_owned();
        let status = line.split(' ').nth(1).unwrap_or("closed");
        assert!(status == "closed" || status.starts_with('4'), "{target}: {line:.40}");
    }
    let (status, _) = app.get("/projects/", &user).await;
    assert_eq!(status, StatusCode::OK);
    // Two bad parameters are both told.
    let (_, body) = app.get("/projects/%FF/reports/%FE", &user).await;
    assert_eq!(
        error_locs(&body),
        vec![json!(["path", "project_id"]), json!(["path", "report_id"])]
    );
    // The respondent's page answers its own page, in HTML.
    let response = app.client.get(app.url("/interview/%FF")).send().await.expect("sent");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/html"),
        "the page's own not-found page"
    );
    app.stop().await;
}

#[tokio::test]
async fn nul_leaves_multipart_text_and_two_files_are_refused() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Uploads").await;
    let path = format!("/projects/{project}/records");
    let transcript = "Interviewer: Hi\nAnna: Hello there".as_bytes().to_vec();
    let form = reqwest::multipart::Form::new().text("title", "Inter\0view\0 one").part(
        "file",
        reqwest::multipart::Part::bytes(transcript.clone()).file_name("one.txt"),
    );
    let response = app
        .client
        .post(app.url(&path))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::CREATED);
    let record: Value = response.json().await.expect("JSON");
    assert_eq!(record["name"], "Interview one", "{record}");
    let (_, read) = app
        .get(&format!("/insight/{}/", record["id"].as_str().unwrap()), &user)
        .await;
    assert_eq!(read["name"], "Interview one", "stored without NUL");

    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(transcript.clone()).file_name("one.txt"),
        )
        .part("file", reqwest::multipart::Part::bytes(transcript).file_name("two.txt"));
    let response = app
        .client
        .post(app.url(&path))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(error_locs(&body), vec![json!(["body", "file"])], "{body}");
    assert!(
        body["detail"][0]["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("one file")
    );
    let (_, records) = app.get(&path, &user).await;
    assert_eq!(
        records.as_array().map(Vec::len),
        Some(1),
        "nothing of the refused form was kept"
    );
    app.stop().await;
}

#[tokio::test]
async fn text_of_only_nul_or_whitespace_is_refused_as_its_pattern_says() {
    let app = TestApp::start().await;
    let user = app.user().await;
    // Found by schemathesis (seed 510278176): NUL is dropped, so "\u0000" is blank, and
    // the document's pattern says so too.
    for text in ["\u{0}", "\u{0}\u{0} ", " \t\u{3000}\u{85}", "\u{2028}"] {
        let (status, body) = app
            .post("/prompts/", &user, json!({ "title": "T", "text": text }))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text:?}: {body}");
        assert_eq!(error_locs(&body), vec![json!(["body", "text"])], "{text:?}");
        assert_eq!(error_types(&body), ["string_too_short"], "{text:?}");
    }
    let (status, prompt) = app
        .post("/prompts/", &user, json!({ "title": "T", "text": "\u{0}a\u{0}" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{prompt}");
    assert_eq!(prompt["text"], "a");
    let doc = serde_json::to_value(insight::document()).expect("the document is JSON");
    let pattern = doc["components"]["schemas"]["PromptWrite"]["properties"]["text"]["pattern"]
        .as_str()
        .expect("a pattern");
    assert!(pattern.starts_with("[^\\u0000"), "{pattern}");
    app.stop().await;
}

#[tokio::test]
async fn nul_counts_toward_a_strings_length_as_the_document_says() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Limits").await;
    // Found by schemathesis (seed 20261121): the schema's maxLength counts every character
    // sent, NUL too, so a string that is too long with its NULs is refused, even though
    // the NULs would have been dropped.
    let long = format!("ok{}", "\u{0}".repeat(50_000));
    let (status, body) = app
        .put(
            &format!("/projects/{project}"),
            &user,
            json!({ "interview_guide": long }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), vec![json!(["body", "interview_guide"])]);
    assert_eq!(error_types(&body), ["string_too_long"]);
    let (status, body) = app
        .put(
            &format!("/projects/{project}"),
            &user,
            json!({ "interview_guide": "o\u{0}k" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["interview_guide"], "ok", "stored without NUL");
    // The same in a multipart form: a title of 300 characters with its NULs is at the
    // limit, one more is over it.
    for (title, expected) in [
        (format!("{}\u{0}", "t".repeat(299)), StatusCode::CREATED),
        (format!("{}\u{0}", "t".repeat(300)), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let notes = b"Anna: Hello there.\n".to_vec();
        let (status, body) = upload(&app, &user, &project, "notes.txt", "text/plain", notes, Some(&title)).await;
        assert_eq!(status, expected, "{body}");
    }
    app.stop().await;
}

#[tokio::test]
async fn the_agents_secret_is_checked_before_its_body() {
    let app = TestApp::start_with(|settings| {
        settings.interviews.agent_secret = Some(insight::secret::KeyMaterial::new(AGENT));
    })
    .await;
    for secret in [None, Some("wrong-secret-of-some-length")] {
        let mut request = app
            .client
            .post(app.url("/api/interviews/session-report"))
            .header("content-type", "application/json")
            .body("{not json");
        if let Some(secret) = secret {
            request = request.header("x-agent-secret", secret);
        }
        let response = request.send().await.expect("sent");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{secret:?}");
        let response = app
            .client
            .get(app.url("/api/interviews/agent-config/not-a-uuid"))
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    let response = app
        .client
        .post(app.url("/api/interviews/session-report"))
        .header("x-agent-secret", AGENT)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

#[tokio::test]
async fn answers_carry_nosniff_and_are_not_stored_unless_their_handler_allows_it() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let response = app
        .client
        .get(app.url("/projects/"))
        .bearer_auth(&user.token)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let response = app.client.get(app.url("/projects/")).send().await.expect("sent");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    let response = app.client.get(app.url("/healthz")).send().await.expect("sent");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    assert_eq!(response.headers()["cache-control"], "no-store");
    // An interview link is a credential in the path: its answers are not stored either.
    let response = app
        .client
        .get(app.url("/api/interviews/join/no-such-link"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.headers()["cache-control"], "no-store");
    // What a handler allows to be cached keeps its own header.
    let response = app
        .client
        .get(app.url("/interview/assets/interview.js"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.headers()["cache-control"], "public, max-age=300");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    app.stop().await;
}
