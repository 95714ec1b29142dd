//! Files in and out over the API: a download with its headers, a file posted as a form,
//! an archive imported; zips opened and made.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use reqwest::StatusCode;
use serde_json::Value;
use uuid::Uuid;

use super::{TestApp, TestUser};

/// Answers the status, the headers and the body of a GET.
pub async fn download(app: &TestApp, user: &TestUser, path: &str) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let response = app
        .client
        .get(app.url(path))
        .bearer_auth(&user.token)
        .send()
        .await
        .expect("request sent");
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.expect("body").to_vec())
}

/// POSTs `file` as the form's `file` part; the status and the answer (JSON, or its text).
pub async fn send_file(app: &TestApp, user: &TestUser, path: &str, name: &str, file: Vec<u8>) -> (StatusCode, Value) {
    let form =
        reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(file).file_name(name.to_owned()));
    let response = app
        .client
        .post(app.url(path))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("request sent");
    let status = response.status();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Imports an Insight archive (`.insight.zip`) into `workspace`.
pub async fn import_archive(app: &TestApp, user: &TestUser, workspace: Uuid, file: Vec<u8>) -> (StatusCode, Value) {
    let path = format!("/workspaces/{workspace}/import/archive");
    send_file(app, user, &path, "project.insight.zip", file).await
}

/// A header's value as text (empty when missing or not text).
pub fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

/// The entries of a zip, by name.
pub fn unzip(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    (0..archive.len())
        .map(|index| {
            let mut entry = archive.by_index(index).expect("entry");
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("entry read");
            (entry.name().expect("name").to_string(), data)
        })
        .collect()
}

/// A zip of `files` (name to bytes), deflated.
pub fn zip_of(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(name.as_str(), options).expect("entry");
        std::io::Write::write_all(&mut zip, bytes).expect("written");
    }
    zip.finish().expect("zip").into_inner()
}
