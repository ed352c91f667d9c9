//! The ids that cross a boundary (the wire, llmcp packets, the store), each
//! its own type so one cannot be passed where another is meant. On the wire
//! and in stored JSON every one is a plain string (`#[serde(transparent)]`),
//! exactly as before they had types.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

/// A string id: transparent on the wire, read as a `&str`.
macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        /// Shown as the string it is, as logs showed it before it had a type.
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

/// Its schema is a plain string, inlined where it is used: the type is the
/// host's, the wire has always said `string`.
macro_rules! plain_string_schema {
    ($name:ident) => {
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                String::json_schema(generator)
            }
        }
    };
}

string_id!(
    /// The id of an extension message (its schema, `RequestId`, is in
    /// `wire`, next to the check it describes).
    RequestId
);

string_id!(
    /// A conversation's id.
    ConversationId
);
plain_string_schema!(ConversationId);

string_id!(
    /// A tool call's id: `<response id>:<index>`.
    CallId
);
plain_string_schema!(CallId);

string_id!(
    /// A collection's id.
    CollectionId
);
plain_string_schema!(CollectionId);

string_id!(
    /// A collection source's id.
    SourceId
);
plain_string_schema!(SourceId);

string_id!(
    /// A saved artifact's id.
    ArtifactId
);
plain_string_schema!(ArtifactId);

string_id!(
    /// A saved prompt's id.
    PromptId
);
plain_string_schema!(PromptId);
