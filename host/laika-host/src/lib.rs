//! `laika-host`: the native-messaging host of the Laika AI sidebar — the
//! binary and every edge: the stdio transport and session, the SQLite store,
//! config loading, install, doctor and replay.
//!
//! See `docs/ARCHITECTURE.md` for the map of crates and the flow of a turn.

pub mod agent_state;
pub mod config;
pub mod data_dir;
pub mod doctor;
pub mod frame;
pub mod install;
pub mod integration;
pub mod logging;
pub mod mcp;
pub mod mcp_client;
pub mod origin;
pub mod page_index;
pub mod pdf;
pub mod replay;
pub mod serve;
pub mod session;
pub mod settings;
pub mod sink;
pub mod stage_times;
pub mod store;
pub mod summarize;
pub mod tools;
pub mod transform;
pub mod transport;
pub mod turn;
pub mod workers;
