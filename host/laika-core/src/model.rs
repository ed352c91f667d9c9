//! One call to a model, as the core sees it: what is asked and what came
//! back. The runtimes (`laika-runtime`) turn these into network calls.

use crate::ambient::Ambient;
use crate::pack::{self, Budget, PackInput};
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::{RequestPacket, Task, TaskName};
use serde::Serialize;

/// Why the previous attempt was rejected, fed back on a retry
/// (docs/llmcp.md#validation-and-retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryFeedback {
    /// The invalid output, as the model wrote it.
    pub previous_output: String,
    /// One line per problem: `"<json path>: <message>"`.
    pub errors: Vec<String>,
}

/// One call to the model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub packet: RequestPacket,
    /// The JSON Schema the answer must match: adapters with native
    /// constrained output pass it to the runtime.
    pub response_schema: serde_json::Value,
    /// Fixed instructions; never contains page content.
    pub system_prompt: String,
    /// The serialized request packet (and, on retries, the feedback).
    pub user_prompt: String,
    /// 0 for the first try, 1..=3 for retries.
    pub attempt: u32,
    pub feedback: Option<RetryFeedback>,
    /// The answer's token limit, when the engine fitted the prompt to the
    /// runtime's context window: the prompt plus this fits in it.
    pub max_output_tokens: Option<u32>,
}

impl ModelRequest {
    /// A request with no page: everything the model needs is in the prompts
    /// (a summarizer's, a connection test's), over an empty packet of
    /// `task` in the conversation and turn named.
    pub fn without_page(
        task: TaskName,
        (conversation_id, turn): (&ConversationId, u32),
        (system_prompt, user_prompt): (&str, String),
        response_schema: serde_json::Value,
        max_output_tokens: u32,
        ambient: &dyn Ambient,
    ) -> ModelRequest {
        let task = Task {
            name: task,
            args: Default::default(),
        };
        let packet = pack::pack(
            &PackInput {
                conversation_id,
                turn,
                user_message_id: "",
                user_text: "",
                task: &task,
                observation: None,
                browser: "",
                tab_id: None,
                history: None,
                recent_turns: 0,
                ambient,
                for_model: true,
            },
            Budget {
                max_chars: 0,
                max_tokens: 0,
            },
        )
        .packet;
        ModelRequest {
            packet,
            response_schema,
            system_prompt: system_prompt.to_owned(),
            user_prompt,
            attempt: 0,
            feedback: None,
            max_output_tokens: Some(max_output_tokens),
        }
    }
}

/// A runtime's context window: how many tokens the prompt and the answer
/// may take together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ContextWindow {
    #[schemars(range(min = 1))]
    pub tokens: usize,
    /// Where the figure comes from (`config`, `llama.cpp /props`, …).
    pub source: String,
}

/// The model's raw answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelReply {
    pub text: String,
    pub model: String,
    /// The runtime's own reason (`stop`, `length`, …) when it gives one;
    /// `length` means the output was cut and must not be retried as if invalid.
    pub finish_reason: Option<String>,
    /// Which endpoint answered, when the runtime has several.
    pub endpoint: Option<String>,
}
