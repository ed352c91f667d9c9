//! Packing: an observation and a user message become a `laika.llmcp` v1
//! request packet within a context budget.
//!
//! Invariants kept here:
//! - every document is `trust: "untrusted"`; page text never reaches the
//!   system prompt (see `prompt`);
//! - chunk documents are 1-based, ordered, and `chunk_count` is the number of
//!   chunk documents actually in the packet (cut chunks are renumbered away);
//! - URL credentials are stripped from every string packed (`redact`);
//! - the budget is enforced on the serialized documents, and every cut is
//!   reported in [`ContextUsage`].

use crate::llmcp::{
    Context, ConversationRef, Document, DocumentSource, Input, Output, Protocol, RequestPacket,
    Sender, Task, UserMessage,
};
use crate::observation::{Observation, CHUNK_DOC_TYPE, SUMMARY_DOC_TYPE};
use serde::Serialize;
use serde_json::Value;

pub const SUMMARY_DOC_ID: &str = "doc:web:summary";

/// Rough tokens-per-char ratio for budgeting: 4 chars per token is the usual
/// estimate for English BPE vocabularies and errs on the safe side for code.
const CHARS_PER_TOKEN: usize = 4;

/// A context budget. The effective char limit is the lower of `max_chars` and
/// `max_tokens * 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Budget {
    pub max_chars: usize,
    pub max_tokens: usize,
}

impl Budget {
    /// The extractive runtime reads everything; models get a budget that fits a
    /// 32k-token context with room for the prompt and the answer.
    pub fn for_runtime(kind: &str, limits: &crate::limits::Limits) -> Budget {
        let (chars, tokens) = match kind {
            "builtin" => (8 << 20, 2 << 20),
            _ => (96_000, 24_000),
        };
        Budget {
            max_chars: limits.context_max_chars.unwrap_or(chars),
            max_tokens: limits.context_max_tokens.unwrap_or(tokens),
        }
    }

    fn char_limit(&self) -> usize {
        self.max_chars
            .min(self.max_tokens.saturating_mul(CHARS_PER_TOKEN))
    }
}

pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DocumentUsage {
    pub doc_id: String,
    pub kind: String,
    pub chars: usize,
    pub tokens: usize,
    pub included: bool,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Cut {
    pub doc_id: String,
    /// The field that was shortened; absent when the whole document was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub field: Option<String>,
    pub chars_removed: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Used {
    pub chars: usize,
    pub tokens: usize,
}

/// The `context_usage` event body: what went in, what was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ContextUsage {
    pub budget: Budget,
    pub used: Used,
    pub documents: Vec<DocumentUsage>,
    pub cut: Vec<Cut>,
    /// How many strings had URL credentials stripped.
    pub redacted_strings: usize,
}

pub struct PackInput<'a> {
    pub conversation_id: &'a str,
    pub turn: u32,
    pub user_message_id: &'a str,
    pub user_text: &'a str,
    pub task: &'a Task,
    /// `None` when the observation was rejected: the packet then has no documents.
    pub observation: Option<&'a Observation>,
    pub browser: &'a str,
    pub tab_id: Option<String>,
    /// The packet's id and `created_at` come from here.
    pub ambient: &'a dyn crate::ambient::Ambient,
}

pub struct Packed {
    pub packet: RequestPacket,
    pub usage: ContextUsage,
}

pub(crate) fn json_chars(value: &Value) -> usize {
    // Measured on the serialization the model will actually read.
    serde_json::to_string(value).map_or(0, |s| s.chars().count())
}

fn document(
    doc_id: String,
    kind: &str,
    browser: &str,
    tab_id: &Option<String>,
    content: Value,
) -> Document {
    Document {
        doc_id,
        kind: kind.into(),
        trust: "untrusted".into(),
        source: DocumentSource {
            browser: browser.into(),
            tab_id: tab_id.clone(),
        },
        content,
    }
}

/// Fields of the summary that may be shortened, least valuable first:
/// `text` often repeats `primary.text`, which is the page's main content.
const REDUCIBLE: &[&str] = &[
    "comments",
    "items",
    "top_discussions",
    "outline",
    "elements",
    "text",
    "primary",
];

/// Shortens `field` of a summary content by about `excess` chars. Returns the
/// chars removed.
fn reduce_field(content: &mut Value, field: &str, excess: usize) -> usize {
    let Some(slot) = content.get_mut(field) else {
        return 0;
    };
    match slot {
        Value::String(s) => truncate_string(s, excess),
        Value::Object(o) => match o.get_mut("text") {
            Some(Value::String(s)) => truncate_string(s, excess),
            _ => 0,
        },
        Value::Array(items) => {
            let mut removed = 0;
            while removed < excess {
                match items.pop() {
                    Some(item) => removed += json_chars(&item) + 1,
                    None => break,
                }
            }
            removed
        }
        _ => 0,
    }
}

