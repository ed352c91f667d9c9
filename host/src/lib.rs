//! `laika-host`: the native-messaging host of the Laika AI sidebar.
//!
//! See `docs/ARCHITECTURE.md` for the map of modules and the flow of a turn.

pub mod citation;
pub mod config;
pub mod doctor;
pub mod error;
pub mod export;
pub mod frame;
pub mod gate;
pub mod install;
pub mod interceptor;
pub mod json_scan;
pub mod llmcp;
pub mod model_output;
pub mod observation;
pub mod origin;
pub mod pack;
pub mod prompt;
pub mod rank;
pub mod redact;
pub mod render;
pub mod replay;
pub mod runtime;
pub mod schema;
pub mod session;
pub mod store;
pub mod stream;
pub mod transport;
pub mod turn;
pub mod wire;
