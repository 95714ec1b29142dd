//! The three states of a field in a PUT or PATCH body: left out, sent as `null`, or
//! sent with a value. `Option<Option<T>>` would carry the same facts, but names make
//! the update rules readable.

use serde::{Deserialize, Deserializer};

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Patch<T> {
    /// The field was not in the body: leave the stored value as it is.
    #[default]
    Missing,
    /// The field was `null`: clear a nullable field; a non-nullable one stays as it is.
    Null,
    /// The field has a value: store it.
    Value(T),
}

impl<T> Patch<T> {
    pub fn as_value(&self) -> Option<&T> {
        match self {
            Patch::Value(value) => Some(value),
            _ => None,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            None => Patch::Null,
            Some(value) => Patch::Value(value),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        title: Patch<String>,
    }

    #[test]
    fn tells_missing_null_and_value_apart() {
        let missing: Body = serde_json::from_str("{}").expect("empty object");
        let null: Body = serde_json::from_str(r#"{"title":null}"#).expect("null title");
        let value: Body = serde_json::from_str(r#"{"title":"x"}"#).expect("a title");
        assert_eq!(missing.title, Patch::Missing);
        assert_eq!(null.title, Patch::Null);
        assert_eq!(value.title, Patch::Value("x".to_owned()));
        assert_eq!(value.title.as_value().map(String::as_str), Some("x"));
        assert_eq!(null.title.as_value(), None);
    }
}