/// Cuts `excess` chars (plus a marker) off the end of `s`, on a char boundary.
fn truncate_string(s: &mut String, excess: usize) -> usize {
    const MARKER: &str = " […]";
    let total = s.chars().count();
    if total == 0 {
        return 0;
    }
    let keep = total.saturating_sub(excess + MARKER.chars().count());
    s.truncate(crate::text::prefix_chars(s, keep).len());
    if keep > 0 {
        s.push_str(MARKER);
    }
    total - s.chars().count()
}

/// Builds the request packet for one turn.
pub fn pack(input: &PackInput<'_>, budget: Budget) -> Packed {
    let limit = budget.char_limit();
    let tab_id = input.tab_id.clone();
    let mut redacted = 0;
    let mut documents = Vec::new();
    let mut usage_docs = Vec::new();
    let mut cut = Vec::new();
    let mut used = 0usize;

    if let Some(obs) = input.observation {
        let mut content = serde_json::to_value(&obs.summary).unwrap_or(Value::Null);
        redacted += crate::redact::redact_value(&mut content);
        let original = json_chars(&content);
        let mut size = original;
        for field in REDUCIBLE {
            if size <= limit {
                break;
            }
            let removed = reduce_field(&mut content, field, size - limit);
            if removed > 0 {
                size = json_chars(&content);
                cut.push(Cut {
                    doc_id: SUMMARY_DOC_ID.into(),
                    field: Some(if *field == "primary" {
                        "primary.text".into()
                    } else {
                        (*field).into()
                    }),
                    chars_removed: removed,
                });
            }
        }
        used += size;
        usage_docs.push(DocumentUsage {
            doc_id: SUMMARY_DOC_ID.into(),
            kind: SUMMARY_DOC_TYPE.into(),
            chars: size,
            tokens: estimate_tokens(size),
            included: true,
            truncated: size < original,
        });
        documents.push(document(
            SUMMARY_DOC_ID.into(),
            SUMMARY_DOC_TYPE,
            input.browser,
            &tab_id,
            content,
        ));

        let mut chunks = Vec::new();
        for (i, chunk) in obs.chunks.iter().enumerate() {
            let mut content = serde_json::to_value(chunk).unwrap_or(Value::Null);
            redacted += crate::redact::redact_value(&mut content);
            let size = json_chars(&content);
            let doc_id = format!("doc:web:chunk:{}", i + 1);
            // Chunks are additive and ordered: once one does not fit, later
            // ones are left out too so the model never sees a gap.
            let fits = used + size <= limit && chunks.len() == i;
            usage_docs.push(DocumentUsage {
                doc_id: doc_id.clone(),
                kind: CHUNK_DOC_TYPE.into(),
                chars: size,
                tokens: estimate_tokens(size),
                included: fits,
                truncated: false,
            });
            if fits {
                used += size;
                chunks.push(content);
            } else {
                cut.push(Cut {
                    doc_id,
                    field: None,
                    chars_removed: size,
                });
            }
        }
        let count = chunks.len();
        for (i, mut content) in chunks.into_iter().enumerate() {
            content["chunk_count"] = Value::from(count);
            content["chunk_index"] = Value::from(i + 1);
            documents.push(document(
                format!("doc:web:chunk:{}", i + 1),
                CHUNK_DOC_TYPE,
                input.browser,
                &tab_id,
                content,
            ));
        }
    }

    let user_text = crate::redact::redact_urls_in_text(input.user_text);
    if matches!(user_text, std::borrow::Cow::Owned(_)) {
        redacted += 1;
    }
    let mut task = input.task.clone();
    let mut args = Value::Object(std::mem::take(&mut task.args));
    redacted += crate::redact::redact_value(&mut args);
    if let Value::Object(a) = args {
        task.args = a;
    }

    let packet = RequestPacket {
        protocol: Protocol::default(),
        id: input.ambient.new_id(),
        packet_type: "request".into(),
        created_at: input.ambient.now_iso8601(),
        conversation: ConversationRef {
            id: input.conversation_id.into(),
            turn: input.turn,
        },
        sender: Sender {
            role: "agent".into(),
        },
        input: Input {
            user_message: UserMessage {
                id: input.user_message_id.into(),
                text: user_text.into_owned(),
            },
            task,
        },
        context: Context {
            documents,
            transcript: Vec::new(),
        },
        output: Output {
            format: "json".into(),
        },
    };
    Packed {
        packet,
        usage: ContextUsage {
            budget,
            used: Used {
                chars: used,
                tokens: estimate_tokens(used),
            },
            documents: usage_docs,
            cut,
            redacted_strings: redacted,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llmcp::TaskName;
    use serde_json::json;

    fn observation(text: &str, chunks: usize) -> Observation {
        Observation::from_value(json!({
            "summary": {
                "doc_type": SUMMARY_DOC_TYPE,
                "url": "https://user:pw@example.com/a?token=s3cret&q=1",
                "title": "A",
                "text": text,
                "primary": {"text": text, "handle_id": "laika-1"},
                "elements": [{"handle_id": "laika-2", "role": "link", "href": "https://example.com/b?api_key=zzz"}]
            },
            "chunks": (1..=chunks).map(|i| json!({
                "doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "title": "A",
                "chunk_index": i, "chunk_count": chunks, "text": "c".repeat(1000)
            })).collect::<Vec<_>>()
        }))
        .unwrap()
    }

    fn input<'a>(obs: &'a Observation, task: &'a Task) -> PackInput<'a> {
        PackInput {
            conversation_id: "c-1",
            turn: 3,
            user_message_id: "u-1",
            user_text: "summarize https://example.com/x?session=abc",
            task,
            observation: Some(obs),
            browser: "chrome",
            tab_id: Some("7".into()),
            ambient: &FIXED,
        }
    }

    static FIXED: crate::ambient::Fixed = crate::ambient::Fixed::new();

    fn task() -> Task {
        Task {
            name: TaskName::Summarize,
            args: Default::default(),
        }
    }

    #[test]
    fn packs_the_seed_shape_untrusted_and_redacted() {
        let obs = observation("H1: A\nHello world.", 2);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 1 << 20,
                max_tokens: 1 << 20,
            },
        );
        let v = serde_json::to_value(&p.packet).unwrap();
        assert_eq!(v["protocol"], json!({"name": "laika.llmcp", "version": 1}));
        assert_eq!(v["type"], "request");
        assert_eq!(v["sender"]["role"], "agent");
        assert_eq!(v["conversation"], json!({"id": "c-1", "turn": 3}));
        assert_eq!(v["input"]["task"]["name"], "web.summarize");
        assert_eq!(v["output"]["format"], "json");
        let docs = v["context"]["documents"].as_array().unwrap();
        assert_eq!(docs.len(), 3);
        assert!(docs.iter().all(|d| d["trust"] == "untrusted"));
        assert_eq!(docs[0]["doc_id"], SUMMARY_DOC_ID);
        assert_eq!(docs[2]["content"]["chunk_index"], 2);
        assert_eq!(docs[2]["content"]["chunk_count"], 2);
        let text = v.to_string();
        assert!(
            !text.contains("s3cret")
                && !text.contains("pw@")
                && !text.contains("zzz")
                && !text.contains("session=abc"),
            "{text}"
        );
        assert!(text.contains("q=1"));
        assert!(p.usage.redacted_strings >= 3);
        assert!(p.usage.cut.is_empty());
    }

    #[test]
    fn budget_cuts_chunks_and_renumbers() {
        let obs = observation("short", 5);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 3_000,
                max_tokens: 1 << 20,
            },
        );
        let docs = &p.packet.context.documents;
        let chunks: Vec<_> = docs.iter().filter(|d| d.kind == CHUNK_DOC_TYPE).collect();
        assert!(!chunks.is_empty() && chunks.len() < 5, "{}", chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.content["chunk_index"], i + 1);
            assert_eq!(c.content["chunk_count"], chunks.len());
        }
        assert_eq!(p.usage.cut.len(), 5 - chunks.len());
        assert!(p.usage.used.chars <= 3_000);
        assert_eq!(
            p.usage.documents.iter().filter(|d| !d.included).count(),
            5 - chunks.len()
        );
    }

    #[test]
    fn budget_truncates_summary_text_and_reports_it() {
        let long = "word ".repeat(10_000);
        let obs = observation(&long, 0);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 100_000,
                max_tokens: 5_000,
            },
        );
        assert!(p.usage.used.chars <= 20_000, "{}", p.usage.used.chars);
        assert!(p.usage.documents[0].truncated);
        assert!(p
            .usage
            .cut
            .iter()
            .any(|c| c.field.as_deref() == Some("text")));
        let content = &p.packet.context.documents[0].content;
        assert!(content["primary"]["text"].as_str().unwrap().chars().count() < 50_000);
    }
}
