//! `assistant.render`, the "Laika Document" AST (docs/llmcp.md#render-document):
//! its node types ([`ast`], which also give its wire schema), the sanitizer every untrusted render goes
//! through ([`sanitize`]), and read-only views of a sanitized render: plain
//! text ([`text`]), the export HTML subset ([`html`]) and a whole
//! conversation as an inert HTML page ([`export`]).

pub mod export;
pub mod html;
pub mod sanitize;
pub mod text;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;

pub use html::to_html;
pub use laika_protocol::render::ast::{is_known_type, NODE_TYPES};
pub use sanitize::{
    plain_text, sanitize, sanitize_href, RenderLimits, Sanitized, HARD_MAX_DEPTH,
    MAX_DROPPED_ENTRIES, MAX_HREF_BYTES,
};
