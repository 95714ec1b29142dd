//! The check every setting's value goes through: a parse that says what the value must
//! be, wrapped so that a refusal names the setting by its variable and its flag, read from
//! the setting's own declaration (its `env` and `long`), never written out again.

use std::ffi::OsStr;
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::str::FromStr;
use std::sync::Arc;

use clap::builder::TypedValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A parse of a setting's value: the value, or what it must be (`must be …`, no value in it).
type Parse<T> = dyn Fn(&str) -> Result<T, String> + Send + Sync;

/// A setting's check, as clap runs it.
#[derive(Clone)]
pub(super) struct Checked<T>(Arc<Parse<T>>);

/// A check from a parse whose error says what the value must be.
pub(super) fn checked<T>(parse: impl Fn(&str) -> Result<T, String> + Send + Sync + 'static) -> Checked<T> {
    Checked(Arc::new(parse))
}

/// A whole number within `range` (surrounding spaces allowed).
pub(super) fn ranged<T>(range: RangeInclusive<T>) -> Checked<T>
where
    T: FromStr + PartialOrd + Display + Send + Sync + 'static,
{
    checked(move |value| {
        value
            .trim()
            .parse::<T>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| format!("must be a whole number from {} to {}", range.start(), range.end()))
    })
}

/// `true`, `1`, `yes`, `on` or `false`, `0`, `no`, `off` and empty, in any case.
pub(super) fn parse_flag(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err("must be true or false (or 1 or 0, yes or no, on or off; empty is false)".into()),
    }
}

/// An `http://` or `https://` URL, kept without a trailing `/`.
pub(super) fn parse_http_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err("must be an http:// or https:// URL".into())
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let text = value.to_str().ok_or_else(|| "must be UTF-8 text".to_owned());
        text.and_then(|text| (self.0)(text)).map_err(|must| {
            let name = arg.map(setting_name).unwrap_or_else(|| "the setting".into());
            // A secret is not repeated, not even when it is refused.
            let shown = match (arg.is_some_and(clap::Arg::is_hide_env_values_set), value.to_str()) {
                (false, Some(text)) => format!(", not {text:?}"),
                _ => String::new(),
            };
            let mut error =
                clap::Error::raw(ErrorKind::ValueValidation, format!("{name} {must}{shown}\n")).with_cmd(cmd);
            error.insert(ContextKind::Custom, ContextValue::String(must));
            error
        })
    }
}

/// `INSIGHT_X (--x)`, as the setting is declared.
fn setting_name(arg: &clap::Arg) -> String {
    let flag = arg.get_long().map(|long| format!("--{long}"));
    match (arg.get_env().and_then(OsStr::to_str), flag) {
        (Some(variable), Some(flag)) => format!("{variable} ({flag})"),
        (Some(variable), None) => variable.to_owned(),
        (None, Some(flag)) => flag,
        (None, None) => arg.get_id().to_string(),
    }
}

/// What a setting's value must be, as its check says when it refuses one: the reference
/// in docs/settings.md states it beside the default. `None` when the check takes anything
/// (a name, a path).
#[cfg(test)]
pub(super) fn requirement(arg: &clap::Arg) -> Option<String> {
    let flag = format!("--{}", arg.get_long()?);
    // Empty refuses the numbers and most forms; `?` the ones that take empty as "none".
    ["", "?"].into_iter().find_map(|probe| {
        let probing = clap::Command::new("probe").arg(arg.clone().env(None));
        let error = probing
            .try_get_matches_from(["probe", &format!("{flag}={probe}")])
            .err()?;
        match error.get(ContextKind::Custom) {
            Some(ContextValue::String(must)) => Some(must.clone()),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(parser: Checked<u32>, hidden: bool) -> clap::Command {
        clap::Command::new("insight").arg(
            clap::Arg::new("n")
                .long("n")
                .env("INSIGHT_N")
                .hide_env_values(hidden)
                .value_parser(parser),
        )
    }

    #[test]
    fn a_refusal_names_the_variable_and_the_flag() {
        let error = command(ranged(1..=10), false)
            .try_get_matches_from(["insight", "--n", "11"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(r#"INSIGHT_N (--n) must be a whole number from 1 to 10, not "11""#),
            "{error}"
        );
        let matches = command(ranged(1..=10), false)
            .try_get_matches_from(["insight", "--n", " 7 "])
            .unwrap();
        assert_eq!(matches.get_one::<u32>("n"), Some(&7));
    }

    #[test]
    fn a_hidden_value_is_not_repeated() {
        let error = command(ranged(1..=10), true)
            .try_get_matches_from(["insight", "--n", "hunter2"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("INSIGHT_N (--n) must be a whole number"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn the_requirement_is_what_the_check_says() {
        let cmd = command(ranged(3..=5), false);
        let arg = cmd.get_arguments().next().unwrap();
        assert_eq!(requirement(arg).as_deref(), Some("must be a whole number from 3 to 5"));
        assert_eq!(parse_flag("On"), Ok(true));
        assert_eq!(parse_flag(""), Ok(false));
        assert!(parse_flag("maybe").is_err());
    }
}
