//! A JSON document read a part at a time: each value kept as its text (a
//! borrowed slice of the bytes) and parsed when asked, so that a whole
//! document is never held as a `serde_json::Value`, which costs about twenty
//! times its size. The text was checked for its syntax first
//! (`read::open`), with the parser that parses it here.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON value kept as its text, parsed when asked.
#[derive(Clone, Copy)]
pub(crate) struct Lazy<'a>(pub(crate) &'a RawValue);

impl<'a> Lazy<'a> {
    /// The value, parsed. The text was checked by [`Syntax`] with the same
    /// parser, so it parses; `Null` is a safe stand-in if it ever did not.
    pub(crate) fn value(self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// Its elements, each kept as text, when it is an array.
    pub(crate) fn array(self) -> Option<Vec<Lazy<'a>>> {
        let text = self.0.get();
        if !text.starts_with('[') {
            return None;
        }
        let items: Vec<&'a RawValue> = serde_json::from_str(text).ok()?;
        Some(items.into_iter().map(Lazy).collect())
    }

    /// Its keys, each value kept as text, when it is an object.
    pub(crate) fn object(self) -> Option<Object<'a>> {
        let text = self.0.get();
        if !text.starts_with('{') {
            return None;
        }
        serde_json::from_str(text).ok().map(Object)
    }

    /// Parses it into `T` (a small struct of the fields a check reads).
    pub(crate) fn parse<T: Deserialize<'a>>(self) -> Option<T> {
        serde_json::from_str(self.0.get()).ok()
    }
}

/// A JSON object whose values are kept as text.
#[derive(Clone, Default)]
pub(crate) struct Object<'a>(pub(crate) BTreeMap<String, &'a RawValue>);

impl<'a> Object<'a> {
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub(crate) fn get(&self, key: &str) -> Option<Lazy<'a>> {
        self.0.get(key).map(|r| Lazy(r))
    }

    /// The value at `key`, parsed; `Null` when absent (as `Value` indexing).
    pub(crate) fn value(&self, key: &str) -> Value {
        self.get(key).map_or(Value::Null, Lazy::value)
    }

    /// The object as a `Value`, but for the keys in `except` (the large
    /// parts, read one element at a time).
    pub(crate) fn small(&self, except: &[&str]) -> Value {
        Value::Object(
            self.0
                .iter()
                .filter(|(k, _)| !except.contains(&k.as_str()))
                .map(|(k, r)| (k.clone(), Lazy(r).value()))
                .collect(),
        )
    }

    /// The value at `key` when it is a string.
    pub(crate) fn str(&self, key: &str) -> Option<String> {
        self.get(key)?.parse::<String>()
    }
}
