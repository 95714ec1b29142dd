//! Request bodies are checked against the JSON Schema the API document publishes for
//! their type (the same `ToSchema` derive), and every problem is reported the way
//! FastAPI/pydantic v2 reports it. Validation is strict: what the document does not
//! allow (a number where a string is expected, `"true"` for a boolean) is refused,
//! so clients generated from the document and the server agree.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayItems, Schema, SchemaType, Type};

use crate::error::{Error, ValidationIssue};

/// Parses and validates a JSON request body into `T`, reporting every problem at once.
pub fn parse_body<T>(bytes: &[u8]) -> Result<T, Error>
where
    T: DeserializeOwned + ToSchema + 'static,
{
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::validation(vec![ValidationIssue::new(
            vec![json!("body")],
            "missing",
            "Field required",
        )]));
    }
    let mut value: Value = serde_json::from_slice(bytes).map_err(|err| {
        // At the end of input pydantic points past the last byte; serde at it.
        let offset = if err.is_eof() {
            bytes.len()
        } else {
            byte_offset(bytes, err.line(), err.column())
        };
        Error::validation(vec![
            ValidationIssue::new(vec![json!("body"), json!(offset)], "json_invalid", "JSON decode error")
                .with_input(json!({}))
                .with_ctx(json!({ "error": err.to_string() })),
        ])
    })?;
    whole_numbers(&mut value);
    let (validator, fields) = &*validator_for::<T>();
    let mut issues = schema_issues(validator, &value, vec![json!("body")]);
    // pydantic reports in the order the fields are declared.
    issues.sort_by_key(|issue| {
        let field = issue.loc.get(1).and_then(Value::as_str);
        field
            .and_then(|f| fields.iter().position(|known| known == f))
            .unwrap_or(usize::MAX)
    });
    if !issues.is_empty() {
        return Err(Error::validation(issues));
    }
    crate::domain::drop_nul(&mut value);
    // The schema has passed; what serde still refuses (a number beyond 64 bits where no
    // bound is documented) is told at its place.
    serde_path_to_error::deserialize(value).map_err(|error| {
        let mut loc = vec![json!("body")];
        loc.extend(error.path().iter().filter_map(|segment| match segment {
            serde_path_to_error::Segment::Seq { index } => Some(json!(index)),
            serde_path_to_error::Segment::Map { key } => Some(json!(key)),
            serde_path_to_error::Segment::Enum { variant } => Some(json!(variant)),
            serde_path_to_error::Segment::Unknown => None,
        }));
        let reason = error.into_inner().to_string();
        let issue = if reason.starts_with("invalid type: floating point") {
            ValidationIssue::new(loc, "int_type", "Input should be a valid integer")
        } else {
            ValidationIssue::value_error(loc, &reason)
        };
        Error::validation(vec![issue])
    })
}

/// A whole number written with a fraction (`3.0`) becomes the integer: JSON Schema counts
/// it as one, so the document promises it is accepted wherever an integer is.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(whole) = number
                .as_f64()
                .filter(|n| n.fract() == 0.0 && *n >= i64::MIN as f64 && *n < i64::MAX as f64)
            {
                *value = Value::from(whole as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// serde_json reports line and column (1-based); pydantic reports a position.
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// A validator and the body's top-level field names in declaration order.
type CompiledSchema = (Validator, Vec<String>);

/// The compiled schema of `T`, built once per type from its `ToSchema` output, with
/// the names of its top-level fields in declaration order.
fn validator_for<T: ToSchema + 'static>() -> Arc<CompiledSchema> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<CompiledSchema>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry(TypeId::of::<T>())
        .or_insert_with(|| {
            let mut components = Vec::new();
            T::schemas(&mut components);
            let mut root = T::schema();
            forbid_blank(&mut root);
            let mut root = serde_json::to_value(root).unwrap_or(Value::Null);
            let schemas: serde_json::Map<String, Value> = components
                .into_iter()
                .map(|(name, mut schema)| {
                    forbid_blank(&mut schema);
                    (name, serde_json::to_value(schema).unwrap_or(Value::Null))
                })
                .collect();
            if let Value::Object(map) = &mut root {
                map.insert("components".into(), json!({ "schemas": schemas }));
            }
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&root)
                .unwrap_or_else(|err| panic!("the schema of {} is not valid JSON Schema: {err}", T::name()));
            let fields = root
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| props.keys().cloned().collect())
                .unwrap_or_default();
            Arc::new((validator, fields))
        })
        .clone()
}

/// The pattern of a text that must hold more than whitespace: a character outside
/// Unicode's White_Space set and other than NUL (which is dropped), written out so that
/// every regex engine (the server's, a generated client's, a fuzzer's) reads the same set.
pub const NOT_BLANK: &str =
    "[^\\u0000\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

