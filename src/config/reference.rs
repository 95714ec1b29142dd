//! docs/settings.md, rendered from the settings' declarations: each group's doc comment as
//! its introduction, then each setting's variable, flag, default, what its check requires
//! and its doc comment. The test below fails when the file differs, and rewrites it when
//! `INSIGHT_BLESS=1` is set, so the reference cannot drift from `serve --help`.

use std::fmt::Write;

use clap::{Args, Command};

use super::*;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/settings.md");
/// The width the prose is wrapped at, as the rest of docs/.
const WIDTH: usize = 88;

/// Variables that are not settings of the service (it never reads them): the test
/// suite's, CI's and the benchmarks'. Kept here, at the end of the reference, so an
/// operator who meets one learns it needs no setting.
const NOT_SETTINGS: &str = r#"## Tests, CI and benchmarks only

The service never reads these; the test suite, `.ci/` scripts and benchmarks do. See
[testing](testing.md) and [benchmarks](benchmarks.md).

| variable | read by | meaning |
|---|---|---|
| `INSIGHT_TEST_DATABASE_URL` | `cargo test --test api`, `cargo bench --bench api` | a PostgreSQL database on a server you can create databases on; the suite runs there, each test in a fresh database next to it |
| `INSIGHT_TEST_CHROMEDRIVER`, `INSIGHT_TEST_CHROMIUM` | the browser test | where ChromeDriver and Chromium are, when not Debian's `chromedriver` and `chromium` on the `PATH` |
| `INSIGHT_TEST_OIDC_PYTHON` | `tests/api/support/oidc.rs` (the provider `tests/api/oidc.rs` and `sso.rs` sign in at) | a Python with `oidc-provider-mock` installed (`.ci/run` sets it to its venv's); unset or without the package, the single sign-on tests say they were skipped |
| `INSIGHT_TEST_OIDC_PROVIDER` | `tests/api/support/oidc.rs` (the reference provider `tests/api/oidc.rs` also signs in at) | a `node_modules` folder with `oidc-provider` (npm, OpenID Certified; `.ci/run` installs 9.13.3 into its cache), which `tests/api/support/oidc_provider.mjs` runs with Node; unset, those tests say they were skipped |
| `INSIGHT_TEST_XMLLINT` | `tests/api/exchange.rs` | xmllint, for the REFI-QDA schema check (default `/usr/bin/xmllint`); missing, the check is skipped, except under CI |
| `INSIGHT_TEST_PYTHON` | `tests/api/exports.rs` | a Python with `python-docx` installed, to read exported Word documents back (`.ci/run` sets it to its venv's); unset, that reading is skipped, except under CI |
| `INSIGHT_TEST_MCP_PYTHON` | `tests/api/mcp.rs` | a Python with the official MCP SDK (`pip install mcp==2.3.0`), whose client drives the MCP server (`tests/api/mcp_client.py`; `.ci/run` makes it a venv of its own); unset, those tests are skipped, except under CI |
| `INSIGHT_TEST_MOTO` | `tests/api/storage.rs`, `bench/storage.rs` | moto's `moto_server` (`pip install 'moto[server]'`), the S3-compatible server the object storage tests start on loopback (`.ci/run` installs it in a venv of its own); unset, those tests are skipped, except under CI |
| `INSIGHT_TEST_PDFTOTEXT` | `tests/api/exports.rs` | poppler's pdftotext, to read exported PDFs (default `/usr/bin/pdftotext`); missing, that reading is skipped, except under CI |
| `INSIGHT_TEST_LLM_URL`, `INSIGHT_TEST_LLM_MODEL` | `tests/api/model.rs` | a real model server to run the model tests against (`.ci/llm-server` starts one) |
| `INSIGHT_ST_MAX_EXAMPLES`, `INSIGHT_ST_SEEDS` | schemathesis in `.ci/run` | examples per operation, and the space-separated seeds |
| `INSIGHT_CI_PG_SERVER` | `.ci/run` | the PostgreSQL server it makes its database on (default `postgres://postgres@127.0.0.1:5432`) |
| `INSIGHT_LLM_THREADS`, `INSIGHT_LLM_PARALLEL`, `INSIGHT_LLM_CTX`, `INSIGHT_LLM_START_TIMEOUT` | `.ci/llm-server` | llama.cpp's threads (2), requests at once (2), context per slot (4096 tokens), start timeout (120 s) |
| `INSIGHT_BENCH_*` | `cargo bench` | see [benchmarks](benchmarks.md) |
"#;

/// Each group on its own, in the order `Settings` flattens them; the test checks that
/// together they are exactly `Settings`.
fn groups() -> Vec<Command> {
    let augments: [fn(Command) -> Command; 14] = [
        ServerSettings::augment_args,
        StorageSettings::augment_args,
        MaterialSettings::augment_args,
        ImportSettings::augment_args,
        SpeechSettings::augment_args,
        JobsSettings::augment_args,
        ModelSettings::augment_args,
        SearchSettings::augment_args,
        WebhooksSettings::augment_args,
        InterviewsSettings::augment_args,
        SsoSettings::augment_args,
        MailSettings::augment_args,
        Quotas::augment_args,
        AccountsSettings::augment_args,
    ];
    augments
        .into_iter()
        .map(|augment| augment(Command::new("insight")))
        .collect()
}

/// The whole reference.
fn render() -> String {
    let settings = Settings::augment_args(Command::new("insight"));
    let groups = groups();
    let heading = |group: &Command| {
        group
            .get_next_help_heading()
            .expect("every group has a heading")
            .to_owned()
    };
    let mut out = String::from("# Settings\n\n");
    out.push_str(
        "<!-- Rendered from the declarations in src/config/ (each setting's attributes and doc\n\
         comment, each group's doc comment) by the test config::reference::docs_match_the_declarations;\n\
         edit those, then run `INSIGHT_BLESS=1 cargo test --lib config::reference`. -->\n\n",
    );
    out.push_str(&about(&settings));
    out.push_str("\n\nThe settings are grouped by what they serve:\n\n");
    for title in groups
        .iter()
        .map(heading)
        .chain(["Tests, CI and benchmarks only".to_owned()])
    {
        writeln!(out, "- [{title}](#{})", anchor(&title)).unwrap();
    }
    for group in &groups {
        write!(out, "\n## {}\n\n{}\n", heading(group), about(group)).unwrap();
        for arg in group.get_arguments() {
            out.push('\n');
            out.push_str(&setting(arg));
        }
    }
    out.push('\n');
    out.push_str(NOT_SETTINGS);
    out
}

/// A group's (or `Settings`') doc comment, kept verbatim.
fn about(command: &Command) -> String {
    command
        .get_long_about()
        .or(command.get_about())
        .map(ToString::to_string)
        .expect("every group has a doc comment")
}

/// One setting: a list item of its variable, flag, default and requirement, then its doc
/// comment's paragraphs.
fn setting(arg: &clap::Arg) -> String {
    let variable = arg
        .get_env()
        .and_then(|env| env.to_str())
        .expect("every setting has a variable");
    let flag = arg.get_long().expect("every setting has a flag");
    let mut facts = format!("**`{variable}`** (`--{flag}`), ");
    match arg.get_default_values() {
        [] => facts.push_str("default unset"),
        [value] if value.is_empty() => facts.push_str("default empty"),
        values => {
            let values: Vec<_> = values
                .iter()
                .map(|value| format!("`{}`", value.to_string_lossy()))
                .collect();
            write!(facts, "default {}", values.join(", ")).unwrap();
        }
    }
    if let Some(must) = check::requirement(arg) {
        write!(facts, "; {must}").unwrap();
    }
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .unwrap_or_else(|| panic!("{variable} has no doc comment"))
        .to_string();
    let mut paragraphs = help.split("\n\n");
    let first = paragraphs.next().unwrap_or_default();
    let mut out = wrap(&format!("{facts}. {}", sentence(first)), "- ", "  ");
    for paragraph in paragraphs {
        out.push('\n');
        match paragraph.strip_prefix("- ") {
            Some(item) => out.push_str(&wrap(&sentence(item), "  - ", "    ")),
            None => out.push_str(&wrap(paragraph, "  ", "  ")),
        }
    }
    out
}

/// A paragraph ending as a sentence: clap drops the full stop of a one-paragraph help.
fn sentence(text: &str) -> String {
    if text.ends_with(['.', '!', '?', ':']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

/// GitHub's anchor of a heading.
fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// `text` wrapped at `WIDTH`, its first line after `first`, the others after `rest`.
fn wrap(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_owned();
    let mut empty = true;
    for word in text.split_whitespace() {
        // A line starting with one of these would be read as a list or a heading.
        let would_mark = matches!(word, "-" | "+" | "*" | "#" | ">")
            || word.trim_end_matches('.').chars().all(|c| c.is_ascii_digit()) && word.ends_with('.');
        if !empty && line.len() + 1 + word.len() > WIDTH && !would_mark {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_owned();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[test]
fn the_groups_are_the_settings_in_their_order() {
    let settings = Settings::augment_args(Command::new("insight"));
    let declared: Vec<_> = settings.get_arguments().map(|arg| arg.get_id().to_string()).collect();
    let grouped: Vec<_> = groups()
        .iter()
        .flat_map(|group| {
            group
                .get_arguments()
                .map(|arg| arg.get_id().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        grouped, declared,
        "reference.rs's groups() must list every group `Settings` flattens"
    );
    for arg in settings.get_arguments() {
        let variable = arg.get_env().and_then(|env| env.to_str()).unwrap_or_default();
        assert!(
            variable.starts_with("INSIGHT_"),
            "{} has no INSIGHT_ variable",
            arg.get_id()
        );
        assert_eq!(
            arg.get_long().map(|flag| flag.replace('-', "_").to_uppercase()),
            Some(variable.trim_start_matches("INSIGHT_").to_owned()),
            "{variable}: the flag is the variable's name"
        );
        assert!(!arg.is_hide_set(), "{variable} is hidden from --help");
    }
}

#[test]
fn docs_match_the_declarations() {
    let rendered = render();
    let written = std::fs::read_to_string(PATH).unwrap_or_default();
    if rendered == written {
        return;
    }
    if std::env::var_os("INSIGHT_BLESS").is_some_and(|bless| !bless.is_empty()) {
        std::fs::write(PATH, &rendered).expect("write docs/settings.md");
        return;
    }
    let (line, (wanted, found)) = rendered
        .lines()
        .chain(std::iter::repeat(""))
        .zip(written.lines().chain(std::iter::repeat("")))
        .enumerate()
        .find(|(_, (wanted, found))| wanted != found)
        .expect("the texts differ");
    panic!(
        "docs/settings.md is not what the settings in src/config/ declare (line {}):\n  declared: {wanted}\n  in the file: {found}\n\
         Edit the declaration (its doc comment or attributes), not the file, then rewrite the file with\n  \
         INSIGHT_BLESS=1 cargo test --lib config::reference\nand review its diff.",
        line + 1
    );
}
