//! Saved prompts: the user's own instructions ("TL;DR in 3 bullets"), each
//! run on the current page as a turn of its task, from the composer's `/`
//! menu or a shortcut slot (`prompts.*`, docs/wire-protocol.md#saved-prompts).

use crate::error::{Error, ErrorCode, Result};
use crate::ids::PromptId;
use crate::llmcp::TaskName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The longest name, in characters: a menu line.
pub const MAX_PROMPT_NAME_CHARS: usize = 80;
/// The longest text, in characters: an instruction, not a document.
pub const MAX_PROMPT_TEXT_CHARS: usize = 4000;
/// Shortcut slots are numbered `1..=MAX_PROMPT_KEY` (the extension's
/// "run saved prompt N" commands).
pub const MAX_PROMPT_KEY: u8 = 3;
/// The most prompts one library holds.
pub const MAX_PROMPTS: usize = 200;

/// A prompt as stored and listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SavedPrompt {
    pub id: PromptId,
    pub name: String,
    /// Sent as the user's message of the turn.
    pub text: String,
    pub task: TaskName,
    /// The shortcut slot that runs it; one prompt per slot.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_PROMPT_KEY))]
    pub key: Option<u8>,
    /// RFC 3339 UTC.
    pub updated_at: String,
}

/// What `prompts.save` asks to store: a new prompt without `prompt_id`,
/// else a change to that one.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptDraft {
    #[serde(default)]
    pub prompt_id: Option<PromptId>,
    #[schemars(length(min = 1, max = MAX_PROMPT_NAME_CHARS))]
    pub name: String,
    #[schemars(length(min = 1, max = MAX_PROMPT_TEXT_CHARS))]
    pub text: String,
    /// A task name the wire knows (`web.summarize`, `web.answer`,
    /// `web.extract`). Checked by the host, so an unknown one is
    /// `PROMPT_INVALID` naming it.
    #[schemars(with = "TaskName")]
    pub task: String,
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_PROMPT_KEY))]
    pub key: Option<u8>,
}

/// A draft that passed [`PromptDraft::check`]: trimmed, bounded, task known.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedDraft {
    pub prompt_id: Option<PromptId>,
    pub name: String,
    pub text: String,
    pub task: TaskName,
    pub key: Option<u8>,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::PromptInvalid, message)
}

impl PromptDraft {
    /// Trims name and text and checks every field.
    pub fn check(&self) -> Result<CheckedDraft> {
        let name = self.name.trim();
        let text = self.text.trim();
        for (what, value, max) in [
            ("name", name, MAX_PROMPT_NAME_CHARS),
            ("text", text, MAX_PROMPT_TEXT_CHARS),
        ] {
            if value.is_empty() {
                return Err(invalid(format!("a saved prompt needs a {what}")));
            }
            let chars = value.chars().count();
            if chars > max {
                return Err(invalid(format!(
                    "the prompt's {what} is {chars} characters; at most {max} fit"
                )));
            }
        }
        if name.chars().any(char::is_control) {
            return Err(invalid("the prompt's name must be one line".into()));
        }
        let task = TaskName::from_name(&self.task).ok_or_else(|| {
            let known: Vec<&str> = TaskName::ALL.iter().map(|t| t.as_str()).collect();
            invalid(format!(
                "unknown task {:?}; a saved prompt runs one of {}",
                self.task,
                known.join(", ")
            ))
        })?;
        if let Some(key) = self.key {
            if !(1..=MAX_PROMPT_KEY).contains(&key) {
                return Err(invalid(format!(
                    "shortcut slot {key} does not exist; slots are 1 to {MAX_PROMPT_KEY}"
                )));
            }
        }
        Ok(CheckedDraft {
            prompt_id: self.prompt_id.clone(),
            name: name.to_owned(),
            text: text.to_owned(),
            task,
            key: self.key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(name: &str, text: &str, task: &str, key: Option<u8>) -> PromptDraft {
        PromptDraft {
            prompt_id: None,
            name: name.into(),
            text: text.into(),
            task: task.into(),
            key,
        }
    }

    #[test]
    fn a_good_draft_is_trimmed() {
        let d = draft("  TL;DR ", " Three bullets.\n", "web.summarize", Some(2))
            .check()
            .unwrap();
        assert_eq!(d.name, "TL;DR");
        assert_eq!(d.text, "Three bullets.");
        assert_eq!(d.task, TaskName::Summarize);
        assert_eq!(d.key, Some(2));
    }

    #[test]
    fn bad_drafts_are_prompt_invalid_and_say_why() {
        let long_name = "n".repeat(MAX_PROMPT_NAME_CHARS + 1);
        let long_text = "é".repeat(MAX_PROMPT_TEXT_CHARS + 1);
        for (d, says) in [
            (draft(" ", "t", "web.answer", None), "needs a name"),
            (draft("n", "\n", "web.answer", None), "needs a text"),
            (draft(&long_name, "t", "web.answer", None), "at most 80"),
            (draft("n", &long_text, "web.answer", None), "at most 4000"),
            (draft("a\nb", "t", "web.answer", None), "one line"),
            (
                draft("n", "t", "web.translate", None),
                "unknown task \"web.translate\"",
            ),
            (draft("n", "t", "web.answer", Some(0)), "slot 0"),
            (draft("n", "t", "web.answer", Some(4)), "slots are 1 to 3"),
        ] {
            let e = d.check().unwrap_err();
            assert_eq!(e.code, ErrorCode::PromptInvalid);
            assert!(e.message.contains(says), "{e} should say {says}");
        }
    }
}
