//! What a turn's mode allows, and a clarifying question's choices as the
//! user is shown them (docs/wire-protocol.md#modes).
//!
//! The mode comes from the user's own choice when the turn request has one,
//! else from the model's first answer that states it, and is then fixed for
//! the turn: a later step cannot raise `inform` to `act`, so a page that
//! talks the model round mid-turn gains nothing.

use laika_protocol::mode::{Mode, MAX_CHOICES, MAX_CHOICE_CHARS, MIN_CHOICES};
use laika_protocol::tool_call::ToolName;

/// Whether a call of `tool` may run in a turn of `mode`. Reads run in any
/// mode; a call that changes something only in `act`. A turn whose mode
/// no one stated (a runtime that leaves the field out and no choice of the
/// user's) keeps the gate as its only brake, as before modes existed. An
/// MCP tool its server lists as read-only is a read (`tools::mcp_acts`).
pub fn permits(mode: Option<Mode>, tool: ToolName) -> bool {
    !crate::tools::acts(tool) || matches!(mode, Some(Mode::Act) | None)
}

/// Why a call was not run in `mode`, for the model's next step and the UI.
pub fn refusal(mode: Mode) -> String {
    match mode {
        Mode::Inform => "Not run: the user asked to be informed, not to have anything done. \
             Answer from what you can read, or ask whether they want it done."
            .into(),
        Mode::Clarify | Mode::Act => "Not run: the request is not clear yet. \
             Ask the user what they want before anything is done."
            .into(),
    }
}

/// A clarifying question's choices as shown: each on one line, trimmed,
/// at most [`MAX_CHOICE_CHARS`] characters, no repeats (case aside), at
/// most [`MAX_CHOICES`]; fewer than [`MIN_CHOICES`] left is no choice at all
/// (the question stands in the answer's text).
pub fn choices(raw: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for choice in raw {
        let line: String = choice
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let line: String = line.chars().take(MAX_CHOICE_CHARS).collect();
        let line = line.trim_end().to_owned();
        if line.is_empty() || out.iter().any(|c| c.to_lowercase() == line.to_lowercase()) {
            continue;
        }
        out.push(line);
        if out.len() == MAX_CHOICES {
            break;
        }
    }
    if out.len() < MIN_CHOICES {
        out.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_act_runs_what_changes_something() {
        for mode in [Some(Mode::Inform), Some(Mode::Clarify)] {
            assert!(!permits(mode, ToolName::Click));
            assert!(!permits(mode, ToolName::Navigate));
            assert!(!permits(mode, ToolName::ArtifactSave));
            assert!(permits(mode, ToolName::ObserveDom));
            assert!(permits(mode, ToolName::Calculate));
        }
        assert!(permits(Some(Mode::Act), ToolName::Click));
        assert!(permits(None, ToolName::Click));
    }

    #[test]
    fn choices_are_one_line_bounded_and_distinct() {
        let raw: Vec<String> = [
            "  The  cheapest\none ",
            "the cheapest one",
            "",
            "\u{7}",
            &"x".repeat(200),
            "B",
            "C",
            "D",
            "E",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = choices(&raw);
        assert_eq!(got[0], "The cheapest one");
        assert_eq!(got[1], "x".repeat(MAX_CHOICE_CHARS));
        assert_eq!(
            got,
            vec![
                "The cheapest one".to_string(),
                "x".repeat(80),
                "B".into(),
                "C".into(),
                "D".into()
            ]
        );
    }

    #[test]
    fn a_single_choice_is_none() {
        assert!(choices(&["Yes".to_string(), " yes ".to_string()]).is_empty());
    }
}
