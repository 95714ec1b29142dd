//! Asking questions in the console, in a real headless Chromium against the model stub
//! (`chat.rs`): a question about a record streams its answer in, word by word, and the
//! answer's citation scrolls the transcript to the quoted utterance and marks it; the
//! thread is renamed and a new one started. The research assistant answers about the
//! project with a citation that opens the right record at the right moment, and its
//! draft of research goals becomes the project's once the researcher saves it. Without
//! the script, the same question posted as a form is answered on the page.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, ORIGIN};
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, csrf_meta, forms, set_password};
use crate::support::browser::{Browser, in_chromium, look, sign_in, until};
use crate::support::models::{Mode, ModelStub, model_app, model_stub, searxng_app};
use crate::support::records::{ANNA, REAL_QUOTE, interview, stt_stub, upload, wait_for};
use crate::support::{TestApp, TestUser};

const DRAFT: &str = "Here is a first draft.\n\n## Research goals\n\n1. Learn why invoices arrive late.\n\
                     2. Learn what chasing finance costs.\n\n## Interview guide\n\n1. Tell me about your billing.";

/// Waits for the empty chat (`what`), saves it as `name` and asks `question` there.
async fn ask(browser: &Browser, what: &str, name: &str, question: &str) {
    until(
        browser,
        what,
        "return document.getElementById('chat-message') ? true : null",
    )
    .await;
    look(browser, name).await;
    let field = browser.find("#chat-message").await;
    browser.type_into(&field, question).await;
    let ask = browser.find("form[data-chat] button[type=submit]:not([name])").await;
    browser.click(&ask).await;
}

