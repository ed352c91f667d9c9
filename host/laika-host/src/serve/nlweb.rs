//! NLWeb protocol v0.54 (docs/nlweb.md): the request and response types, with
//! the protocol's field names, and the request parser. This is the protocol's
//! one definition in the host; the server and the answers only use these types.
//!
//! Requests are v0.54 only: the old flat format (`query` as a string, `site`,
//! `prev`, `streaming` at the top) is refused with a message saying so.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The protocol version this server speaks and writes in every `_meta`.
pub const VERSION: &str = "0.54";

// ---------------------------------------------------------------- requests

/// `/ask`'s request.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskRequest {
    pub query: Query,
    #[serde(default)]
    pub context: Context,
    #[serde(default)]
    pub prefer: Prefer,
    #[serde(default)]
    pub meta: Meta,
}

/// `query`: `text` is required; every other field is optional, and fields
/// this server has no name for are kept as filters.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
    /// A collection name, `history`, or a site in the history.
    #[serde(default)]
    pub site: Option<String>,
    #[serde(default, rename = "itemType")]
    pub item_type: Option<String>,
    /// Every other field (`location`, `price`, …).
    #[serde(flatten)]
    pub filters: Map<String, Value>,
}

pub const CONVERSATIONAL_CONTEXT: &str = "ConversationalContext";

fn conversational_context() -> String {
    CONVERSATIONAL_CONTEXT.into()
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct Context {
    #[serde(rename = "@type", default = "conversational_context")]
    pub context_type: String,
    /// Earlier queries of the conversation, oldest first.
    #[serde(default)]
    pub prev: Vec<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub memory: Vec<String>,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            context_type: conversational_context(),
            prev: Vec::new(),
            text: None,
            memory: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum ResponseFormat {
    /// `content` + `structuredData` (the default).
    #[default]
    #[serde(rename = "chatgpt_app")]
    ChatgptApp,
    /// `results`.
    #[serde(rename = "conv_search", alias = "conversational_search")]
    ConvSearch,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct Prefer {
    #[serde(default = "yes", deserialize_with = "flag")]
    #[schemars(with = "bool")]
    pub streaming: bool,
    #[serde(default)]
    pub response_format: ResponseFormat,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default, rename = "accept-language")]
    pub accept_language: Option<String>,
    #[serde(default, rename = "user-agent")]
    pub user_agent: Option<String>,
}

impl Default for Prefer {
    fn default() -> Self {
        Prefer {
            streaming: true,
            response_format: ResponseFormat::default(),
            mode: Mode::default(),
            accept_language: None,
            user_agent: None,
        }
    }
}

/// `prefer.mode`: what the answer is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The matching pages only: no model runs, nothing is stored.
    List,
    /// The matching pages, then a summary of what they say.
    Summarize,
    /// The matching pages, then an answer to the query drawn from them.
    #[default]
    Generate,
}

/// Longest language tag taken from `accept-language` (BCP 47's own limit
/// is 35 characters).
const MAX_LANGUAGE_TAG: usize = 35;

impl Prefer {
    /// The language to answer in: the `accept-language` range with the
    /// highest weight (`fr-CH, fr;q=0.9, en;q=0.8` → `fr-CH`), the first
    /// of equals; `*`, malformed ranges and `q=0` are skipped.
    pub fn language(&self) -> Option<String> {
        let mut best: Option<(f64, &str)> = None;
        for range in self.accept_language.as_deref()?.split(',') {
            let mut parts = range.split(';');
            let tag = parts.next().unwrap_or_default().trim();
            let weight = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(Some(1.0), |q| q.trim().parse::<f64>().ok());
            let Some(weight) = weight.filter(|w| (0.0..=1.0).contains(w) && *w > 0.0) else {
                continue;
            };
            let well_formed = !tag.is_empty()
                && tag.len() <= MAX_LANGUAGE_TAG
                && tag.split('-').all(|s| {
                    (1..=8).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric())
                })
                && tag
                    .split('-')
                    .next()
                    .is_some_and(|p| p.chars().all(|c| c.is_ascii_alphabetic()));
            if well_formed && best.is_none_or(|(w, _)| weight > w) {
                best = Some((weight, tag));
            }
        }
        best.map(|(_, tag)| tag.to_owned())
    }
}

