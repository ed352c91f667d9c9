//! `laika-protocol`: every type that crosses a boundary of Laika — the wire
//! messages between the extension and the host (inbound [`wire::Request`]s,
//! outbound [`event::Event`]s and the JSON Schema rendered from them), the
//! `laika.llmcp` packets a model is sent and answers with, observations of a
//! page, the render tree, history and collection records, agent state and its
//! deltas, the gate's verdicts, context usage, errors and limits.
//!
//! Invariant: no logic beyond (de)serialization and validation, and no
//! dependency on any other laika crate. The other crates build and consume
//! these types; what they mean in a turn (packing, sanitizing, the gate, the
//! engine) is `laika-core`'s. See `docs/ARCHITECTURE.md`.
//!
//! API boundary: the types, their serde and schemars derives, their
//! constructors and accessors, parsing with the protocol's error codes
//! ([`wire::parse_request`], [`observation::Observation::from_value`]), the
//! bounds the protocol states ([`limits`]) and the wire schema document
//! ([`wire::schema_document`]).

pub mod agent;
pub mod agent_state;
pub mod citation;
pub mod collection;
pub mod conversation;
pub mod deferred;
pub mod error;
pub mod event;
pub mod history;
pub mod ids;
pub mod limits;
pub mod llmcp;
pub mod mode;
pub mod model;
pub mod observation;
pub mod plan;
pub mod render;
pub mod saved_prompt;
pub mod tool;
pub mod tool_call;
pub mod usage;
pub mod verdict;
pub mod wire;
