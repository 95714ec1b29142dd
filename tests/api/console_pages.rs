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
