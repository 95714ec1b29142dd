//! Workspaces (tag `workspaces`): the last-owner rule when owners change or remove each
//! other, or step down, at the same instant. Many rounds, because one race in a few is
//! what a lost check looks like; meaningful on PostgreSQL, where requests run side by
//! side (SQLite's single writer takes them in turn).

use insight::domain::paging::PageRequest;
use insight::domain::workspace::Role;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A new team workspace of `ann` (its owner) with `bob` as a second owner.
async fn two_owners(app: &TestApp, ann: &TestUser, bob: &TestUser, round: usize) -> String {
    let (status, workspace) = app
        .post("/workspaces", ann, json!({ "name": format!("Round {round}") }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{workspace}");
    let workspace = workspace["id"].as_str().expect("workspace id").to_owned();
    let id = uuid::Uuid::parse_str(&workspace).expect("uuid");
    assert!(app.store.add_member(id, bob.id, Role::Owner).await.expect("add bob"));
    workspace
}

/// The workspace's owners as the database holds them now.
async fn owners(app: &TestApp, workspace: &str) -> Vec<String> {
    let id = uuid::Uuid::parse_str(workspace).expect("uuid");
    app.store
        .members(id, &PageRequest::everything())
        .await
        .expect("members")
        .items
        .into_iter()
        .filter(|member| member.role == Role::Owner)
        .map(|member| member.email)
        .collect()
}

/// One change to a membership, as `by` asks for it.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Make the member an admin (no longer an owner).
    Demote,
    Remove,
}

async fn change(
    app: &TestApp,
    by: &TestUser,
    workspace: &str,
    member: &TestUser,
    change: Change,
) -> (StatusCode, Value) {
    let path = format!("/workspaces/{workspace}/members/{}", member.id);
    match change {
        Change::Demote => {
            app.call(Method::PATCH, &path, Some(&by.token), Some(json!({ "role": "admin" })))
                .await
        }
        Change::Remove => app.call(Method::DELETE, &path, Some(&by.token), None).await,
    }
}

/// Runs both changes at the same instant and checks that exactly one went through and
/// that the workspace kept an owner.
async fn race(
    app: &TestApp,
    round: usize,
    first: (&TestUser, &TestUser, Change),
    second: (&TestUser, &TestUser, Change),
) {
    let (ann, bob) = (first.0, second.0);
    let workspace = two_owners(app, ann, bob, round).await;
    let ((a, a_body), (b, b_body)) = tokio::join!(
        change(app, first.0, &workspace, first.1, first.2),
        change(app, second.0, &workspace, second.1, second.2),
    );
    let left = owners(app, &workspace).await;
    let what = format!(
        "round {round}: {:?} -> {a} {a_body}, {:?} -> {b} {b_body}; owners left: {left:?}",
        first.2, second.2
    );
    assert_eq!(left.len(), 1, "one owner stays: {what}");
    assert_eq!(
        [a, b].iter().filter(|status| status.is_success()).count(),
        1,
        "exactly one change went through: {what}"
    );
    // The other was refused for what the first one made of him or of the workspace:
    // the last owner (409), no longer an owner (403), or no longer a member (404).
    for (status, body) in [(a, &a_body), (b, &b_body)] {
        if !status.is_success() {
            assert!(
                [StatusCode::CONFLICT, StatusCode::FORBIDDEN, StatusCode::NOT_FOUND].contains(&status),
                "{what}"
            );
            assert!(body["detail"].is_string(), "{what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_owners_demoting_or_removing_each_other_at_once_leave_one_owner() {
    let app = TestApp::start().await;
    let (ann, bob) = (app.user().await, app.user().await);
    let kinds = [
        (Change::Demote, Change::Demote),
        (Change::Remove, Change::Remove),
        (Change::Demote, Change::Remove),
    ];
    for round in 0..30 {
        let (mine, his) = kinds[round % kinds.len()];
        race(&app, round, (&ann, &bob, mine), (&bob, &ann, his)).await;
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_owners_stepping_down_at_once_leave_one_owner() {
    let app = TestApp::start().await;
    let (ann, bob) = (app.user().await, app.user().await);
    for round in 0..15 {
        // Leaving is removing oneself; stepping down is demoting oneself.
        let kind = if round % 2 == 0 { Change::Remove } else { Change::Demote };
        race(&app, round, (&ann, &ann, kind), (&bob, &bob, kind)).await;
    }
    app.stop().await;
}
