//! Exports over the JSON API, each opened by a real reader: a generated report as
//! Markdown, as Word (read back by python-docx: Word's heading styles, the quotes, the
//! citations as links to their moments) and as PDF (text extracted by pdftotext); a
//! transcript as Word, text, WebVTT and SubRip, the last three uploaded again and read by
//! Insight's own importers to the same utterances. Each export is in the audit log; bad
//! formats are 422s, unwritten reports and untimed subtitles 409s, strangers 404s.
//!
//! python-docx runs in the Python `INSIGHT_TEST_PYTHON` names, pdftotext is
//! `INSIGHT_TEST_PDFTOTEXT` or Debian's poppler-utils' (`.ci/run` sets both up); without
//! them these readers are skipped and say so, except under CI.

use std::path::PathBuf;
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, set_password};
use crate::support::browser::Browser;
use crate::support::exchange::{download, header};
use crate::support::programs::tool;
use crate::support::records::{TIMED_ANNA, finished_record, upload};
use crate::support::reports::wait_generation;
use crate::support::{TestApp, TestUser, error_locs};

/// A Word document's paragraphs as (style, text), and its hyperlinks' targets.
type WordText = (Vec<(String, String)>, Vec<String>);

/// The paragraphs and hyperlinks of a .docx, as python-docx reads them.
fn read_docx(bytes: &[u8]) -> Option<WordText> {
    let python = tool("INSIGHT_TEST_PYTHON", None, "a Python with python-docx")?;
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), bytes).expect("written");
    let script = r#"
import json, sys, docx
d = docx.Document(sys.argv[1])
paragraphs = [[p.style.name, p.text] for p in d.paragraphs]
for t in d.tables:
    for row in t.rows:
        paragraphs.append(["table", " | ".join(c.text for c in row.cells)])
links = [r.target_ref for r in d.part.rels.values() if r.reltype.endswith("/hyperlink")]
print(json.dumps({"paragraphs": paragraphs, "links": links}))
"#;
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(file.path())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "python-docx failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value = serde_json::from_slice(&out.stdout).expect("json");
    let paragraphs = read["paragraphs"]
        .as_array()
        .expect("paragraphs")
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap_or_default().to_owned(),
                p[1].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let links = read["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| l.as_str().unwrap_or_default().to_owned())
        .collect();
    Some((paragraphs, links))
}

/// The text of a PDF, as pdftotext extracts it, and its page count (form feeds).
fn read_pdf(bytes: &[u8]) -> Option<(String, usize)> {
    let pdftotext = tool(
        "INSIGHT_TEST_PDFTOTEXT",
        Some("/usr/bin/pdftotext"),
        "install Debian's poppler-utils",
    )?;
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), bytes).expect("written");
    let out = Command::new(pdftotext)
        .arg("-enc")
        .arg("UTF-8")
        .arg(file.path())
        .arg("-")
        .output()
        .expect("pdftotext runs");
    assert!(
        out.status.success(),
        "pdftotext failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let pages = text.matches('\u{c}').count();
    Some((text, pages))
}

/// Keeps a copy in `target/export-samples/` to look at.
fn keep(name: &str, bytes: &[u8]) {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/export-samples");
    if std::fs::create_dir_all(&folder).is_ok() {
        let _ = std::fs::write(folder.join(name), bytes);
    }
}