fn yes() -> bool {
    true
}

/// A boolean, or its spelling in a URL query (`true`/`false`/`1`/`0`).
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Text(String),
    }
    match Flag::deserialize(d)? {
        Flag::Bool(b) => Ok(b),
        Flag::Text(t) => match t.as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            other => Err(serde::de::Error::custom(format!(
                "expected true or false, got {other:?}"
            ))),
        },
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Meta {
    #[serde(default)]
    pub api_version: Option<String>,
    #[serde(default)]
    pub session_context: Option<SessionContext>,
}

/// Echoed back in every response's `_meta`; `conversation_id` is the Laika
/// conversation the ask was stored in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_token: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `/await`'s request.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct AwaitRequest {
    pub promise_token: String,
    pub action: AwaitAction,
    #[serde(default)]
    pub meta: Meta,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AwaitAction {
    Checkin,
    Cancel,
}

// --------------------------------------------------------------- responses

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ResponseType {
    Answer,
    Elicitation,
    Promise,
    Failure,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseMeta {
    pub response_type: ResponseType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_context: Option<SessionContext>,
}

/// A result: a schema.org-typed object with its grounding. Type-specific
/// attributes go in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultObject {
    #[serde(rename = "@type")]
    pub result_type: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub description: String,
    pub grounding: Grounding,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Something a client can do with a result, as a schema.org Action.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    #[serde(rename = "@context")]
    pub context: &'static str,
    #[serde(rename = "@type")]
    pub action_type: &'static str,
    pub name: &'static str,
    pub description: String,
    pub protocol: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<&'static str>,
    pub endpoint: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

pub const SCHEMA_ORG: &str = "http://schema.org/";

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Grounding {
    pub source_urls: Vec<String>,
    pub citations: Vec<GroundingCitation>,
}

/// A quote the answer relies on, verified verbatim in the source it names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroundingCitation {
    pub quote: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub verified: bool,
}

/// One `content` item of the `chatgpt_app` format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContentItem {
    #[serde(rename = "type")]
    pub content_type: &'static str,
    pub text: String,
}

