//! The researcher console in a real headless Chromium (WebDriver, as `browser.rs`): a
//! researcher signs in, makes a project, adds two transcripts (one pasted, one uploaded
//! by the page's script) and watches them finish, opens one and renames a speaker; a
//! viewer finds no write control and a forged write is refused. Every page is saved as
//! a screenshot at phone and desktop widths under `target/console-screenshots/`, and
//! checked by axe-core when `INSIGHT_TEST_AXE` names its script (`.ci/run` installs it).

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, researcher_and_viewer, set_password};
use crate::support::browser::{Browser, in_chromium, look, sign_in, until};
use crate::support::{TestApp, TestUser};

async fn the_researchers_day(browser: &Browser, app: &TestApp, researcher: &TestUser, viewer: &TestUser) {
    browser.go(&app.url("/")).await;
    look(browser, "sign-in").await;
    sign_in(browser, app, &researcher.email).await;
    look(browser, "projects-empty").await;

    let name = browser.find("#name").await;
    browser.type_into(&name, "Checkout study").await;
    let goals = browser.find("#research_goals").await;
    browser.type_into(&goals, "Why do buyers abandon the cart?").await;
    let create = browser.find("form[action='/p'] button[type=submit]").await;
    browser.click(&create).await;
    let project = until(
        browser,
        "the project page",
        "return location.pathname.match(/^\\/p\\/([0-9a-f-]{36})$/)?.[1] ?? null",
    )
    .await;
    let project = project.as_str().expect("project id").to_owned();

    // A pasted transcript.
    let summary = browser.find("#paste summary").await;
    browser.click(&summary).await;
    let title = browser.find("#title").await;
    browser.type_into(&title, "Interview with Anna").await;
    let text = browser.find("#text").await;
    browser
        .type_into(
            &text,
            "Interviewer: What happened at checkout?\nAnna: The shipping cost surprised me, so I left.",
        )
        .await;
    let add = browser.find("#paste button[type=submit]").await;
    browser.click(&add).await;
    // An uploaded one, through the page's script and the JSON API.
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vtt_zoom.vtt");
    until(
        browser,
        "the pasted record in the table",
        "return document.querySelectorAll('#records tr[data-record]').length === 1 && document.querySelector('#files') ? true : null",
    )
    .await;
    let files = browser.find("#files").await;
    browser.type_into(&files, fixture.to_str().expect("path")).await;
    until(
        browser,
        "two finished records",
        "const s = [...document.querySelectorAll('#records [data-status]')].map((b) => b.textContent); \
         return s.length === 2 && s.every((x) => x === 'Finished') ? s : null",
    )
    .await;
    // A file that is no interview: its own line says why, in the API's words.
    let junk = std::env::temp_dir().join(format!("insight-console-{}.bin", uuid::Uuid::new_v4().simple()));
    std::fs::write(&junk, [0u8, 159, 146, 150, 0, 1, 2, 3, 255, 254]).expect("a binary file");
    let files = browser.find("#files").await;
    browser.type_into(&files, junk.to_str().expect("path")).await;
    let refused = until(
        browser,
        "the refused file's sentence",
        "return document.querySelector('#uploads .error')?.textContent || null",
    )
    .await;
    let _ = std::fs::remove_file(&junk);
    let refused = refused.as_str().unwrap_or_default().to_owned();
    assert!(
        refused.len() > 20 && !refused.contains("answered"),
        "a sentence, not a status: {refused}"
    );
    look(browser, "project").await;

    // The pasted record: its transcript, and a speaker renamed.
    browser.go(&app.url(&format!("/p/{project}"))).await;
    let anna = browser.find("#records a[href^='/r/']").await;
    let mut link = browser.text(&anna).await;
    if link != "Interview with Anna" {
        let all = browser.find_all("#records a[href^='/r/']").await;
        let last = all.last().expect("two links").clone();
        link = browser.text(&last).await;
        browser.click(&last).await;
    } else {
        browser.click(&anna).await;
    }
    assert_eq!(link, "Interview with Anna");
    until(
        browser,
        "the transcript",
        "return document.querySelectorAll('.transcript .turn').length === 2 || null",
    )
    .await;
    let respondent = browser
        .script("return document.querySelector('.turn.respondent .speaker')?.textContent ?? null")
        .await;
    assert_eq!(respondent, json!("Anna"), "the respondent's turn is set apart");
    look(browser, "record").await;
    let field = browser.find("input[name=name][value=Anna]").await;
    browser
        .script("document.querySelector('input[name=name][value=Anna]').value = ''; return true")
        .await;
    browser.type_into(&field, "Anna K.").await;
    let rename = browser
        .script(
            "const f = document.querySelector('input[name=name][value=Anna]').form; \
             f.querySelector('button').click(); return true",
        )
        .await;
    assert_eq!(rename, Value::Bool(true));
    until(
        browser,
        "the renamed speaker",
        "return [...document.querySelectorAll('.turn .speaker')].some((s) => s.textContent === 'Anna K.') || null",
    )
    .await;

    // Fix what Anna said: the form is fetched when asked for and shown in the turn.
    assert_eq!(
        browser
            .script("return document.querySelectorAll('.transcript textarea').length")
            .await,
        json!(0),
        "no correction form is sent before one is asked for"
    );
    let correct = browser.find(".turn.respondent a.fix").await;
    browser.click(&correct).await;
    until(
        browser,
        "the correction form in the turn",
        "return document.querySelector('.turn.respondent form.correction textarea') ? true : null",
    )
    .await;
    look(browser, "record-correct").await;
    browser
        .script("document.getElementById('language-form').scrollIntoView({ block: 'center' }); return true")
        .await;
    look(browser, "record-language").await;
    let opened = browser
        .script(
            "const f = document.querySelector('.turn.respondent form.correction'); \
             f.querySelector('textarea').value = 'The shipping cost surprised me, so I left the shop.'; \
             f.requestSubmit(); return true",
        )
        .await;
    assert_eq!(opened, Value::Bool(true));
    until(
        browser,
        "the corrected utterance",
        "return document.querySelector('.turn.respondent .said p')?.textContent.includes('left the shop') || null",
    )
    .await;

    // The respondent's persona, in its tab.
    let tab = browser.find("nav.tabs a[href$='/persona']").await;
    browser.click(&tab).await;
    until(
        browser,
        "the persona",
        "return location.pathname.endsWith('/persona') && document.querySelector('.report h1, .report h2') ? true : null",
    )
    .await;
    look(browser, "persona").await;

    // A report from a system preset, followed live until it is written.
    browser.go(&app.url(&format!("/p/{project}"))).await;
    browser
        .script("document.getElementById('generate').open = true; return true")
        .await;
    let preset = browser
        .script("const o = [...document.querySelectorAll('#preset option')].find((o) => o.value); o.selected = true; return o.textContent")
        .await;
    assert!(
        preset.as_str().is_some_and(|p| !p.is_empty()),
        "a system preset to choose: {preset}"
    );
    let generate = browser.find("#generate button[type=submit]").await;
    browser.click(&generate).await;
    let report_path = until(
        browser,
        "the report page",
        "return location.pathname.match(/\\/reports\\/[0-9a-f-]{36}$/) ? location.pathname : null",
    )
    .await;
    let report_path = report_path.as_str().expect("path").to_owned();
    until(
        browser,
        "the written report",
        "return document.getElementById('report-status')?.textContent === 'completed' && document.querySelector('.report h2, .report p') ? true : null",
    )
    .await;
    look(browser, "report").await;
    let citation = until(
        browser,
        "a citation linked to a moment",
        "return document.querySelector('.report a.citation')?.getAttribute('href') ?? null",
    )
    .await;
    let citation = citation.as_str().expect("href").to_owned();
    assert!(citation.starts_with("/r/") && citation.contains("#u"), "{citation}");
    let link = browser.find(".report a.citation").await;
    browser.click(&link).await;
    let landed = until(
        browser,
        "the quoted utterance",
        "return location.hash && document.querySelector(location.hash + ':target') ? location.pathname + location.hash : null",
    )
    .await;
    assert_eq!(
        landed.as_str(),
        Some(citation.as_str()),
        "the citation lands on the utterance it quotes"
    );

    // Edit with a preview, then share it.
    browser.go(&app.url(&format!("{report_path}/edit"))).await;
    let content = browser.find("#content").await;
    browser
        .script("document.getElementById('content').value = ''; return true")
        .await;
    browser
        .type_into(&content, "## What we heard\n\nShipping costs surprise buyers.")
        .await;
    let preview = browser.find("button[value=preview]").await;
    browser.click(&preview).await;
    until(
        browser,
        "the preview",
        "return document.querySelector('.preview h2')?.textContent === 'What we heard' || null",
    )
    .await;
    look(browser, "report-edit").await;
    let save = browser.find("button[value=save]").await;
    browser.click(&save).await;
    until(
        browser,
        "the saved report",
        "return !location.pathname.endsWith('/edit') && document.querySelector('.report h2')?.textContent === 'What we heard' || null",
    )
    .await;
    // Regenerating the edited report asks first, and says the edit stays.
    browser.go(&app.url(&format!("{report_path}/regenerate"))).await;
    until(
        browser,
        "the question before regenerating",
        "return document.body.textContent.includes('kept as a version') || null",
    )
    .await;
    look(browser, "report-regenerate").await;
    // Deleted, the report is still found at its address, marked so, and restored from there.
    browser.go(&app.url(&format!("{report_path}/delete"))).await;
    let confirm = browser.find("form[action$='/delete'] button[type=submit]").await;
    browser.click(&confirm).await;
    until(
        browser,
        "the project page",
        "return !location.pathname.includes('/reports/') || null",
    )
    .await;
    browser.go(&app.url(&report_path)).await;
    until(
        browser,
        "the deleted report",
        "return document.getElementById('deleted') ? true : null",
    )
    .await;
    let links = browser
        .script("return !!(document.getElementById('downloads') || document.getElementById('versions-link'))")
        .await;
    assert_eq!(
        links,
        Value::Bool(false),
        "a deleted report offers no downloads or versions (they answer 404)"
    );
    look(browser, "report-deleted").await;
    let restore = browser.find("#deleted button[type=submit]").await;
    browser.click(&restore).await;
    until(
        browser,
        "the restored report",
        "return !document.getElementById('deleted') && document.querySelector(\"form[action$='/share'] button\") ? true : null",
    )
    .await;
    let share = browser.find("form[action$='/share'] button").await;
    browser.click(&share).await;
    let public = until(
        browser,
        "the public link",
        "return document.getElementById('public-link')?.getAttribute('href') ?? null",
    )
    .await;
    let public = public
        .as_str()
        .expect("link")
        .replace("http://127.0.0.1:8000", &app.base);

    // Sign out; the shared report opens for anyone; the viewer finds nothing to change.
    let out = browser.find("form[action='/sign-out'] button").await;
    browser.click(&out).await;
    until(browser, "the sign-in page", "return location.pathname === '/sign-in'").await;
    browser.go(&public).await;
    until(
        browser,
        "the shared report",
        "return document.querySelector('.report h2')?.textContent === 'What we heard' || null",
    )
    .await;
    let owner = browser.script("return document.body.innerText").await;
    assert!(
        !owner.as_str().unwrap_or_default().contains(&researcher.email),
        "no owner details on the public page"
    );
    look(browser, "public-report").await;

    sign_in(browser, app, &viewer.email).await;
    browser.go(&app.url(&format!("/p/{project}"))).await;
    until(
        browser,
        "the project page",
        "return document.querySelector('#records') ? true : null",
    )
    .await;
    let controls = browser
        .script("return [...document.querySelectorAll('main form[method=post], main input[type=file]')].length")
        .await;
    assert_eq!(controls, json!(0), "a viewer sees no write control");
    look(browser, "project-viewer").await;
    // A forged write with the viewer's own session and CSRF token is refused anyway.
    let forged = browser
        .command(
            Method::POST,
            "/execute/async",
            json!({ "script": format!(
                "const done = arguments[arguments.length - 1]; \
                 fetch('/projects/{project}/records', {{ method: 'POST', headers: {{ 'Content-Type': 'application/json', \
                 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content }}, \
                 body: JSON.stringify({{ title: 'Forged', text: 'A: b' }}) }}).then((r) => done(r.status))"), "args": [] }),
        )
        .await;
    assert_eq!(forged, json!(403), "the server refuses a viewer's write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_researcher_brings_interviews_in_and_reads_them_in_the_console() {
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    set_password(&app, &researcher, PASSWORD).await;
    set_password(&app, &viewer, PASSWORD).await;

    in_chromium("the console test", async |browser| {
        the_researchers_day(browser, &app, &researcher, &viewer).await;
    })
    .await
    .then(app.stop())
    .await;
}

/// Tabs until the focused element matches `css` (at most 60 presses), as a keyboard user
/// moves through a page.
async fn tab_to(browser: &Browser, css: &str) {
    for _ in 0..60 {
        let there = browser
            .script(&format!("return document.activeElement?.matches({css:?}) ?? false"))
            .await;
        if there == Value::Bool(true) {
            return;
        }
        browser.keys("\u{E004}").await;
    }
    panic!("Tab never reached {css}");
}

async fn by_keyboard(browser: &Browser, app: &TestApp, researcher: &TestUser) {
    browser.go(&app.url("/")).await;
    until(browser, "the sign-in page", "return location.pathname === '/sign-in'").await;
    tab_to(browser, "#email").await;
    browser.keys(&researcher.email).await;
    tab_to(browser, "#password").await;
    browser.keys(&format!("{PASSWORD}\u{E007}")).await;
    until(
        browser,
        "the projects page",
        "return document.querySelector('h1')?.textContent.includes('Projects') || null",
    )
    .await;
    // The skip link comes first, then the form to start a project.
    browser.keys("\u{E004}").await;
    let skip = browser
        .script("return document.activeElement?.classList.contains('skip') ?? false")
        .await;
    assert_eq!(skip, Value::Bool(true), "the first Tab reaches the skip link");
    tab_to(browser, "#name").await;
    browser.keys("Typed study\u{E007}").await;
    until(
        browser,
        "the new project",
        "return document.querySelector('h1')?.textContent === 'Typed study' || null",
    )
    .await;
    tab_to(browser, "#paste summary").await;
    browser.keys("\u{E007}").await;
    tab_to(browser, "#title").await;
    browser.keys("Keyboard interview").await;
    tab_to(browser, "#text").await;
    browser
        .keys("Interviewer: Why the keyboard?\u{E007}Ben: Faster than the mouse for me.")
        .await;
    tab_to(browser, "#paste button[type=submit]").await;
    browser.keys("\u{E007}").await;
    until(
        browser,
        "the typed record, finished",
        "return [...document.querySelectorAll('#records [data-status]')].some((b) => b.textContent === 'Finished') || null",
    )
    .await;
    tab_to(browser, "#records a[href^='/r/']").await;
    browser.keys("\u{E007}").await;
    until(
        browser,
        "the transcript",
        "return document.querySelectorAll('.transcript .turn').length === 2 || null",
    )
    .await;
    // Focus is visible: the stylesheet's outline shows on what the keyboard reached.
    tab_to(browser, "nav.tabs a[href$='/persona']").await;
    let outline = browser
        .script("return getComputedStyle(document.activeElement).outlineStyle")
        .await;
    assert_ne!(outline, json!("none"), "a visible focus");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_main_flow_works_from_the_keyboard_alone() {
    let app = TestApp::start().await;
    let researcher = app.user().await;
    set_password(&app, &researcher, PASSWORD).await;
    in_chromium("the keyboard test", async |browser| {
        by_keyboard(browser, &app, &researcher).await
    })
    .await
    .then(app.stop())
    .await;
}