/// Whitespace made single spaces, for text a layout may have broken into lines.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A project with one timed interview and a report the offline engine wrote from it.
async fn study(app: &TestApp, user: &TestUser) -> (String, String, String) {
    let project = app.project(user, "Billing study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Interview Anna", "text": TIMED_ANNA, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("id").to_owned();
    app.wait_finished(user, &record).await;
    let preset = app.system_preset_id(user).await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            user,
            json!({ "title": "Billing pains", "preset_id": preset }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let report = report["id"].as_str().expect("id").to_owned();
    let path = format!("/projects/{project}/reports/{report}");
    let generation = wait_generation(app, user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    (project, record, report)
}

/// Section headings (`## x`) and quotes (`"x"`) of the report's Markdown.
fn headings_and_quotes(content: &str) -> (Vec<String>, Vec<String>) {
    let headings = content
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(str::to_owned)
        .collect();
    let quotes = content
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|quote| quote.split_whitespace().count() >= 4)
        .map(str::to_owned)
        .collect();
    (headings, quotes)
}

#[tokio::test]
async fn a_report_exports_as_markdown_word_and_pdf_that_readers_open() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record, report) = study(&app, &user).await;
    let (_, written) = app.get(&format!("/projects/{project}/reports/{report}"), &user).await;
    let content = written["content"].as_str().expect("content").to_owned();
    let (headings, quotes) = headings_and_quotes(&content);
    assert!(!headings.is_empty() && !quotes.is_empty(), "{content}");
    assert!(content.contains("[Interview Anna, "), "the report cites: {content}");
    let export = |format: &str| format!("/projects/{project}/reports/{report}/export?format={format}");

    let (status, headers, markdown) = download(&app, &user, &export("md")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), "text/markdown; charset=utf-8");
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"billing-pains.md\""
    );
    let markdown = String::from_utf8(markdown).expect("UTF-8");
    assert!(markdown.starts_with("# Billing pains\n\n"), "{markdown}");
    assert_eq!(
        markdown.matches("# Billing pains").count(),
        1,
        "the title once: {markdown}"
    );
    assert!(
        markdown.contains(content.trim_start_matches("# Billing pains").trim()),
        "{markdown}"
    );

    let (status, headers, docx) = download(&app, &user, &export("docx")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        header(&headers, "content-type"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"billing-pains.docx\""
    );
    keep("report.docx", &docx);
    if let Some((paragraphs, links)) = read_docx(&docx) {
        assert_eq!(paragraphs[0], ("Title".to_owned(), "Billing pains".to_owned()));
        assert_eq!(paragraphs[1], ("Subtitle".to_owned(), "Billing study".to_owned()));
        let word_headings: Vec<&str> = paragraphs
            .iter()
            .filter(|(style, _)| style == "Heading 2")
            .map(|(_, text)| text.as_str())
            .collect();
        assert_eq!(word_headings, headings, "{paragraphs:?}");
        let text: String = paragraphs.iter().map(|(_, text)| format!("{text}\n")).collect();
        for quote in &quotes {
            assert!(
                text.contains(quote.as_str()),
                "{quote:?} not in the Word document:\n{text}"
            );
        }
        assert!(text.contains("[Interview Anna, "), "citations are kept as text: {text}");
        let moment = format!("http://127.0.0.1/r/{record}#u");
        assert!(
            !links.is_empty() && links.iter().all(|link| link.contains(&format!("/r/{record}#u"))),
            "citations link to the moments ({moment}…): {links:?}"
        );
    }

    let (status, headers, pdf) = download(&app, &user, &export("pdf")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), "application/pdf");
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");
    keep("report.pdf", &pdf);
    if let Some((text, pages)) = read_pdf(&pdf) {
        let text = flat(&text);
        assert!(pages >= 1);
        assert!(text.starts_with("Billing pains Billing study"), "{text}");
        for heading in &headings {
            assert!(text.contains(heading.as_str()), "{heading:?} not in the PDF:\n{text}");
        }
        for quote in &quotes {
            assert!(text.contains(&flat(quote)), "{quote:?} not in the PDF:\n{text}");
        }
        assert!(
            text.contains(&format!("Billing pains · 1 / {pages}")),
            "page numbers: {text}"
        );
    }

    // Each export is in the audit log, with its format.
    let (_, project_body) = app.get(&format!("/projects/{project}"), &user).await;
    let workspace = project_body["workspace_id"].as_str().expect("workspace id").to_owned();
    let (_, log) = app
        .get(&format!("/workspaces/{workspace}/audit?action=export.created"), &user)
        .await;
    let formats: Vec<&str> = log
        .as_array()
        .expect("items")
        .iter()
        .filter(|entry| entry["action"] == "export.created" && entry["target_id"] == report.as_str())
        .filter_map(|entry| entry["detail"]["format"].as_str())
        .collect();
    assert_eq!(formats.len(), 3, "{log}");
    for format in ["md", "docx", "pdf"] {
        assert!(formats.contains(&format), "{format} audited: {formats:?}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_transcript_exports_as_word_text_and_subtitles_that_come_back_the_same() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record, _) = study(&app, &user).await;
    let (_, detail) = app.get(&format!("/insight/{record}/"), &user).await;
    let utterances = detail["utterances"].as_array().expect("utterances").clone();
    assert_eq!(utterances.len(), 4, "{detail}");
    let export = |format: &str| format!("/insight/{record}/export?format={format}");
    // What an importer must give back: speaker, times and words of each utterance.
    let essence = |utterances: &[Value]| -> Vec<(Value, Value, Value, Value)> {
        utterances
            .iter()
            .map(|u| {
                (
                    u["speaker"].clone(),
                    u["start_ms"].clone(),
                    u["end_ms"].clone(),
                    u["text"].clone(),
                )
            })
            .collect()
    };

    for (format, content_type) in [
        ("txt", "text/plain; charset=utf-8"),
        ("vtt", "text/vtt; charset=utf-8"),
        ("srt", "application/x-subrip; charset=utf-8"),
    ] {
        let (status, headers, bytes) = download(&app, &user, &export(format)).await;
        assert_eq!(status, StatusCode::OK, "{format}");
        assert_eq!(header(&headers, "content-type"), content_type);
        assert_eq!(
            header(&headers, "content-disposition"),
            format!("attachment; filename=\"interview-anna.{format}\"")
        );
        let (status, again) = upload(
            &app,
            &user,
            &project,
            &format!("again.{format}"),
            "application/octet-stream",
            bytes.clone(),
            Some(&format!("Again {format}")),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        let again_id = again["id"].as_str().expect("id");
        app.wait_finished(&user, again_id).await;
        let (_, read) = app.get(&format!("/insight/{again_id}/"), &user).await;
        let source_format = if format == "txt" { "text" } else { format };
        assert_eq!(read["source_format"], source_format, "{read}");
        let read_back = read["utterances"].as_array().expect("utterances");
        assert_eq!(
            essence(read_back),
            essence(&utterances),
            "{format} read back differs:\n{}",
            String::from_utf8_lossy(&bytes)
        );
    }

    let (status, _, docx) = download(&app, &user, &export("docx")).await;
    assert_eq!(status, StatusCode::OK);
    if let Some((paragraphs, links)) = read_docx(&docx) {
        assert_eq!(paragraphs[0], ("Title".to_owned(), "Interview Anna".to_owned()));
        let text: String = paragraphs.iter().map(|(_, text)| format!("{text}\n")).collect();
        for utterance in &utterances {
            assert!(text.contains(utterance["text"].as_str().expect("text")), "{text}");
        }
        assert!(text.contains("Anna  00:10\nThe invoices arrive late"), "{text}");
        assert!(text.contains("Anna  01:10\nHonestly"), "{text}");
        let mut moments: Vec<String> = links
            .iter()
            .filter_map(|link| link.rsplit_once(&format!("/r/{record}#")).map(|(_, u)| u.to_owned()))
            .collect();
        moments.sort();
        assert_eq!(
            moments,
            ["u1", "u2", "u3", "u4"],
            "each time links to its moment: {links:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_pdf_draws_japanese_with_a_system_font_and_says_when_a_character_has_none() {
    // The font the PDF falls back on for what DejaVu lacks (.ci/run installs Debian's
    // fonts-droid-fallback).
    if tool(
        "INSIGHT_TEST_CJK_FONT",
        Some("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"),
        "install Debian's fonts-droid-fallback",
    )
    .is_none()
    {
        return;
    }
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, _, _) = study(&app, &user).await;
    let preset = app.system_preset_id(&user).await;
    let mut pdfs = Vec::new();
    for title in ["請求書の悩み Billing", "Hieroglyphs 𓀀 Billing"] {
        let (status, report) = app
            .post(
                &format!("/projects/{project}/reports"),
                &user,
                json!({ "title": title, "preset_id": preset }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
        wait_generation(&app, &user, &path, &["completed"]).await;
        let (status, headers, pdf) = download(&app, &user, &format!("{path}/export?format=pdf")).await;
        assert_eq!(status, StatusCode::OK);
        pdfs.push((header(&headers, "content-disposition").to_owned(), pdf));
    }
    // The name is kept too, encoded, with its ASCII letters for older clients.
    assert_eq!(
        pdfs[0].0,
        "attachment; filename=\"billing.pdf\"; filename*=UTF-8''%E8%AB%8B%E6%B1%82%E6%9B%B8%E3%81%AE%E6%82%A9%E3%81%BF%2Dbilling%2Epdf"
    );
    keep("japanese.pdf", &pdfs[0].1);
    if let Some((text, _)) = read_pdf(&pdfs[0].1) {
        assert!(
            text.contains("請求書の悩み"),
            "the Japanese is drawn and extracted: {text}"
        );
        assert!(!text.contains("cannot be drawn"), "{text}");
    }
    if let Some((text, _)) = read_pdf(&pdfs[1].1) {
        assert!(
            flat(&text).contains("cannot be drawn with the fonts on this server"),
            "{text}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_transcript_holding_control_characters_still_opens_in_word() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Pasted notes").await;
    // Text pasted from a terminal or an old document can carry a bell or a vertical tab,
    // which XML (and so Word) cannot hold.
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Bell\u{7} notes", "text": "Anna: The bell\u{7} rang twice\u{b} then stopped.\n" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("id").to_owned();
    app.wait_finished(&user, &record).await;
    let (status, _, docx) = download(&app, &user, &format!("/insight/{record}/export?format=docx")).await;
    assert_eq!(status, StatusCode::OK);
    if let Some((paragraphs, _)) = read_docx(&docx) {
        let text: String = paragraphs.iter().map(|(_, text)| format!("{text}\n")).collect();
        assert!(text.contains("The bell") && text.contains("rang twice"), "{text}");
        assert!(!text.contains('\u{7}') && !text.contains('\u{b}'), "{text:?}");
    }
    app.stop().await;
}

#[tokio::test]
async fn exports_refuse_bad_formats_unwritten_reports_untimed_subtitles_and_strangers() {
    // Without report workers, a report stays queued: written by nobody yet.
    let app = TestApp::start_with(|settings| settings.jobs.report_workers = Some(0)).await;
    let user = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&user, "Notes").await;
    let record = finished_record(&app, &user, &project, "Notes", "Anna: No times here at all.").await;

    let (status, body) = app.get(&format!("/insight/{record}/export?format=pdf"), &user).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), vec![json!(["query", "format"])]);
    let (status, body) = app.get(&format!("/insight/{record}/export"), &user).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["detail"][0]["type"], "missing", "{body}");
    for format in ["vtt", "srt"] {
        let (status, body) = app
            .get(&format!("/insight/{record}/export?format={format}"), &user)
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(
            body["detail"].as_str().expect("sentence").contains("no times"),
            "{body}"
        );
    }
    let (status, _, text) = download(&app, &user, &format!("/insight/{record}/export?format=txt")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(String::from_utf8_lossy(&text), "Anna: No times here at all.\n");

    let report = app.report(&user, &project).await;
    let path = format!("/projects/{project}/reports/{report}/export?format=docx");
    let (status, body) = app.get(&path, &user).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["detail"].as_str().expect("sentence").contains("queued"), "{body}");
    let (status, body) = app
        .get(
            &format!("/projects/{project}/reports/{report}/export?format=odt"),
            &user,
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    // Nobody else reaches them, and nothing is audited for his tries.
    for path in [
        format!("/insight/{record}/export?format=txt"),
        path.replace("docx", "md"),
    ] {
        let (status, body) = app.get(&path, &stranger).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    app.stop().await;
}

/// Fetches each download link of the page as the browser would (its session cookie, same
/// origin): `[href, status, content type]` of each.
async fn fetched_downloads(browser: &Browser) -> Vec<(String, u16, String)> {
    let answers = browser
        .command(
            reqwest::Method::POST,
            "/execute/async",
            json!({ "script": "const done = arguments[arguments.length - 1]; \
                Promise.all([...document.querySelectorAll('#downloads a[download]')].map((a) => \
                  fetch(a.href).then((r) => [a.getAttribute('href'), r.status, r.headers.get('content-type')]))) \
                .then(done, (e) => done(String(e)))", "args": [] }),
        )
        .await;
    answers
        .as_array()
        .unwrap_or_else(|| panic!("the downloads: {answers}"))
        .iter()
        .map(|a| {
            (
                a[0].as_str().unwrap_or_default().to_owned(),
                u16::try_from(a[1].as_u64().unwrap_or_default()).unwrap_or_default(),
                a[2].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_console_offers_each_export_to_a_reader() {
    use crate::support::accounts::researcher_and_viewer;
    use crate::support::browser::{in_chromium, look, sign_in};
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    let (project, record, report) = study(&app, &researcher).await;
    set_password(&app, &viewer, PASSWORD).await;
    in_chromium("the console exports test", async |browser| {
        // A viewer reads, so he may take the report, the transcript and the highlights away.
        sign_in(browser, &app, &viewer.email).await;
        browser.go(&app.url(&format!("/p/{project}/reports/{report}"))).await;
        let fetched = fetched_downloads(browser).await;
        let formats: Vec<&str> = fetched
            .iter()
            .map(|(href, ..)| href.rsplit('=').next().unwrap_or_default())
            .collect();
        assert_eq!(formats, ["docx", "pdf", "md"]);
        for (href, status, content_type) in &fetched {
            assert_eq!(*status, 200, "{href}");
            assert!(!content_type.is_empty(), "{href}");
        }
        look(browser, "report-downloads").await;

        browser.go(&app.url(&format!("/r/{record}"))).await;
        let fetched = fetched_downloads(browser).await;
        let formats: Vec<&str> = fetched
            .iter()
            .map(|(href, ..)| href.rsplit('=').next().unwrap_or_default())
            .collect();
        assert_eq!(formats, ["docx", "txt", "vtt", "srt"]);
        assert!(fetched.iter().all(|(_, status, _)| *status == 200), "{fetched:?}");
        assert_eq!(fetched[2].2, "text/vtt; charset=utf-8");
        look(browser, "record-downloads").await;

        browser.go(&app.url(&format!("/p/{project}/highlights"))).await;
        let fetched = fetched_downloads(browser).await;
        assert_eq!(fetched.len(), 2, "{fetched:?}");
        assert!(fetched.iter().all(|(_, status, _)| *status == 200), "{fetched:?}");
    })
    .await
    .then(app.stop())
    .await;
}