/// Gives every text of `schema` that must not be empty (`minLength` 1 or more, no pattern
/// or format of its own) the [`NOT_BLANK`] pattern: a name of spaces is no name. The
/// server validates with the schema it publishes, so both say the same.
pub fn forbid_blank(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else { return };
    match schema {
        Schema::Object(object) => {
            let is_text = match &object.schema_type {
                SchemaType::Type(Type::String) => true,
                SchemaType::Array(types) => types.contains(&Type::String),
                _ => false,
            };
            if is_text && object.min_length.unwrap_or(0) >= 1 && object.pattern.is_none() && object.format.is_none() {
                object.pattern = Some(NOT_BLANK.to_owned());
            }
            object.properties.values_mut().for_each(forbid_blank);
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                forbid_blank(items);
            }
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(forbid_blank),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(forbid_blank),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(forbid_blank),
        _ => {}
    }
}

/// Every problem of `value` under `validator`, with `loc` starting at `prefix`.
pub fn schema_issues(validator: &Validator, value: &Value, prefix: Vec<Value>) -> Vec<ValidationIssue> {
    let mut issues = Vec::new();
    for error in validator.iter_errors(value) {
        push_issues(&error, value, &prefix, &mut issues);
    }
    // One problem per place, as pydantic reports it: a number given for an enum is a
    // type error, not also an unknown member.
    let mut seen = Vec::new();
    issues.retain(|issue| {
        let fresh = !seen.contains(&issue.loc);
        seen.push(issue.loc.clone());
        fresh
    });
    issues
}

fn push_issues(error: &ValidationError<'_>, root: &Value, prefix: &[Value], issues: &mut Vec<ValidationIssue>) {
    let mut loc = prefix.to_vec();
    loc.extend(pointer_loc(root, error.instance_path().as_str()));
    let input = error.instance().clone().into_owned();
    let issue = match error.kind() {
        ValidationErrorKind::Required { property } => {
            loc.push(property.clone());
            ValidationIssue::new(loc, "missing", "Field required").with_input(input)
        }
        ValidationErrorKind::Type { kind } => type_issue(kind, loc).with_input(input),
        ValidationErrorKind::Format { format } if format == "uuid" => {
            let reason = match input.as_str().map(uuid::Uuid::parse_str) {
                Some(Err(err)) => err.to_string(),
                _ => "invalid UUID".to_owned(),
            };
            ValidationIssue::new(loc, "uuid_parsing", format!("Input should be a valid UUID, {reason}"))
                .with_input(input)
                .with_ctx(json!({ "error": reason }))
        }
        ValidationErrorKind::Format { format } if format == "email" => {
            ValidationIssue::new(loc, "value_error", "value is not a valid email address").with_input(input)
        }
        ValidationErrorKind::Format { format } if format == "uri" => {
            ValidationIssue::new(loc, "url_parsing", "Input should be a valid URL").with_input(input)
        }
        ValidationErrorKind::Format { format } if format == "date-time" => {
            ValidationIssue::new(loc, "datetime_parsing", "Input should be a valid datetime").with_input(input)
        }
        ValidationErrorKind::Enum { options } => {
            let expected = expected_list(options);
            ValidationIssue::new(loc, "enum", format!("Input should be {expected}"))
                .with_input(input)
                .with_ctx(json!({ "expected": expected }))
        }
        ValidationErrorKind::MinLength { limit } => ValidationIssue::new(
            loc,
            "string_too_short",
            format!("String should have at least {limit} character{}", plural(*limit)),
        )
        .with_input(input)
        .with_ctx(json!({ "min_length": limit })),
        ValidationErrorKind::MaxLength { limit } => ValidationIssue::new(
            loc,
            "string_too_long",
            format!("String should have at most {limit} character{}", plural(*limit)),
        )
        .with_input(input)
        .with_ctx(json!({ "max_length": limit })),
        ValidationErrorKind::MinItems { limit } => {
            let actual = input.as_array().map_or(0, Vec::len);
            ValidationIssue::new(
                loc,
                "too_short",
                format!(
                    "List should have at least {limit} item{} after validation, not {actual}",
                    plural(*limit)
                ),
            )
            .with_input(input)
            .with_ctx(json!({ "field_type": "List", "min_length": limit, "actual_length": actual }))
        }
        ValidationErrorKind::MaxItems { limit } => {
            let actual = input.as_array().map_or(0, Vec::len);
            ValidationIssue::new(
                loc,
                "too_long",
                format!(
                    "List should have at most {limit} item{} after validation, not {actual}",
                    plural(*limit)
                ),
            )
            .with_input(input)
            .with_ctx(json!({ "field_type": "List", "max_length": limit, "actual_length": actual }))
        }
        // Whitespace only, reported as pydantic reports a stripped string left empty.
        ValidationErrorKind::Pattern { pattern } if pattern == NOT_BLANK => {
            ValidationIssue::new(loc, "string_too_short", "String should have at least 1 character")
                .with_input(input)
                .with_ctx(json!({ "min_length": 1 }))
        }
        ValidationErrorKind::Pattern { pattern } => ValidationIssue::new(
            loc,
            "string_pattern_mismatch",
            format!("String should match pattern '{pattern}'"),
        )
        .with_input(input)
        .with_ctx(json!({ "pattern": pattern })),
        ValidationErrorKind::Minimum { limit } => ValidationIssue::new(
            loc,
            "greater_than_equal",
            format!("Input should be greater than or equal to {limit}"),
        )
        .with_input(input)
        .with_ctx(json!({ "ge": limit })),
        ValidationErrorKind::Maximum { limit } => ValidationIssue::new(
            loc,
            "less_than_equal",
            format!("Input should be less than or equal to {limit}"),
        )
        .with_input(input)
        .with_ctx(json!({ "le": limit })),
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            // `T | null`: report what is wrong against `T`, not that the value is not null.
            let branch = context
                .iter()
                .find(|errors| !is_only_null_mismatch(errors))
                .or(context.first());
            for error in branch.into_iter().flatten() {
                push_issues(error, root, prefix, issues);
            }
            return;
        }
        _ => ValidationIssue::value_error(loc, &error.to_string()).with_input(input),
    };
    issues.push(issue);
}

