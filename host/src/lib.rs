//! `laika-host`: the native-messaging host of the Laika AI sidebar.
//!
//! See `docs/ARCHITECTURE.md` for the map of modules and the flow of a turn.

pub mod citation;
pub mod error;
pub mod frame;
pub mod gate;
pub mod llmcp;
pub mod model_output;
pub mod observation;
pub mod origin;
pub mod rank;
pub mod redact;
pub mod render;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod transport;
