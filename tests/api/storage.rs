//! Recordings in an S3-compatible bucket (`INSIGHT_STORAGE_URL=s3://…`) on a real S3 server
//! on loopback: moto in server mode (`INSIGHT_TEST_MOTO` names its `moto_server`; `.ci/run`
//! installs it in a venv of its own). A recording is uploaded, transcribed from the
//! bucket and played back in ranges; it survives a restart; a second instance with a data
//! folder of its own serves and transcribes what the first took in; the bucket cut off
//! (a switch between Insight and moto) makes an upload a 503 that leaves nothing behind,
//! and uploads work again once it answers; a large recording goes up in parts, and a
//! failed multipart upload is aborted; a queued transcription waits for the bucket. A
//! folder on another file system than the data folder (`/dev/shm`) takes recordings too.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use insight::config::StorageUrl;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, RANGE};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::accounts::sign_in;
use crate::support::exchange::{download, import_archive};
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::programs::tool;
use crate::support::records::{stt_reply, stt_stub, upload, wait_for, wav};
use crate::support::{TestApp, eventually};

const BUCKET: &str = "insight-recordings";

/// A moto S3 server on loopback, stopped with the test.
struct Moto {
    addr: SocketAddr,
    _child: tokio::process::Child,
}

impl Moto {
    async fn start() -> Option<Self> {
        let program = tool(
            "INSIGHT_TEST_MOTO",
            None,
            "moto's S3 server: pip install 'moto[server]' and name its moto_server",
        )?;
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("addr").port()
        };
        let child = tokio::process::Command::new(program)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("moto starts");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let client = reqwest::Client::new();
        eventually(
            Duration::from_secs(20),
            format!("moto did not answer on {addr}"),
            async || match client.put(format!("http://{addr}/{BUCKET}")).send().await {
                Ok(response) if response.status().is_success() => Ok(()),
                Ok(response) => Err(response.status().to_string()),
                Err(error) => Err(error.to_string()),
            },
        )
        .await;
        Some(Self { addr, _child: child })
    }

    /// The keys in the bucket under `prefix`, as S3's ListObjectsV2 gives them.
    async fn keys(&self, prefix: &str) -> Vec<String> {
        let xml = reqwest::get(format!("http://{}/{BUCKET}?list-type=2&prefix={prefix}", self.addr))
            .await
            .expect("list")
            .text()
            .await
            .expect("xml");
        xml.split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_owned()))
            .collect()
    }

    /// The multipart uploads begun and neither completed nor aborted (ListMultipartUploads).
    async fn unfinished_uploads(&self) -> Vec<String> {
        let xml = reqwest::get(format!("http://{}/{BUCKET}?uploads", self.addr))
            .await
            .expect("list")
            .text()
            .await
            .expect("xml");
        xml.split("<UploadId>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</UploadId>").map(|(id, _)| id.to_owned()))
            .collect()
    }

    /// An object's bytes, read as another client of the bucket would (signed).
    async fn object(&self, key: &str) -> Vec<u8> {
        let mut settings = insight::Settings::for_database("sqlite://unused.db");
        in_bucket(&mut settings, self.addr, "");
        let files = insight::providers::files::Files::open(&settings.storage).expect("the bucket");
        let mut reading = files.read(key, None).await.expect("the object");
        let mut bytes = Vec::new();
        while let Some(chunk) = futures_util::StreamExt::next(&mut reading.bytes).await {
            bytes.extend_from_slice(&chunk.expect("chunk"));
        }
        bytes
    }
}

/// A switch on the line to the bucket: a TCP relay that, when off, refuses new
/// connections and cuts the ones open, as a bucket that went away does. With a limit, it
/// cuts each connection that sends more than that many bytes up (a line that drops
/// every large request, while small ones get through).
#[derive(Clone)]
struct Switch {
    addr: SocketAddr,
    on: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
    /// The most a connection may send up; 0 for no limit.
    limit: Arc<AtomicU64>,
}