fn is_only_null_mismatch(errors: &[ValidationError<'_>]) -> bool {
    matches!(errors, [error] if matches!(error.kind(), ValidationErrorKind::Type { kind: TypeKind::Single(JsonType::Null) }))
}

fn type_issue(kind: &TypeKind, loc: Vec<Value>) -> ValidationIssue {
    let expected: Vec<JsonType> = match kind {
        TypeKind::Single(single) => vec![*single],
        TypeKind::Multiple(set) => set.iter().collect(),
    };
    let wanted = expected
        .into_iter()
        .find(|t| *t != JsonType::Null)
        .unwrap_or(JsonType::Null);
    let (kind, msg) = match wanted {
        JsonType::String => ("string_type", "Input should be a valid string"),
        JsonType::Integer => ("int_type", "Input should be a valid integer"),
        JsonType::Number => ("float_type", "Input should be a valid number"),
        JsonType::Boolean => ("bool_type", "Input should be a valid boolean"),
        JsonType::Array => ("list_type", "Input should be a valid list"),
        JsonType::Object => (
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
        ),
        JsonType::Null => ("none_required", "Input should be None"),
    };
    ValidationIssue::new(loc, kind, msg)
}

/// `'a', 'b' or 'c'`, as pydantic lists enum members.
fn expected_list(options: &Value) -> String {
    let items: Vec<String> = options
        .as_array()
        .map(|values| {
            values
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    Value::String(s) => format!("'{s}'"),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A JSON pointer as `loc` items: array positions become integers.
fn pointer_loc(root: &Value, pointer: &str) -> Vec<Value> {
    let mut node = Some(root);
    let mut loc = Vec::new();
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match (node, segment.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(index)) => {
                node = items.get(index);
                loc.push(json!(index));
            }
            (current, _) => {
                node = current.and_then(|v| v.get(&segment));
                loc.push(json!(segment));
            }
        }
    }
    loc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_bytes_across_lines() {
        let body = b"{\n  \"a\": x\n}";
        assert_eq!(byte_offset(body, 2, 8), 9);
        assert_eq!(byte_offset(b"{", 1, 2), 1);
    }

    #[test]
    fn pointers_become_locs() {
        let value = json!({"ids": ["a", "b"], "0": {"x": 1}});
        assert_eq!(pointer_loc(&value, "/ids/1"), vec![json!("ids"), json!(1)]);
        assert_eq!(pointer_loc(&value, "/0/x"), vec![json!("0"), json!("x")]);
        assert_eq!(pointer_loc(&value, ""), Vec::<Value>::new());
    }

    #[test]
    fn nul_characters_are_dropped_and_whole_numbers_are_integers() {
        let mut value = json!({"title": "a\0b", "tags": ["ok", "x\0"], "n": 1, "w": 3.0, "f": 1.5, "big": 1e30});
        whole_numbers(&mut value);
        crate::domain::drop_nul(&mut value);
        assert_eq!(
            value,
            json!({"title": "ab", "tags": ["ok", "x"], "n": 1, "w": 3, "f": 1.5, "big": 1e30})
        );
        assert!(value["w"].is_i64());
    }

    #[test]
    fn enum_lists_read_like_pydantic() {
        assert_eq!(
            expected_list(&json!(["fast", "balanced", "deep", null])),
            "'fast', 'balanced' or 'deep'"
        );
        assert_eq!(expected_list(&json!(["a"])), "'a'");
    }
}
