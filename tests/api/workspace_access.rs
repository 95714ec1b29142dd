//! A workspace's children and invitations over HTTP, as someone outside it (or inside it
//! with too small a role) probes them: the answers say nothing about who belongs to the
//! workspace or which invitations it has, and an invitation's link lets in only the
//! address it was sent to, with the role the answer states.

use reqwest::header::{COOKIE, ORIGIN};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::accounts::{Session, login, set_password};
use crate::support::{TestApp, TestUser};

use insight::domain::workspace::Role;

const PASSWORD: &str = "a member's long passphrase";

/// A team workspace of `owner`'s, with `members` added under their roles.
async fn team(app: &TestApp, owner: &TestUser, members: &[(&TestUser, Role)]) -> String {
    let (status, workspace) = app
        .post("/workspaces", owner, json!({ "name": "Growth research" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{workspace}");
    let id = workspace["id"].as_str().expect("workspace id").to_owned();
    for (member, role) in members {
        let added = app
            .store
            .add_member(id.parse().expect("uuid"), member.id, *role)
            .await
            .expect("add member");
        assert!(added);
    }
    id
}

/// An invitation of `email` into `workspace` with `role`: its id and its link's token.
async fn invite(app: &TestApp, admin: &TestUser, workspace: &str, email: &str, role: &str) -> (String, String) {
    let (status, invitation) = app
        .post(
            &format!("/workspaces/{workspace}/invitations"),
            admin,
            json!({ "email": email, "role": role }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{invitation}");
    let token = invitation["url"]
        .as_str()
        .and_then(|url| url.rsplit('/').next())
        .expect("a link")
        .to_owned();
    (invitation["id"].as_str().expect("id").to_owned(), token)
}

/// The caller's role in `workspace` as `GET /me` says it, `None` when he is not in it.
async fn role_in(app: &TestApp, user: &TestUser, workspace: &str) -> Option<String> {
    let (status, me) = app.get("/me", user).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    me["workspaces"]
        .as_array()
        .expect("workspaces")
        .iter()
        .find(|w| w["id"] == workspace)
        .map(|w| w["role"].as_str().expect("role").to_owned())
}

#[tokio::test]
async fn an_outsider_learns_nothing_about_a_workspaces_members_or_invitations() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let member = app.user().await;
    let outsider = app.user().await;
    let workspace = team(&app, &owner, &[(&member, Role::Researcher)]).await;
    let (invitation, _) = invite(&app, &owner, &workspace, "someone@example.org", "viewer").await;
    let nobody = Uuid::new_v4();
    let no_workspace = Uuid::new_v4();

    // Each child path, once naming what exists and once what does not: the outsider gets
    // one answer for both, the same as for a workspace that does not exist.
    let probes: Vec<(Method, String, String, Option<Value>)> = vec![
        (
            Method::DELETE,
            format!("members/{}", member.id),
            format!("members/{nobody}"),
            None,
        ),
        (
            Method::PATCH,
            format!("members/{}", member.id),
            format!("members/{nobody}"),
            Some(json!({ "role": "viewer" })),
        ),
        (
            Method::DELETE,
            format!("members/{}", owner.id),
            format!("members/{nobody}"),
            None,
        ),
        (
            Method::DELETE,
            format!("invitations/{invitation}"),
            format!("invitations/{nobody}"),
            None,
        ),
    ];
    for (method, existing, missing, body) in &probes {
        let mut answers = Vec::new();
        for path in [
            format!("/workspaces/{workspace}/{existing}"),
            format!("/workspaces/{workspace}/{missing}"),
            format!("/workspaces/{no_workspace}/{missing}"),
        ] {
            answers.push(
                app.call(method.clone(), &path, Some(&outsider.token), body.clone())
                    .await,
            );
        }
        assert_eq!(
            answers[0],
            (StatusCode::NOT_FOUND, json!({ "detail": "Workspace not found" })),
            "{method} {existing}"
        );
        assert_eq!(answers[0], answers[1], "{method} {existing} vs {missing}");
        assert_eq!(answers[1], answers[2], "{method} {missing}: as for no workspace at all");
    }
    // The workspace's other children answer the outsider as an unknown workspace, too.
    for (method, child, body) in [
        (Method::GET, "members", None),
        (Method::GET, "invitations", None),
        (
            Method::POST,
            "invitations",
            Some(json!({ "email": "x@example.org", "role": "viewer" })),
        ),
        (Method::GET, "audit", None),
        (Method::GET, "tags", None),
        (Method::POST, "tags", Some(json!({ "name": "Billing" }))),
        (Method::GET, "settings", None),
        (Method::PATCH, "settings", Some(json!({ "pseudonymise": false }))),
        (Method::GET, "usage", None),
        (Method::POST, "erasure", Some(json!({ "email": "someone@example.org" }))),
    ] {
        let there = app
            .call(
                method.clone(),
                &format!("/workspaces/{workspace}/{child}"),
                Some(&outsider.token),
                body.clone(),
            )
            .await;
        let nowhere = app
            .call(
                method.clone(),
                &format!("/workspaces/{no_workspace}/{child}"),
                Some(&outsider.token),
                body,
            )
            .await;
        assert_eq!(there.0, StatusCode::NOT_FOUND, "{method} {child}: {}", there.1);
        assert_eq!(there, nowhere, "{method} {child}");
    }

    // Nothing changed: the member is there with his role, the invitation still open.
    assert_eq!(role_in(&app, &member, &workspace).await.as_deref(), Some("researcher"));
    let (_, invitations) = app.get(&format!("/workspaces/{workspace}/invitations"), &owner).await;
    assert_eq!(invitations[0]["id"], invitation.as_str(), "{invitations}");
    app.stop().await;
}

#[tokio::test]
async fn a_viewer_gets_one_answer_whether_or_not_the_member_exists() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let member = app.user().await;
    let viewer = app.user().await;
    let workspace = team(&app, &owner, &[(&member, Role::Researcher), (&viewer, Role::Viewer)]).await;
    let nobody = Uuid::new_v4();
    let refused =
        json!({ "detail": "Your role in this workspace (viewer) does not allow you to manage this workspace" });

    // The JSON API.
    for (method, body) in [
        (Method::DELETE, None),
        (Method::PATCH, Some(json!({ "role": "viewer" }))),
    ] {
        for uid in [member.id, nobody] {
            let answer = app
                .call(
                    method.clone(),
                    &format!("/workspaces/{workspace}/members/{uid}"),
                    Some(&viewer.token),
                    body.clone(),
                )
                .await;
            assert_eq!(answer, (StatusCode::FORBIDDEN, refused.clone()), "{method} {uid}");
        }
    }

    // The console, in the viewer's session with the team workspace chosen.
    set_password(&app, &viewer, PASSWORD).await;
    let (status, browser, body, _) = login(&app, &viewer.email, PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let browser = browser.expect("a session");
    let mut answers = Vec::new();
    for uid in [member.id, nobody] {
        let confirm = console(
            &app,
            &browser,
            &workspace,
            Method::GET,
            &format!("members/{uid}/remove"),
        )
        .await;
        let remove = console(
            &app,
            &browser,
            &workspace,
            Method::POST,
            &format!("members/{uid}/remove"),
        )
        .await;
        let role = console(&app, &browser, &workspace, Method::POST, &format!("members/{uid}/role")).await;
        answers.push((confirm, remove, role));
    }
    for (status, page) in [&answers[0].0, &answers[0].1, &answers[0].2] {
        assert_eq!(*status, StatusCode::FORBIDDEN, "{page}");
        assert!(page.contains("(viewer) does not allow you to manage"), "{page}");
    }
    assert_eq!(answers[0], answers[1], "a member and no one look alike");
    assert_eq!(role_in(&app, &member, &workspace).await.as_deref(), Some("researcher"));
    app.stop().await;
}

/// A console request of `browser` in `workspace` to `/settings/workspace/{path}`: a GET,
/// or a POST of the form with the session's CSRF token from the service's own origin.
async fn console(
    app: &TestApp,
    browser: &Session,
    workspace: &str,
    method: Method,
    path: &str,
) -> (StatusCode, String) {
    let request = app
        .client
        .request(method.clone(), app.url(&format!("/settings/workspace/{path}")))
        .header(COOKIE, format!("{}; insight_workspace={workspace}", browser.cookie));
    let request = if method == Method::POST {
        request
            .header(ORIGIN, &app.base)
            .form(&[("csrf", browser.csrf.as_str()), ("role", "viewer")])
    } else {
        request
    };
    let response = request.send().await.expect("console request");
    let status = response.status();
    (status, response.text().await.expect("page"))
}

/// `POST /invitations/{token}/accept` with `user`'s token.
async fn accept(app: &TestApp, user: &TestUser, token: &str) -> (StatusCode, Value) {
    app.call(
        Method::POST,
        &format!("/invitations/{token}/accept"),
        Some(&user.token),
        None,
    )
    .await
}

#[tokio::test]
async fn an_invitation_lets_in_only_the_address_it_was_sent_to() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let viewer = app.user().await;
    let stranger = app.user().await;
    let workspace = team(&app, &owner, &[(&viewer, Role::Viewer)]).await;
    let alice = format!("alice-{}@example.org", Uuid::new_v4().simple());
    let (invitation, token) = invite(&app, &owner, &workspace, &alice, "admin").await;

    // Neither a viewer of the workspace nor a stranger holding the link takes it.
    for (who, before) in [(&viewer, Some("viewer")), (&stranger, None)] {
        let (status, body) = accept(&app, who, &token).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        let detail = body["detail"].as_str().expect("a sentence");
        assert!(detail.contains(&alice) && detail.contains(&who.email), "{detail}");
        assert_eq!(role_in(&app, who, &workspace).await.as_deref(), before, "{}", who.email);
    }
    let (_, open) = app.get(&format!("/workspaces/{workspace}/invitations"), &owner).await;
    assert_eq!(
        (open[0]["id"].as_str(), open[0]["accepted_at"].clone()),
        (Some(invitation.as_str()), Value::Null),
        "the invitation is still open: {open}"
    );

    // The invited address signs up with it and gets the role it was sent.
    let response = app
        .client
        .post(app.url(&format!("/invitations/{token}/accept")))
        .json(&json!({ "password": PASSWORD }))
        .send()
        .await
        .expect("accept");
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        (body["workspace_id"].as_str(), body["role"].as_str()),
        (Some(workspace.as_str()), Some("admin"))
    );

    // An account's address is compared without case.
    let email = format!("Dana.Case-{}@Example.ORG", Uuid::new_v4().simple());
    let dana = app.store.add_user(&email).await.expect("add").expect("new");
    let (_, dana_token) = app
        .store
        .issue_token(dana.id, "test", insight::domain::user::TokenScope::Write, None)
        .await
        .expect("token");
    let dana = TestUser {
        id: dana.id,
        email,
        token: dana_token,
    };
    let (_, token) = invite(&app, &owner, &workspace, &dana.email.to_lowercase(), "researcher").await;
    let (status, body) = accept(&app, &dana, &token).await;
    assert_eq!(
        (status, body["role"].clone()),
        (StatusCode::OK, json!("researcher")),
        "{body}"
    );
    assert_eq!(role_in(&app, &dana, &workspace).await.as_deref(), Some("researcher"));
    app.stop().await;
}

#[tokio::test]
async fn a_member_accepting_an_invitation_keeps_the_higher_role_and_is_told_the_one_he_holds() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let member = app.user().await;
    let workspace = team(&app, &owner, &[(&member, Role::Viewer)]).await;

    // An invitation to a higher role raises him.
    let (_, token) = invite(&app, &owner, &workspace, &member.email, "researcher").await;
    let (status, body) = accept(&app, &member, &token).await;
    assert_eq!(
        (status, body["role"].clone()),
        (StatusCode::OK, json!("researcher")),
        "{body}"
    );
    assert_eq!(role_in(&app, &member, &workspace).await.as_deref(), Some("researcher"));

    // One to a lower role never lowers him, and the answer says the role he keeps.
    let (_, token) = invite(&app, &owner, &workspace, &member.email, "viewer").await;
    let (status, body) = accept(&app, &member, &token).await;
    assert_eq!(
        (status, body["role"].clone()),
        (StatusCode::OK, json!("researcher")),
        "{body}"
    );
    assert_eq!(role_in(&app, &member, &workspace).await.as_deref(), Some("researcher"));
    let (status, _) = accept(&app, &member, &token).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the link worked once");

    // The audit log says what was offered and what he holds.
    let (_, log) = app
        .get(
            &format!("/workspaces/{workspace}/audit?action=invitation.accepted"),
            &owner,
        )
        .await;
    let details: Vec<Value> = log
        .as_array()
        .expect("log")
        .iter()
        .map(|e| e["detail"].clone())
        .collect();
    assert_eq!(details.len(), 2, "{log}");
    assert_eq!(
        (details[0]["invited_role"].clone(), details[0]["role"].clone()),
        (json!("viewer"), json!("researcher")),
        "{log}"
    );
    assert_eq!(
        (details[1]["invited_role"].clone(), details[1]["role"].clone()),
        (json!("researcher"), json!("researcher")),
        "{log}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_console_refuses_an_invitation_to_another_address_and_offers_to_sign_out() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let viewer = app.user().await;
    let workspace = team(&app, &owner, &[(&viewer, Role::Viewer)]).await;
    let alice = format!("alice-{}@example.org", Uuid::new_v4().simple());
    let (_, token) = invite(&app, &owner, &workspace, &alice, "admin").await;
    set_password(&app, &viewer, PASSWORD).await;
    let (_, browser, _, _) = login(&app, &viewer.email, PASSWORD).await;
    let browser = browser.expect("a session");
    let page = |method: Method| {
        let request = app
            .client
            .request(method.clone(), app.url(&format!("/invite/{token}")))
            .header(COOKIE, &browser.cookie);
        let request = if method == Method::POST {
            request
                .header(ORIGIN, &app.base)
                .form(&[("csrf", browser.csrf.as_str())])
        } else {
            request
        };
        async move {
            let response = request.send().await.expect("page");
            (response.status(), response.text().await.expect("html"))
        }
    };

    let (status, html) = page(Method::GET).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(&alice) && html.contains(&viewer.email), "{html}");
    assert!(
        !html.contains("Join the workspace"),
        "no button that cannot work: {html}"
    );
    assert!(
        html.contains(&format!("name=\"return_to\" value=\"/invite/{token}\"")),
        "a sign-out that comes back here: {html}"
    );

    let (status, html) = page(Method::POST).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
    assert!(html.contains(&format!("This invitation was sent to {alice}")), "{html}");
    assert_eq!(role_in(&app, &viewer, &workspace).await.as_deref(), Some("viewer"));

    // An invitation to his own address he accepts from the page, signed in.
    let (_, own) = invite(&app, &owner, &workspace, &viewer.email, "researcher").await;
    let response = app
        .client
        .post(app.url(&format!("/invite/{own}")))
        .header(COOKIE, &browser.cookie)
        .header(ORIGIN, &app.base)
        .form(&[("csrf", browser.csrf.as_str())])
        .send()
        .await
        .expect("join");
    assert_eq!(response.status(), StatusCode::OK, "redirected to the projects");
    assert_eq!(response.url().path(), "/");
    assert_eq!(role_in(&app, &viewer, &workspace).await.as_deref(), Some("researcher"));

    // Signing out from there comes back to the invitation, signed out.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let response = no_redirects
        .post(app.url("/sign-out"))
        .header(COOKIE, &browser.cookie)
        .header(ORIGIN, &app.base)
        .form(&[
            ("csrf", browser.csrf.as_str()),
            ("return_to", &format!("/invite/{token}")),
        ])
        .send()
        .await
        .expect("sign out");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        response.headers()["location"].to_str().ok(),
        Some(format!("/invite/{token}").as_str())
    );
    app.stop().await;
}