impl Switch {
    async fn to(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
        let addr = listener.local_addr().expect("relay addr");
        let on = Arc::new(AtomicBool::new(true));
        let (generation, _) = tokio::sync::watch::channel(0u64);
        let switch = Self {
            addr,
            on,
            generation: Arc::new(generation),
            limit: Arc::new(AtomicU64::new(0)),
        };
        let relay = switch.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !relay.on.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let mut cut = relay.generation.subscribe();
                let limit = relay.limit.load(Ordering::SeqCst);
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (mut from_client, mut to_client) = inbound.split();
                    let (mut from_bucket, mut to_bucket) = outbound.split();
                    let up = async {
                        let mut sent = 0u64;
                        let mut buffer = vec![0u8; 64 * 1024];
                        loop {
                            let n = from_client.read(&mut buffer).await.unwrap_or(0);
                            sent += n as u64;
                            if n == 0 || (limit > 0 && sent > limit) {
                                return;
                            }
                            if to_bucket.write_all(&buffer[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    tokio::select! {
                        () = up => {}
                        _ = tokio::io::copy(&mut from_bucket, &mut to_client) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        switch
    }

    fn set(&self, on: bool) {
        self.on.store(on, Ordering::SeqCst);
        if !on {
            self.generation.send_modify(|n| *n += 1);
        }
    }

    /// From now on, cuts each new connection once it has sent more than `bytes` up.
    fn limit_requests(&self, bytes: u64) {
        self.limit.store(bytes, Ordering::SeqCst);
    }
}

fn in_bucket(settings: &mut insight::Settings, endpoint: SocketAddr, prefix: &str) {
    settings.storage.storage_url = Some(StorageUrl::S3 {
        bucket: BUCKET.to_owned(),
        prefix: prefix.to_owned(),
    });
    settings.storage.s3_endpoint = Some(format!("http://{endpoint}"));
    settings.storage.s3_region = Some("us-east-1".to_owned());
    settings.storage.s3_access_key_id = Some("testing".to_owned());
    settings.storage.s3_secret_access_key = Some(insight::secret::KeyMaterial::new("testing"));
}

/// The files under the instance's data folder, but for what any instance keeps there
/// (its key, its search index).
fn data_files(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for folder in ["media", "uploads"] {
        if let Ok(entries) = std::fs::read_dir(dir.join(folder)) {
            found.extend(entries.flatten().map(|e| e.path().display().to_string()));
        }
    }
    found
}

async fn recording(app: &TestApp, cookie: &str, id: &str, range: &str) -> (StatusCode, Vec<u8>) {
    let response = app
        .client
        .get(app.url(&format!("/r/{id}/recording")))
        .header(COOKIE, cookie)
        .header(RANGE, range)
        .send()
        .await
        .expect("recording");
    let status = response.status();
    (status, response.bytes().await.expect("bytes").to_vec())
}

#[tokio::test]
async fn recordings_live_in_the_bucket_across_a_restart_and_a_second_instance() {
    let Some(moto) = Moto::start().await else { return };
    let (stt, stub) = stt_stub().await;
    let configure = |settings: &mut insight::Settings| {
        in_bucket(settings, moto.addr, "team-a");
        settings.speech.stt_base_url = Some(format!("http://{stt}/v1"));
    };
    let mut app = TestApp::start_with(configure).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Calls").await;
    let audio = wav();
    let (status, record) = upload(&app, &ann, &project, "call.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    wait_for(&app, &ann, &id, &["Finished"]).await;

    let keys = moto.keys("team-a/media/").await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(keys[0].ends_with(".wav"), "{keys:?}");
    assert_eq!(moto.object(&keys[0]).await, audio, "the recording, byte for byte");
    let sent = stub.last_call().expect("the provider was called");
    assert_eq!(
        sent.parts.iter().find(|p| p.name == "file").expect("file").bytes,
        audio,
        "sent from the bucket"
    );
    assert!(
        data_files(&app.data_dir).is_empty(),
        "nothing kept locally: {:?}",
        data_files(&app.data_dir)
    );

    let cookie = sign_in(&app, &ann).await;
    let (status, part) = recording(&app, &cookie, &id, "bytes=4-11").await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(part, &audio[4..12]);

    app.restart(configure).await;
    let (status, whole) = recording(&app, &cookie, &id, "bytes=0-").await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(whole, audio, "after a restart");

    // A second instance on the same database with a data folder of its own: it takes in
    // nothing itself (no record workers would be the other's), yet serves and transcribes
    // what the first took in.
    let other_dir = tempfile::tempdir().expect("dir");
    let mut settings = insight::Settings::for_database(&app.database_url);
    configure(&mut settings);
    settings.storage.data_dir = other_dir.path().to_path_buf();
    let store = insight::Store::connect(&app.database_url, 4).await.expect("store");
    let second = insight::Server::start(settings, store).await.expect("second instance");
    let second_url = format!("http://{}", second.addr);
    let played = app
        .client
        .get(format!("{second_url}/r/{id}/recording"))
        .header(COOKIE, &cookie)
        .header(RANGE, "bytes=0-3")
        .send()
        .await
        .expect("played");
    assert_eq!(played.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(played.bytes().await.expect("bytes").as_ref(), b"RIFF");
    let response = app
        .client
        .post(format!("{second_url}/projects/{project}/records"))
        .bearer_auth(&ann.token)
        .multipart(
            reqwest::multipart::Form::new().part(
                "file",
                reqwest::multipart::Part::bytes(audio.clone())
                    .file_name("second.wav")
                    .mime_str("audio/wav")
                    .expect("mime"),
            ),
        )
        .send()
        .await
        .expect("upload");
    assert_eq!(response.status(), StatusCode::CREATED);
    let second_id = response.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    wait_for(&app, &ann, &second_id, &["Finished"]).await;
    let (status, part) = recording(&app, &cookie, &second_id, "bytes=0-3").await;
    assert_eq!(
        (status, part.as_slice()),
        (StatusCode::PARTIAL_CONTENT, b"RIFF".as_slice())
    );
    assert_eq!(moto.keys("team-a/media/").await.len(), 2);
    second.stop().await.expect("stopped");

    // The project's archive carries both recordings out of the bucket, and importing it
    // puts copies of its own back in.
    let (status, _, archive) = download(&app, &ann, &format!("/projects/{project}/archive")).await;
    assert_eq!(status, StatusCode::OK);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive.clone())).expect("a zip");
    let mut carried = Vec::new();
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).expect("entry");
        if entry.name().is_ok_and(|name| name.starts_with("recordings/")) {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).expect("read");
            carried.push(bytes);
        }
    }
    assert_eq!(carried, vec![audio.clone(), audio.clone()]);
    let (status, imported) = import_archive(&app, &ann, ann.id, archive).await;
    assert_eq!(status, StatusCode::CREATED, "{imported}");
    assert_eq!(imported["imported"]["recordings"], 2, "{imported}");
    assert_eq!(moto.keys("team-a/media/").await.len(), 4);
    assert!(data_files(&app.data_dir).is_empty(), "{:?}", data_files(&app.data_dir));

    let (status, _) = app.delete(&format!("/insight/{id}"), &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        moto.keys("team-a/media/").await.len(),
        3,
        "a deleted record's recording is gone"
    );
    app.stop().await;
}

/// moto behind a switch, and an instance keeping its recordings there (configured
/// further by `configure`), transcribed by the stub; `None` where moto is not installed.
async fn behind_a_switch(
    configure: impl FnOnce(&mut insight::Settings),
) -> Option<(Moto, Switch, OpenAiStub, TestApp)> {
    let moto = Moto::start().await?;
    let switch = Switch::to(moto.addr).await;
    let (stt, stub) = stt_stub().await;
    let app = TestApp::start_with(|settings| {
        in_bucket(settings, switch.addr, "");
        settings.speech.stt_base_url = Some(format!("http://{stt}/v1"));
        configure(settings);
    })
    .await;
    Some((moto, switch, stub, app))
}

#[tokio::test]
async fn a_bucket_that_does_not_answer_makes_an_upload_a_503_that_leaves_nothing_and_then_recovers() {
    let Some((moto, switch, _stub, app)) = behind_a_switch(|_| {}).await else {
        return;
    };
    let ann = app.user().await;
    let project = app.project(&ann, "Calls").await;
    let audio = wav();

    switch.set(false);
    let (status, body) = upload(&app, &ann, &project, "call.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["detail"].as_str().unwrap_or_default().contains("nothing was kept"),
        "{body}"
    );
    let (_, records) = app.get(&format!("/projects/{project}/records"), &ann).await;
    assert_eq!(records, serde_json::json!([]), "no record");
    assert!(
        data_files(&app.data_dir).is_empty(),
        "no upload left: {:?}",
        data_files(&app.data_dir)
    );
    assert!(moto.keys("media/").await.is_empty(), "nothing in the bucket");
    // Text needs no bucket: it is taken in while the bucket is away.
    let (status, _) = app
        .post(
            &format!("/projects/{project}/records"),
            &ann,
            serde_json::json!({ "title": "Notes", "text": "Ann: typed notes" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);

    switch.set(true);
    let (status, record) = upload(&app, &ann, &project, "call.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id");
    wait_for(&app, &ann, id, &["Finished"]).await;
    assert_eq!(moto.keys("media/").await.len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn a_transcription_waits_for_a_bucket_that_went_away_however_long_it_is_gone() {
    let Some((_moto, switch, stub, app)) = behind_a_switch(|settings| {
        // One more attempt only: a wait for the bucket must not use attempts up.
        settings.jobs.job_max_attempts = 2;
        settings.jobs.job_retry_base_seconds = 0.2;
    })
    .await
    else {
        return;
    };
    // The provider's first answer is a hiccup, and the bucket goes away with it: the retry
    // finds the recording unreadable.
    let calls = Arc::new(AtomicUsize::new(0));
    let (cut, counted) = (switch.clone(), calls.clone());
    stub.respond(move |_| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            cut.set(false);
            Reply::status(503)
        } else {
            stt_reply()
        }
    });
    let ann = app.user().await;
    let project = app.project(&ann, "Calls").await;
    let (status, record) = upload(&app, &ann, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    // Long enough for many more reads than attempts allow, each finding no bucket.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (_, read) = app.get(&format!("/insight/{id}/"), &ann).await;
    assert_ne!(read["status"], "Error", "{read}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "nothing is sent while the bucket is away"
    );
    switch.set(true);
    wait_for(&app, &ann, &id, &["Finished"]).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    app.stop().await;
}

/// A WAV of `seconds` of silence: 16 kHz mono, 32 000 bytes a second.
fn long_wav(seconds: u32) -> Vec<u8> {
    let mut bytes = wav();
    let samples = 16_000 * seconds;
    bytes[4..8].copy_from_slice(&(36 + samples * 2).to_le_bytes());
    bytes[40..44].copy_from_slice(&(samples * 2).to_le_bytes());
    bytes.resize(44 + samples as usize * 2, 0);
    bytes
}

#[tokio::test]
async fn a_large_recording_goes_up_in_parts_and_a_failed_upload_leaves_no_parts_behind() {
    let Some((moto, switch, _stub, app)) = behind_a_switch(|_| {}).await else {
        return;
    };
    let ann = app.user().await;
    let project = app.project(&ann, "Long calls").await;
    // Three parts of a multipart upload: 8 MiB, 8 MiB and the rest.
    let audio = long_wav(560);
    assert!(audio.len() > 17 * 1024 * 1024);
    let (status, record) = upload(&app, &ann, &project, "long.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let keys = moto.keys("media/").await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(moto.object(&keys[0]).await == audio, "the recording, byte for byte");
    assert!(moto.unfinished_uploads().await.is_empty());

    // The line drops every request carrying a part: the upload fails, is aborted, and
    // the bucket holds neither an object nor parts.
    switch.limit_requests(1024 * 1024);
    let (status, body) = upload(&app, &ann, &project, "again.wav", "audio/wav", audio, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(moto.keys("media/").await.len(), 1);
    let unfinished = moto.unfinished_uploads().await;
    assert!(unfinished.is_empty(), "parts left behind: {unfinished:?}");
    app.stop().await;
}

#[tokio::test]
async fn recordings_kept_in_a_folder_on_another_file_system_arrive_whole() {
    use std::os::unix::fs::MetadataExt;
    // /dev/shm is a tmpfs: another file system than the test's data folder, as a network
    // share mounted for INSIGHT_STORAGE_URL would be.
    let Ok(shared) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("SKIPPED: no /dev/shm to keep recordings on another file system");
        return;
    };
    let (stt, _stub) = stt_stub().await;
    let folder = shared.path().to_path_buf();
    let app = TestApp::start_with(|settings| {
        settings.storage.storage_url = Some(StorageUrl::Folder(folder.clone()));
        settings.speech.stt_base_url = Some(format!("http://{stt}/v1"));
    })
    .await;
    let device = |path: &std::path::Path| std::fs::metadata(path).expect("metadata").dev();
    if device(&app.data_dir) == device(&folder) {
        eprintln!("SKIPPED: the data folder is on /dev/shm's file system");
        app.stop().await;
        return;
    }
    let ann = app.user().await;
    let project = app.project(&ann, "Calls").await;
    let audio = wav();
    let (status, record) = upload(&app, &ann, &project, "call.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    wait_for(&app, &ann, record["id"].as_str().expect("id"), &["Finished"]).await;
    let kept: Vec<_> = std::fs::read_dir(folder.join("media"))
        .expect("the media folder")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(kept.len(), 1, "one recording, no copy left beside it: {kept:?}");
    assert_eq!(std::fs::read(&kept[0]).expect("read"), audio);
    assert!(data_files(&app.data_dir).is_empty(), "{:?}", data_files(&app.data_dir));
    app.stop().await;
}