impl ContentItem {
    pub fn text(text: String) -> ContentItem {
        ContentItem {
            content_type: "text",
            text,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructuredData {
    pub results: Vec<ResultObject>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Elicitation {
    pub text: String,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Question {
    pub id: String,
    pub text: String,
    #[serde(rename = "type")]
    pub question_type: QuestionType,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    SingleSelect,
    MultiSelect,
    Text,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Promise {
    pub token: String,
    /// Seconds until the answer is expected.
    pub estimated_time: u64,
    /// Set when `/await` cancelled the work (the token is then forgotten).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FailureCode {
    InvalidRequest,
    MissingField,
    InvalidAction,
    NoResults,
    Unauthorized,
    InternalError,
}

impl FailureCode {
    /// The HTTP status a Failure with this code goes out with.
    pub fn status(self) -> u16 {
        match self {
            FailureCode::InvalidRequest
            | FailureCode::MissingField
            | FailureCode::InvalidAction => 400,
            FailureCode::Unauthorized => 401,
            FailureCode::NoResults => 404,
            FailureCode::InternalError => 500,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBody {
    pub code: FailureCode,
    pub message: String,
}

/// A Failure before it has its `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure(pub ErrorBody);

impl Failure {
    pub fn new(code: FailureCode, message: impl Into<String>) -> Failure {
        Failure(ErrorBody {
            code,
            message: message.into(),
        })
    }
}

/// What a response carries besides `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Payload {
    /// `conv_search`.
    Results {
        results: Vec<ResultObject>,
    },
    /// `chatgpt_app`.
    ChatgptApp {
        content: Vec<ContentItem>,
        #[serde(rename = "structuredData")]
        structured_data: StructuredData,
    },
    Elicitation {
        elicitation: Elicitation,
    },
    Promise {
        promise: Promise,
    },
    Failure {
        error: ErrorBody,
    },
}

impl Payload {
    pub fn response_type(&self) -> ResponseType {
        match self {
            Payload::Results { .. } | Payload::ChatgptApp { .. } => ResponseType::Answer,
            Payload::Elicitation { .. } => ResponseType::Elicitation,
            Payload::Promise { .. } => ResponseType::Promise,
            Payload::Failure { .. } => ResponseType::Failure,
        }
    }

    /// The answer in the format the client prefers.
    pub fn answer(format: ResponseFormat, text: String, results: Vec<ResultObject>) -> Payload {
        match format {
            ResponseFormat::ConvSearch => Payload::Results { results },
            ResponseFormat::ChatgptApp => Payload::ChatgptApp {
                content: vec![ContentItem::text(text)],
                structured_data: StructuredData { results },
            },
        }
    }

    /// The HTTP status: 200, or the Failure code's.
    pub fn status(&self) -> u16 {
        match self {
            Payload::Failure { error } => error.code.status(),
            _ => 200,
        }
    }
}

impl From<Failure> for Payload {
    fn from(f: Failure) -> Payload {
        Payload::Failure { error: f.0 }
    }
}

/// A whole response: `_meta` and its payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    #[serde(rename = "_meta")]
    pub meta: ResponseMeta,
    #[serde(flatten)]
    pub payload: Payload,
}

impl Response {
    pub fn new(
        payload: Payload,
        format: Option<ResponseFormat>,
        session_context: Option<SessionContext>,
    ) -> Response {
        Response {
            meta: ResponseMeta {
                response_type: payload.response_type(),
                response_format: format,
                version: VERSION,
                session_context,
            },
            payload,
        }
    }

    pub fn failure(failure: Failure) -> Response {
        Response::new(failure.into(), None, None)
    }

    pub fn to_json(&self) -> Value {
        // Plain data with string keys: serialization cannot fail; should it,
        // the client still gets a coded Failure.
        serde_json::to_value(self).unwrap_or_else(|e| {
            let object = |pairs: [(&str, Value); 2]| {
                Value::Object(pairs.map(|(k, v)| (k.to_owned(), v)).into_iter().collect())
            };
            object([
                (
                    "_meta",
                    object([
                        ("response_type", Value::from("Failure")),
                        ("version", Value::from(VERSION)),
                    ]),
                ),
                (
                    "error",
                    object([
                        ("code", Value::from("INTERNAL_ERROR")),
                        (
                            "message",
                            Value::from(format!("response not serializable: {e}")),
                        ),
                    ]),
                ),
            ])
        })
    }
}

// ----------------------------------------------------------------- parsing

/// Top-level keys of the old flat format (they are not v0.54 keys).
const FLAT_KEYS: [&str; 6] = [
    "site",
    "prev",
    "streaming",
    "num_results",
    "query_id",
    "mode",
];

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(FailureCode::InvalidRequest, message)
}

/// Builds the request object from URL query parameters: dotted names nest
/// (`query.text`, `prefer.streaming`), a value that is a JSON object or
/// array is taken as JSON (`query={"text":…}`), `context.prev` and
/// `context.memory` are lists (repeat the parameter), and a repeated name
/// becomes a list.
pub fn params_to_object(pairs: impl IntoIterator<Item = (String, String)>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, raw) in pairs {
        let value = match raw.trim_start().chars().next() {
            Some('{') | Some('[') => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
            _ => Value::String(raw),
        };
        let is_list = matches!(key.as_str(), "context.prev" | "context.memory");
        let path: Vec<&str> = key.split('.').collect();
        insert_at(&mut out, &path, value, is_list);
    }
    out
}

/// Puts `value` at `path`; a repeated name becomes a list. A name under a
/// plain value (`query=x&query.text=y`) is dropped, so the plain value is
/// refused for what it is.
fn insert_at(node: &mut Map<String, Value>, path: &[&str], value: Value, is_list: bool) {
    match path {
        [] => {}
        [last] => match node.get_mut(*last) {
            Some(Value::Array(items)) if is_list || !value.is_array() => items.push(value),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, value]);
            }
            None if is_list && !value.is_array() => {
                node.insert((*last).to_owned(), Value::Array(vec![value]));
            }
            None => {
                node.insert((*last).to_owned(), value);
            }
        },
        [first, rest @ ..] => {
            let entry = node
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(child) = entry {
                insert_at(child, rest, value, is_list);
            }
        }
    }
}

/// The request from URL parameters and, for POST, the JSON body: body keys
/// win over parameters of the same name.
pub fn merge(
    params: Map<String, Value>,
    body: Option<Value>,
) -> Result<Map<String, Value>, Failure> {
    let mut merged = params;
    match body {
        None => {}
        Some(Value::Object(body)) => merged.extend(body),
        Some(_) => {
            return Err(invalid(
                "the request body must be a JSON object (NLWeb v0.54)",
            ))
        }
    }
    Ok(merged)
}

/// Checks and types a v0.54 ask.
pub fn parse_ask(object: Map<String, Value>) -> Result<AskRequest, Failure> {
    match object.get("query") {
        None => {
            return Err(Failure::new(
                FailureCode::MissingField,
                "missing required field: query (NLWeb v0.54 expects {\"query\": {\"text\": …}})",
            ))
        }
        Some(Value::Object(query)) => match query.get("text") {
            None => {
                return Err(Failure::new(
                    FailureCode::MissingField,
                    "missing required field: query.text",
                ))
            }
            Some(Value::String(t)) if t.trim().is_empty() => {
                return Err(Failure::new(
                    FailureCode::MissingField,
                    "query.text is empty: say what to look for",
                ))
            }
            Some(Value::String(_)) => {}
            Some(_) => return Err(invalid("query.text must be a string")),
        },
        Some(_) => {
            return Err(invalid(
                "the flat request format (query as a string, site/prev/streaming at the top level) \
                 is not supported: send NLWeb v0.54, {\"query\": {\"text\": …, \"site\": …}, \
                 \"context\": {\"prev\": […]}, \"prefer\": {\"streaming\": …}, \"meta\": {\"api_version\": \"0.54\"}}",
            ))
        }
    }
    if let Some(key) = FLAT_KEYS.iter().find(|k| object.contains_key(**k)) {
        return Err(invalid(format!(
            "{key:?} at the top level belongs to the flat request format, which is not supported: \
             in NLWeb v0.54 it goes under query, context or prefer"
        )));
    }
    let request: AskRequest =
        serde_path_to_error::deserialize(Value::Object(object)).map_err(|e| {
            let path = e.path().to_string();
            invalid(format!("{path}: {}", e.into_inner()))
        })?;
    if let Some(version) = &request.meta.api_version {
        if version != VERSION {
            return Err(invalid(format!(
                "meta.api_version {version:?} is not supported: this server speaks NLWeb {VERSION} only"
            )));
        }
    }
    Ok(request)
}

/// Checks and types an `/await` request; the codes are docs/nlweb.md#failures.
pub fn parse_await(body: Value) -> Result<AwaitRequest, Failure> {
    let Value::Object(object) = body else {
        return Err(invalid("the request body must be a JSON object"));
    };
    match object.get("promise_token") {
        Some(Value::String(t)) if !t.is_empty() => {}
        Some(Value::String(_)) | None => {
            return Err(Failure::new(
                FailureCode::MissingField,
                "missing required field: promise_token",
            ))
        }
        Some(_) => return Err(invalid("promise_token must be a string")),
    }
    match object.get("action").and_then(Value::as_str) {
        Some("checkin" | "cancel") => {}
        _ => {
            return Err(Failure::new(
                FailureCode::InvalidAction,
                "action must be \"checkin\" or \"cancel\"",
            ))
        }
    }
    serde_path_to_error::deserialize(Value::Object(object)).map_err(|e| {
        let path = e.path().to_string();
        invalid(format!("{path}: {}", e.into_inner()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_seeds_request_parses_with_filters_kept() {
        let r = parse_ask(obj(json!({
            "query": {"text": "something protein rich that has cinnamon in it",
                      "site": "pumpkins-r-us.com", "itemType": "Recipe",
                      "location": "Idaho", "price": "less than $20"},
            "context": {"@type": "ConversationalContext", "prev": ["breakfast muffins", "high fiber snacks"],
                        "text": "User has been looking at different options...",
                        "memory": ["vegetarian", "has a sweet tooth"]},
            "prefer": {"streaming": false, "response_format": "chatgpt_app", "mode": "list",
                       "accept-language": "en", "user-agent": "Copilot/1.0.0"},
            "meta": {"api_version": "0.54", "session_context": {"conversation_id": "conv_98765", "state_token": "encrypted_blob_xyz"}}
        })))
        .unwrap();
        assert_eq!(r.query.site.as_deref(), Some("pumpkins-r-us.com"));
        assert_eq!(r.query.item_type.as_deref(), Some("Recipe"));
        assert_eq!(r.query.filters["location"], "Idaho");
        assert_eq!(r.query.filters["price"], "less than $20");
        assert_eq!(r.context.memory, ["vegetarian", "has a sweet tooth"]);
        assert_eq!(r.prefer.accept_language.as_deref(), Some("en"));
        assert_eq!(r.prefer.user_agent.as_deref(), Some("Copilot/1.0.0"));
        assert!(!r.prefer.streaming);
        let sc = r.meta.session_context.unwrap();
        assert_eq!(sc.conversation_id.as_deref(), Some("conv_98765"));
    }

    #[test]
    fn defaults_are_the_seeds() {
        let r = parse_ask(obj(json!({"query": {"text": "x"}}))).unwrap();
        assert!(r.prefer.streaming);
        assert_eq!(r.prefer.response_format, ResponseFormat::ChatgptApp);
        assert_eq!(r.context.context_type, "ConversationalContext");
    }

    #[test]
    fn bad_requests_get_the_right_codes() {
        let code = |v: Value| parse_ask(obj(v)).err().map(|f| f.0.code);
        assert_eq!(code(json!({})), Some(FailureCode::MissingField));
        assert_eq!(code(json!({"query": {}})), Some(FailureCode::MissingField));
        assert_eq!(
            code(json!({"query": {"text": " "}})),
            Some(FailureCode::MissingField)
        );
        assert_eq!(
            code(json!({"query": "muffins"})),
            Some(FailureCode::InvalidRequest)
        );
        assert_eq!(
            code(json!({"query": {"text": "x"}, "streaming": false})),
            Some(FailureCode::InvalidRequest)
        );
        let memory = parse_ask(obj(
            json!({"query": {"text": "x"}, "context": {"memory": "vegan"}}),
        ));
        let msg = memory.err().map(|f| f.0.message).unwrap_or_default();
        assert!(msg.contains("context.memory"), "{msg}");
        let version = parse_ask(obj(
            json!({"query": {"text": "x"}, "meta": {"api_version": "0.5"}}),
        ));
        assert!(version.err().unwrap().0.message.contains("0.54"));
        let format = parse_ask(obj(
            json!({"query": {"text": "x"}, "prefer": {"response_format": "html"}}),
        ));
        assert!(format
            .err()
            .unwrap()
            .0
            .message
            .contains("prefer.response_format"));
    }

    #[test]
    fn url_parameters_nest_and_lists_repeat() {
        let o = params_to_object(
            [
                ("query.text", "muffins"),
                ("query.price", "cheap"),
                ("context.prev", "a"),
                ("context.prev", "b"),
                ("context.memory", "vegan"),
                ("prefer.streaming", "false"),
                ("meta", "{\"api_version\":\"0.54\"}"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        );
        let r = parse_ask(o).unwrap();
        assert_eq!(r.query.text, "muffins");
        assert_eq!(r.query.filters["price"], "cheap");
        assert_eq!(r.context.prev, ["a", "b"]);
        assert_eq!(r.context.memory, ["vegan"]);
        assert!(!r.prefer.streaming);
        assert_eq!(r.meta.api_version.as_deref(), Some("0.54"));
        let flat = params_to_object([("query".to_owned(), "muffins".to_owned())]);
        assert_eq!(
            parse_ask(flat).err().map(|f| f.0.code),
            Some(FailureCode::InvalidRequest)
        );
    }

    #[test]
    fn the_body_wins_over_parameters() {
        let params = params_to_object([("query.text".to_owned(), "from url".to_owned())]);
        let merged = merge(params, Some(json!({"query": {"text": "from body"}}))).unwrap();
        assert_eq!(parse_ask(merged).unwrap().query.text, "from body");
    }

    #[test]
    fn the_answer_language_is_the_heaviest_well_formed_range() {
        let language = |v: &str| {
            Prefer {
                accept_language: Some(v.into()),
                ..Prefer::default()
            }
            .language()
        };
        assert_eq!(language("en").as_deref(), Some("en"));
        assert_eq!(
            language("fr-CH, fr;q=0.9, en;q=0.8").as_deref(),
            Some("fr-CH")
        );
        assert_eq!(language("*, de;q=0.5").as_deref(), Some("de"));
        assert_eq!(language("en;q=0.2, nl;q=0.7").as_deref(), Some("nl"));
        assert_eq!(language("en;q=0, <script>"), None);
        assert_eq!(Prefer::default().language(), None);
    }

    #[test]
    fn mode_is_one_of_the_three() {
        let mode = |m: &str| {
            parse_ask(obj(json!({"query": {"text": "x"}, "prefer": {"mode": m}})))
                .map(|r| r.prefer.mode)
                .map_err(|f| f.0.message)
        };
        assert_eq!(mode("list"), Ok(Mode::List));
        assert_eq!(mode("summarize"), Ok(Mode::Summarize));
        assert_eq!(mode("generate"), Ok(Mode::Generate));
        assert!(mode("chat").unwrap_err().contains("prefer.mode"));
    }

    #[test]
    fn await_requests_are_checked() {
        let code = |v: Value| parse_await(v).err().map(|f| f.0.code);
        assert_eq!(
            code(json!({"action": "checkin"})),
            Some(FailureCode::MissingField)
        );
        assert_eq!(
            code(json!({"promise_token": "p", "action": "poke"})),
            Some(FailureCode::InvalidAction)
        );
        assert_eq!(
            parse_await(json!({"promise_token": "p", "action": "cancel"}))
                .unwrap()
                .action,
            AwaitAction::Cancel
        );
    }

    #[test]
    fn responses_have_the_seeds_shape() {
        let r = Response::new(
            Payload::Promise {
                promise: Promise {
                    token: "promise_xyz".into(),
                    estimated_time: 120,
                    cancelled: false,
                },
            },
            None,
            None,
        );
        assert_eq!(
            r.to_json(),
            json!({"_meta": {"response_type": "Promise", "version": "0.54"},
                   "promise": {"token": "promise_xyz", "estimated_time": 120}})
        );
        let f = Response::failure(Failure::new(FailureCode::NoResults, "none"));
        assert_eq!(f.to_json()["error"]["code"], "NO_RESULTS");
        assert_eq!(f.payload.status(), 404);
        let a = Response::new(
            Payload::answer(ResponseFormat::ChatgptApp, "hi".into(), Vec::new()),
            Some(ResponseFormat::ChatgptApp),
            None,
        )
        .to_json();
        assert_eq!(a["_meta"]["response_format"], "chatgpt_app");
        assert_eq!(a["content"][0]["type"], "text");
        assert!(a["structuredData"]["results"].is_array());
    }
}
