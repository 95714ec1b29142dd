//! The console's pages over plain HTTP (the browser test, `console.rs`, walks the flow):
//! who may fetch a recording, ranges for the player, and forms refused without their
//! CSRF token or from another origin.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, ORIGIN, RANGE};

use crate::support::TestApp;
use crate::support::accounts::{forms, http_session, sign_in};
use crate::support::records::{stt_stub, upload, wait_for, wav};

#[tokio::test]
async fn a_recording_plays_in_ranges_for_those_who_may_read_its_record() {
    let (addr, _stub) = stt_stub().await;
    let app = TestApp::start_with(|settings| settings.speech.stt_base_url = Some(format!("http://{addr}/v1"))).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Calls").await;
    let audio = wav();
    let (status, record) = upload(&app, &ann, &project, "call.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    wait_for(&app, &ann, &id, &["Finished"]).await;

    let cookie = sign_in(&app, &ann).await;
    let page = app
        .client
        .get(app.url(&format!("/r/{id}")))
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("page");
    let html = page.text().await.expect("html");
    assert!(
        html.contains(&format!("src=\"/r/{id}/recording\"")),
        "the page has a player"
    );

    let part = app
        .client
        .get(app.url(&format!("/r/{id}/recording")))
        .header(COOKIE, &cookie)
        .header(RANGE, "bytes=4-11")
        .send()
        .await
        .expect("range");
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()[CONTENT_TYPE], "audio/wav");
    assert_eq!(part.bytes().await.expect("bytes").as_ref(), &audio[4..12]);

    let bob = app.user().await;
    let other = sign_in(&app, &bob).await;
    let refused = app
        .client
        .get(app.url(&format!("/r/{id}/recording")))
        .header(COOKIE, &other)
        .send()
        .await
        .expect("other");
    assert_eq!(refused.status(), StatusCode::NOT_FOUND, "another workspace's recording");
    let answer = forms()
        .get(app.url(&format!("/r/{id}/recording")))
        .send()
        .await
        .expect("anonymous");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER, "to the sign-in page");
    app.stop().await;
}

#[tokio::test]
async fn a_form_without_its_csrf_token_or_from_another_site_changes_nothing() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (client, cookie, csrf) = http_session(&app, &ann, "/").await;
    let create = |csrf: &str, origin: &str| {
        client
            .post(app.url("/p"))
            .header(COOKIE, &cookie)
            .header(ORIGIN, origin.to_owned())
            .form(&[("csrf", csrf), ("name", "Forged")])
            .send()
    };
    assert_eq!(
        create("forged", &app.base).await.expect("sent").status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        create(&csrf, "https://evil.example").await.expect("sent").status(),
        StatusCode::FORBIDDEN
    );
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects, serde_json::json!([]), "nothing was made");
    let made = create(&csrf, &app.base).await.expect("sent");
    assert_eq!(made.status(), StatusCode::SEE_OTHER);
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects[0]["name"], "Forged");
    // Pages carry the console's Content-Security-Policy.
    let page = client
        .get(app.url("/"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("page");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    app.stop().await;
}

/// The page at `path` as the signed-in visitor gets it: its status and HTML.
async fn page(app: &TestApp, client: &reqwest::Client, cookie: &str, path: &str) -> (StatusCode, String) {
    let response = client
        .get(app.url(path))
        .header(COOKIE, cookie)
        .send()
        .await
        .expect("page");
    let status = response.status();
    (status, response.text().await.expect("html"))
}

#[tokio::test]
async fn long_lists_are_paged_and_edit_forms_come_when_asked_for_without_a_script() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Many interviews").await;
    for n in 0..60 {
        let (status, record) = app
            .post(
                &format!("/projects/{project}/records"),
                &ann,
                serde_json::json!({ "title": format!("Interview {n:02}"), "text": format!("Interviewer: Why?\nRespondent: Because of reason {n}.") }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
    }
    let (client, cookie, csrf) = http_session(&app, &ann, &format!("/p/{project}")).await;
    let rows = |html: &str| html.matches("<tr data-record=").count();
    let (status, first) = page(&app, &client, &cookie, &format!("/p/{project}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows(&first), 50, "a page of the records table");
    assert!(
        first.contains("<span class=\"count\">60</span>"),
        "the heading counts them all"
    );
    assert!(
        first.contains(">Interview 59</a>") && !first.contains(">Interview 00</a>"),
        "newest first"
    );
    let older = format!("/p/{project}?records=2#records-heading");
    assert!(
        first.contains(&format!("href=\"{older}\"")),
        "a plain link to the older ones"
    );
    let (_, second) = page(&app, &client, &cookie, &format!("/p/{project}?records=2")).await;
    assert_eq!(rows(&second), 10);
    assert!(second.contains(">Interview 00</a>") && second.contains("rel=\"prev\""));
    let (status, beyond) = page(&app, &client, &cookie, &format!("/p/{project}?records=99")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows(&beyond), 10, "a page past the end shows the last");

    // A transcript carries a link per turn, not a correction form with its text again.
    let id = crate::support::records::finished_record(
        &app,
        &ann,
        &project,
        "Corrected",
        "Interviewer: What happened?\nAnna: The shiping cost surprised me.",
    )
    .await;
    let (_, transcript) = page(&app, &client, &cookie, &format!("/r/{id}")).await;
    assert!(
        !transcript.contains("<textarea id=\"fix-"),
        "no correction form in the page"
    );
    let link = format!("href=\"/r/{id}/u/2\"");
    assert!(transcript.contains(&link), "a link to correct the second turn");
    let (status, form) = page(&app, &client, &cookie, &format!("/r/{id}/u/2")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(form.contains("The shiping cost surprised me.</textarea>"), "{form}");
    let saved = client
        .post(app.url(&format!("/r/{id}/u/2")))
        .header(COOKIE, &cookie)
        .header(ORIGIN, app.base.clone())
        .form(&[("csrf", csrf.as_str()), ("text", "The shipping cost surprised me.")])
        .send()
        .await
        .expect("correct");
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(saved.headers()["location"], format!("/r/{id}#u2").as_str());
    let (_, record) = app.get(&format!("/insight/{id}/"), &ann).await;
    assert_eq!(record["utterances"][1]["text"], "The shipping cost surprised me.");
    let (status, _) = page(&app, &client, &cookie, &format!("/r/{id}/u/9")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a turn the record does not have");
    let bob = app.user().await;
    let (other, other_cookie, _) = http_session(&app, &bob, "/").await;
    let (status, _) = page(&app, &other, &other_cookie, &format!("/r/{id}/u/2")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another workspace's record");

    // The record's language, said by a person in its page.
    let said = |language: &'static str| {
        client
            .post(app.url(&format!("/r/{id}/language")))
            .header(COOKIE, &cookie)
            .header(ORIGIN, app.base.clone())
            .form(&[("csrf", csrf.as_str()), ("language", language)])
            .send()
    };
    assert_eq!(
        said("German!").await.expect("sent").status(),
        StatusCode::UNPROCESSABLE_ENTITY
    );
    assert_eq!(said("de").await.expect("sent").status(), StatusCode::SEE_OTHER);
    let (_, record) = app.get(&format!("/insight/{id}/"), &ann).await;
    assert_eq!(record["language"], "de");
    app.stop().await;
}
