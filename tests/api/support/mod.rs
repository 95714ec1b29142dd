//! The test harness and every helper more than one test module uses: the test modules
//! import from here, and from nowhere else in the suite (`house.rs` here keeps it so). A
//! helper only one module uses stays in that module.
//!
//! - [`app`]: the service under test ([`TestApp`]) and its users;
//! - [`errors`]: the shapes of its refusals;
//! - [`accounts`]: passwords, sessions, the console's sign-in and forms over HTTP;
//! - [`browser`]: a real headless Chromium over WebDriver, for the console's and the
//!   respondent's pages;
//! - [`records`]: uploads, pasted transcripts, the interviews they paste, the speech stub;
//! - [`reports`]: a study to report on, the presets, a generation waited for;
//! - [`models`]: the model and web search stubs, and the chat as server-sent events;
//! - [`interviews`]: a respondent's calls and an interview guide;
//! - [`exchange`]: downloads, files posted as forms, zips;
//! - [`programs`]: the `insight` binary itself, and the outside programs that read exports;
//! - [`db`]: the database under the service, read and written around it;
//! - [`waiting`]: [`eventually`], the one poller every wait goes through;
//! - [`oidc`]: a real OpenID Connect provider on loopback;
//! - [`openai_stub`] and [`mail_sink`]: the model and mail stand-ins the benchmarks share
//!   (in `tests/common/`).

pub mod accounts;
pub mod app;
pub mod browser;
pub mod db;
pub mod errors;
pub mod exchange;
mod house;
pub mod interviews;
#[path = "../../common/mail_sink.rs"]
pub mod mail_sink;
pub mod models;
pub mod oidc;
#[path = "../../common/openai_stub.rs"]
pub mod openai_stub;
pub mod programs;
pub mod records;
pub mod reports;
pub mod waiting;

pub use app::{TestApp, TestUser, backend_name, fresh_database};
pub use errors::{assert_unknown_references, assert_validation_body, error_locs, error_types};
pub use waiting::eventually;