async fn asking(browser: &Browser, app: &TestApp, stub: &ModelStub, user: &TestUser) {
    let (project, record) = interview(app, user, ANNA).await;
    sign_in(browser, app, &user.email).await;

    // A question about the record, answered as it is written.
    browser.go(&app.url(&format!("/r/{record}"))).await;
    ask(
        browser,
        "the chat form",
        "record-chat-empty",
        "Why does Anna chase finance?",
    )
    .await;
    let partial = until(
        browser,
        "the answer streaming in",
        "const a = document.querySelector('#chat .message.answer.streaming .report'); \
         return a && a.textContent.length > 0 ? a.textContent : null",
    )
    .await;
    let partial = partial.as_str().expect("text").to_owned();
    let link = until(
        browser,
        "the stored answer with its citation",
        "return !document.querySelector('#chat .streaming') && \
         document.querySelector('#chat .message.answer a.citation')?.getAttribute('href') || null",
    )
    .await;
    let link = link.as_str().expect("href").to_owned();
    let answer = browser
        .script("return document.querySelector('#chat .message.answer .report').textContent")
        .await;
    let answer = answer.as_str().expect("answer");
    assert!(
        partial.len() < answer.len() && answer.contains(REAL_QUOTE),
        "streamed in pieces ({partial:?}) into the whole answer ({answer:?})"
    );
    assert!(link.starts_with(&format!("/r/{record}#u")), "{link}");
    let search = browser.script("return location.search").await;
    assert!(search.as_str().is_some_and(|s| s.starts_with("?thread=")), "{search}");

    // The citation scrolls the transcript to the quoted utterance and marks it.
    let citation = browser.find("#chat .message.answer a.citation").await;
    browser.click(&citation).await;
    let cited = until(
        browser,
        "the cited utterance marked",
        "const t = document.querySelector('.turn.cited'); return t ? [t.id, t.textContent, location.hash] : null",
    )
    .await;
    let anchor = link.split('#').nth(1).expect("anchor");
    assert_eq!(cited[0], json!(anchor), "the quoted utterance is the one marked");
    assert!(cited[1].as_str().is_some_and(|t| t.contains(REAL_QUOTE)), "{cited}");
    assert_eq!(cited[2], json!(format!("#{anchor}")));
    let in_view = browser
        .script(
            "const r = document.querySelector('.turn.cited').getBoundingClientRect(); \
             return r.top >= 0 && r.bottom <= window.innerHeight + r.height",
        )
        .await;
    assert_eq!(in_view, Value::Bool(true), "the cited utterance is scrolled into view");
    look(browser, "record-chat").await;

    // The thread renamed, then a new one started.
    browser
        .script(
            "const d = document.querySelector('#chat details.rename'); d.open = true; \
             const f = d.querySelector('input[name=title]'); f.value = 'Chasing finance'; \
             d.querySelector('form').requestSubmit(); return true",
        )
        .await;
    until(
        browser,
        "the renamed thread",
        "return document.querySelector('#chat .threads a[aria-current=page]')?.textContent === 'Chasing finance' || null",
    )
    .await;
    let fresh = browser.find("#chat .threads a[href$='thread=new#chat']").await;
    browser.click(&fresh).await;
    until(
        browser,
        "a new, empty thread",
        "return location.search === '?thread=new' && document.getElementById('chat-empty') && \
         document.querySelectorAll('#chat .threads a').length === 2 || null",
    )
    .await;

    // The research assistant on the project: its citation opens the record at the moment.
    let record_answer = format!("Anna chases finance every month: \"{REAL_QUOTE}\" [Anna, #2]");
    stub.set(Mode::Answer {
        text: record_answer,
        gap: Duration::from_millis(20),
    });
    browser.go(&app.url(&format!("/p/{project}"))).await;
    let tab = browser.find("nav.tabs a[href$='/assistant']").await;
    browser.click(&tab).await;
    ask(
        browser,
        "the assistant",
        "assistant-empty",
        "Who chases finance, and why?",
    )
    .await;
    let link = until(
        browser,
        "the assistant's answer with its citation",
        "return !document.querySelector('#chat .streaming') && \
         document.querySelector('#chat .message.answer a.citation')?.getAttribute('href') || null",
    )
    .await;
    let link = link.as_str().expect("href").to_owned();
    assert!(link.starts_with(&format!("/r/{record}#u")), "{link}");
    look(browser, "assistant").await;
    let citation = browser.find("#chat .message.answer a.citation").await;
    browser.click(&citation).await;
    let landed = until(
        browser,
        "the record at the cited moment",
        "const t = document.querySelector('.turn.cited'); return t ? location.pathname + '#' + t.id : null",
    )
    .await;
    assert_eq!(landed.as_str(), Some(link.as_str()));

    // A draft of research goals, taken into the project once saved.
    stub.set(Mode::Answer {
        text: DRAFT.to_owned(),
        gap: Duration::ZERO,
    });
    browser.go(&app.url(&format!("/p/{project}/assistant"))).await;
    let draft = browser.find("button[name=draft][value=goals]").await;
    browser.click(&draft).await;
    let accept = until(
        browser,
        "the offer to use the draft",
        "return document.querySelector('#chat .message.answer a[href*=\"field=research_goals\"]')?.getAttribute('href') || null",
    )
    .await;
    assert!(
        accept.as_str().is_some_and(|a| a.contains("/assistant/accept?")),
        "{accept}"
    );
    let use_it = browser
        .find("#chat .message.answer a[href*='field=research_goals']")
        .await;
    browser.click(&use_it).await;
    let text = until(
        browser,
        "the draft to edit",
        "return document.getElementById('text')?.value || null",
    )
    .await;
    assert_eq!(
        text,
        json!("1. Learn why invoices arrive late.\n2. Learn what chasing finance costs.")
    );
    look(browser, "assistant-accept").await;
    let (_, before) = app.get(&format!("/projects/{project}"), user).await;
    assert_eq!(before["research_goals"], json!(""), "nothing changes before saving");
    let save = browser
        .find("form[action$='/assistant/accept'] button[type=submit]")
        .await;
    browser.click(&save).await;
    until(
        browser,
        "the project with its goals",
        "return location.pathname.split('/').length === 3 && document.body.textContent.includes('Learn why invoices arrive late') || null",
    )
    .await;
    let (_, after) = app.get(&format!("/projects/{project}"), user).await;
    assert!(
        after["research_goals"]
            .as_str()
            .is_some_and(|g| g.starts_with("1. Learn why invoices arrive late.")),
        "{after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_stream_in_the_console_with_citations_that_open_their_moment() {
    let text = format!("She has to chase finance every month: \"{REAL_QUOTE}\" [Anna, #2]");
    let (addr, stub) = model_stub(&text).await;
    stub.set(Mode::Answer {
        text,
        gap: Duration::from_millis(30),
    });
    let app = model_app(addr).await;
    let user = app.user().await;
    set_password(&app, &user, PASSWORD).await;
    in_chromium("the console chat test", async |browser| {
        asking(browser, &app, &stub, &user).await
    })
    .await
    .then(app.stop())
    .await;
}

#[tokio::test]
async fn without_the_script_a_question_posted_as_a_form_is_answered_on_the_page() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record) = interview(&app, &user, ANNA).await;
    let cookie = crate::support::accounts::sign_in(&app, &user).await;
    let get = |path: String| {
        let request = app.client.get(app.url(&path)).header(COOKIE, &cookie);
        async move {
            let response = request.send().await.expect("page");
            (response.status(), response.text().await.expect("html"))
        }
    };
    let (status, html) = get(format!("/r/{record}")).await;
    assert_eq!(status, StatusCode::OK);
    let csrf = csrf_meta(&html);
    assert!(
        !html.contains("name=\"use_web\""),
        "no web search switch without a provider"
    );
    let forms = forms();
    let post = |path: String, form: Vec<(&'static str, String)>| {
        let request = forms
            .post(app.url(&path))
            .header(COOKIE, &cookie)
            .header(ORIGIN, &app.base)
            .form(&form);
        async move { request.send().await.expect("post") }
    };

    // Without the token the question is refused and nothing is stored.
    let refused = post(
        format!("/r/{record}/chat"),
        vec![("csrf", "forged".into()), ("message", "Why?".into())],
    )
    .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    // A question over the API's limit is refused by the form too, and never reaches a model.
    let long = post(
        format!("/r/{record}/chat"),
        vec![("csrf", csrf.clone()), ("message", "why ".repeat(5_001))],
    )
    .await;
    assert_eq!(long.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let said = long.text().await.expect("page");
    assert!(said.contains("at most 20000 characters"), "{said}");
    let (_, threads) = app.get(&format!("/insight/{record}/chat/threads/"), &user).await;
    assert_eq!(threads, json!([]));

    let answered = post(
        format!("/r/{record}/chat"),
        vec![
            ("csrf", csrf.clone()),
            ("message", "What does Anna say about invoices?".into()),
            ("thread_id", String::new()),
        ],
    )
    .await;
    assert_eq!(answered.status(), StatusCode::SEE_OTHER);
    let to = answered.headers()[LOCATION].to_str().expect("location").to_owned();
    assert!(to.starts_with(&format!("/r/{record}?thread=")), "{to}");
    let (_, html) = get(to.split('#').next().expect("path").to_owned()).await;
    assert!(
        html.contains("What does Anna say about invoices?"),
        "the question is on the page"
    );
    assert!(
        html.contains("class=\"message answer\"") && html.contains("a class=\"citation\""),
        "the offline engine's answer, with a citation link"
    );

    // A blank rename is refused in plain words; a real one is kept.
    let thread = to
        .split("thread=")
        .nth(1)
        .expect("id")
        .split('#')
        .next()
        .expect("id")
        .to_owned();
    let blank = post(
        format!("/r/{record}/chat/threads/{thread}/rename"),
        vec![("csrf", csrf.clone()), ("title", "  ".into())],
    )
    .await;
    assert_eq!(blank.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let renamed = post(
        format!("/r/{record}/chat/threads/{thread}/rename"),
        vec![("csrf", csrf.clone()), ("title", "Invoices".into())],
    )
    .await;
    assert_eq!(renamed.status(), StatusCode::SEE_OTHER);
    let (_, threads) = app.get(&format!("/insight/{record}/chat/threads/"), &user).await;
    assert_eq!(threads[0]["title"], json!("Invoices"));

    // The assistant, by form: a draft button asks for a draft of research goals.
    let (_, html) = get(format!("/p/{project}/assistant")).await;
    assert!(
        html.contains("name=\"draft\" value=\"goals\""),
        "a writer is offered drafts"
    );
    let drafted = post(
        format!("/p/{project}/assistant"),
        vec![("csrf", csrf.clone()), ("draft", "goals".into())],
    )
    .await;
    let status = drafted.status();
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "{}",
        drafted.text().await.unwrap_or_default()
    );
    let to = drafted.headers()[LOCATION].to_str().expect("location").to_owned();
    let (_, html) = get(to.split('#').next().expect("path").to_owned()).await;
    assert!(html.contains("Draft research goals for this project."), "{html}");
    assert!(
        html.contains("field=research_goals"),
        "the offline draft can be taken into the project"
    );

    // Someone else's thread is not found, on the page or by rename.
    let other = app.user().await;
    let other_cookie = crate::support::accounts::sign_in(&app, &other).await;
    let response = app
        .client
        .get(app.url(&format!("/r/{record}?thread={thread}")))
        .header(COOKIE, &other_cookie)
        .send()
        .await
        .expect("page");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn a_record_thread_is_renamed_through_the_api_by_its_owner_only() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (_, record) = interview(&app, &user, ANNA).await;
    let (status, thread) = app
        .post(&format!("/insight/{record}/chat/new-thread/"), &user, json!({}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!("/insight/{record}/chat/threads/{}", thread["id"]);
    let (status, renamed) = app
        .call(
            reqwest::Method::PATCH,
            &path,
            Some(&user.token),
            Some(json!({ "title": " Pricing " })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["title"], json!("Pricing"));
    assert_eq!(renamed["id"], thread["id"]);
    let (status, _) = app
        .call(
            reqwest::Method::PATCH,
            &path,
            Some(&user.token),
            Some(json!({ "title": "" })),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = app
        .call(
            reqwest::Method::PATCH,
            &format!("/insight/{record}/chat/threads/999999"),
            Some(&user.token),
            Some(json!({ "title": "x" })),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn the_web_search_switch_is_offered_when_a_provider_is_configured_and_searches() {
    let (app, seen) = searxng_app().await;
    let user = app.user().await;
    let (_, record) = interview(&app, &user, ANNA).await;
    let cookie = crate::support::accounts::sign_in(&app, &user).await;
    let page = |path: String| {
        let request = app.client.get(app.url(&path)).header(COOKIE, &cookie);
        async move { request.send().await.expect("page").text().await.expect("html") }
    };
    let html = page(format!("/r/{record}")).await;
    assert!(html.contains("name=\"use_web\""), "the switch is on the page");
    let forms = forms();
    let answered = forms
        .post(app.url(&format!("/r/{record}/chat")))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&[
            ("csrf", csrf_meta(&html).as_str()),
            ("message", "How do other teams handle invoices?"),
            ("use_web", "true"),
        ])
        .send()
        .await
        .expect("post");
    assert_eq!(answered.status(), StatusCode::SEE_OTHER);
    assert_eq!(seen.lock().expect("lock").len(), 1, "the web was searched");
    let to = answered.headers()[LOCATION].to_str().expect("location").to_owned();
    let html = page(to.split('#').next().expect("path").to_owned()).await;
    assert!(
        html.contains("href=\"https://example.org/pricing\""),
        "the web citation is a link"
    );
    app.stop().await;
}

/// A real WAV file of `seconds` of silence, 16 kHz mono, long enough to pause.
fn silence(seconds: u32) -> Vec<u8> {
    let samples = 16_000 * seconds;
    let mut bytes = crate::support::records::wav();
    bytes.truncate(44);
    bytes[4..8].copy_from_slice(&(36 + samples * 2).to_le_bytes());
    bytes[40..44].copy_from_slice(&(samples * 2).to_le_bytes());
    bytes.resize(44 + samples as usize * 2, 0);
    bytes
}

async fn by_shortcuts(browser: &Browser, app: &TestApp, user: &TestUser) {
    let project = app.project(user, "Onboarding calls").await;
    let (status, record) = upload(app, user, &project, "call.wav", "audio/wav", silence(10), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("id").to_owned();
    wait_for(app, user, &record, &["Finished"]).await;
    sign_in(browser, app, &user.email).await;
    browser.go(&app.url(&format!("/r/{record}"))).await;
    until(
        browser,
        "the transcript",
        "return document.querySelectorAll('.transcript .turn').length === 2 || null",
    )
    .await;
    let focused = "return document.activeElement?.id ?? null";
    let turns = browser
        .script("return [...document.querySelectorAll('.transcript .turn')].map((t) => t.id)")
        .await;

    // j and k move through the utterances; the address names the one the reader is on.
    browser.keys("j").await;
    assert_eq!(browser.script(focused).await, turns[0]);
    browser.keys("j").await;
    assert_eq!(browser.script(focused).await, turns[1]);
    browser.keys("j").await;
    assert_eq!(browser.script(focused).await, turns[1], "the last stays the last");
    let hash = browser.script("return location.hash").await;
    assert_eq!(hash, json!(format!("#{}", turns[1].as_str().expect("id"))));

    // p plays from the utterance the reader is on (2.9 s), and pauses.
    browser.keys("p").await;
    let playing = until(
        browser,
        "the recording playing from the second utterance",
        "const p = document.getElementById('player'); return !p.paused && p.currentTime >= 2.9 ? p.currentTime : null",
    )
    .await;
    assert!(playing.as_f64().is_some_and(|t| t < 9.0), "{playing}");
    browser.keys("p").await;
    until(
        browser,
        "the recording paused",
        "return document.getElementById('player').paused || null",
    )
    .await;
    browser.keys("k").await;
    assert_eq!(browser.script(focused).await, turns[0]);

    // ? lists the shortcuts; Escape closes the list.
    browser.keys("?").await;
    until(
        browser,
        "the shortcuts",
        "return document.getElementById('shortcuts').open || null",
    )
    .await;
    look(browser, "shortcuts").await;
    browser.keys("j").await;
    let inside = browser
        .script("return Boolean(document.activeElement?.closest('#shortcuts')) && location.hash")
        .await;
    assert_eq!(
        inside,
        json!(format!("#{}", turns[0].as_str().expect("id"))),
        "keys go to the open list, not the page"
    );
    browser.keys("\u{E00C}").await;
    until(
        browser,
        "the list closed",
        "return !document.getElementById('shortcuts').open || null",
    )
    .await;

    // c goes to the question; letters typed there are text, not shortcuts.
    browser.keys("c").await;
    assert_eq!(browser.script(focused).await, json!("chat-message"));
    browser.keys("jk").await;
    let typed = browser
        .script("return document.getElementById('chat-message').value")
        .await;
    assert_eq!(typed, json!("jk"));

    // / searches: on a page without a search field, the workspace search.
    browser.script("document.activeElement.blur(); return true").await;
    browser.keys("/").await;
    until(
        browser,
        "the workspace search focused",
        "return location.pathname === '/search' && document.activeElement?.id === 'search-q' || null",
    )
    .await;
    browser.keys("Onboarding\u{E007}").await;
    until(
        browser,
        "the search answered",
        "return location.search.includes('q=Onboarding') && document.querySelector('main [role=status]')?.textContent.includes('Onboarding') || null",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_shortcuts_move_through_a_transcript_play_it_and_are_listed_on_question_mark() {
    let (addr, _stt) = stt_stub().await;
    let app = TestApp::start_with(|settings| settings.speech.stt_base_url = Some(format!("http://{addr}/v1"))).await;
    let user = app.user().await;
    set_password(&app, &user, PASSWORD).await;
    in_chromium("the shortcuts test", async |browser| {
        by_shortcuts(browser, &app, &user).await
    })
    .await
    .then(app.stop())
    .await;
}
