//! A field kept as the JSON that came in, typed by what it will be parsed
//! into. The protocol checks some parts of a message later than the message
//! itself (a turn's observation only after `turn.started`, so a bad one fails
//! the turn with its own code); until then the raw value travels as it is,
//! and its type says which parse it is waiting for.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// JSON waiting to be parsed as a `T` (see the `parse` of each `Deferred<T>`).
pub struct Deferred<T> {
    raw: Value,
    parses_as: PhantomData<fn() -> T>,
}

impl<T> Deferred<T> {
    pub fn new(raw: Value) -> Self {
        Deferred {
            raw,
            parses_as: PhantomData,
        }
    }

    /// The JSON as it came in.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    pub fn into_raw(self) -> Value {
        self.raw
    }
}

impl<T> Default for Deferred<T> {
    fn default() -> Self {
        Deferred::new(Value::Null)
    }
}

impl<T> Clone for Deferred<T> {
    fn clone(&self) -> Self {
        Deferred::new(self.raw.clone())
    }
}

impl<T> PartialEq for Deferred<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<T> fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<T> Serialize for Deferred<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de, T> Deserialize<'de> for Deferred<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Deferred::new)
    }
}
