//! The rule that keeps the suite's shared helpers in one place: a test module imports
//! from `crate::support` and names its own items, never another test module's. What two
//! modules need goes into `support/`; what one module needs stays in it.

use std::path::{Path, PathBuf};

/// The suite's folder, `tests/api`.
fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The modules `main.rs` declares.
fn declared_modules() -> Vec<String> {
    read(&suite().join("main.rs"))
        .lines()
        .filter_map(|line| line.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("read the suite's folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

/// Every source of the test modules (all of `tests/api` but `main.rs` and `support/`),
/// by its path under `tests/api`, with its text.
fn test_sources() -> Vec<(PathBuf, String)> {
    let root = suite();
    let mut found = Vec::new();
    sources(&root, &mut found);
    let found: Vec<(PathBuf, String)> = found
        .into_iter()
        .map(|path| {
            let text = read(&path);
            (path.strip_prefix(&root).expect("under tests/api").to_path_buf(), text)
        })
        .filter(|(path, _)| path != Path::new("main.rs") && !path.starts_with("support"))
        .collect();
    assert!(found.len() > 40, "the test modules were found: {}", found.len());
    found
}

/// The names a text reaches through `prefix` (`crate::x::...`, `crate::{x, y}`),
/// outside comments, each with its line.
fn named_after(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut named = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices(prefix) {
            let follows_a_name = line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
            if follows_a_name {
                continue;
            }
            let rest = &line[at + prefix.len()..];
            let heads: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split(',').map(str::trim).collect(),
                None => vec![rest],
            };
            for head in heads {
                let name: String = head
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    named.push((number + 1, name));
                }
            }
        }
    }
    named
}

/// Where a test module's source reaches another module of the suite: through `crate::`
/// anything but `support`, or, in a file right under `tests/api` (whose `super` is the
/// crate), through `super::` a module `main.rs` declares.
fn reaches_outside(path: &Path, text: &str, modules: &[String]) -> Vec<String> {
    let top = path.parent() == Some(Path::new(""));
    let mut found: Vec<String> = named_after(text, "crate::")
        .into_iter()
        .filter(|(_, name)| name != "support")
        .map(|(line, name)| format!("{}:{line} crate::{name}", path.display()))
        .collect();
    if top {
        found.extend(
            named_after(text, "super::")
                .into_iter()
                .filter(|(_, name)| modules.contains(name))
                .map(|(line, name)| format!("{}:{line} super::{name}", path.display())),
        );
    }
    found
}

#[test]
fn a_test_module_imports_from_the_support_only() {
    let modules = declared_modules();
    assert!(modules.iter().any(|module| module == "support"), "{modules:?}");
    let offenders: Vec<String> = test_sources()
        .iter()
        .flat_map(|(path, text)| reaches_outside(path, text, &modules))
        .collect();
    assert!(
        offenders.is_empty(),
        "these reach into another test module; what two modules use belongs in support/: {offenders:#?}"
    );
}

#[test]
fn only_the_support_takes_in_files_by_path() {
    // `#[path = "..."] mod x;` in a test module would be another module's code under a
    // name of its own.
    let offenders: Vec<PathBuf> = test_sources()
        .into_iter()
        .filter(|(_, text)| text.lines().any(|line| line.trim_start().starts_with("#[path")))
        .map(|(path, _)| path)
        .collect();
    assert!(offenders.is_empty(), "these take in files by path: {offenders:?}");
}

#[test]
fn the_modules_a_source_reaches_are_read_from_paths_groups_and_super() {
    let modules = vec!["records".to_owned(), "support".to_owned()];
    let text = "use crate::support::records::wav;\n// crate::records::wav in a comment\n\
                use crate::{records, support::TestApp};\nlet x = crate::generation::ANNA;\n\
                let y = $crate::records::wav!();\nuse super::records::upload;\nuse super::own;";
    assert_eq!(
        reaches_outside(Path::new("chat.rs"), text, &modules),
        [
            "chat.rs:3 crate::records",
            "chat.rs:4 crate::generation",
            "chat.rs:6 super::records"
        ]
    );
    // Below a module's own folder, `super` is that module.
    assert_eq!(
        reaches_outside(Path::new("oidc/provider.rs"), "use super::records::x;", &modules),
        Vec::<String>::new()
    );
}
