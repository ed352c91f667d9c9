//! Where a tool runs, as a `tool_call` event and `docs/tools.json` say. The
//! registry of tools is `laika_core::tools`.

use serde::Serialize;

/// Where a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Executor {
    /// The extension's content script, on the observed page.
    Page,
    /// The extension's background, on the tab (navigation, search).
    Tab,
    /// The host itself: pure code (`crate::app`: exact arithmetic,
    /// estimates) inline, store-backed tools (collections, artifacts,
    /// transforms) through the driver (`engine::Action::RunTool`).
    Host,
    /// No executor in this version: the gate checks the arguments, then
    /// denies the call (`TOOL_NOT_AVAILABLE`), and the model is not offered it.
    Unavailable,
}
