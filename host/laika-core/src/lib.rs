//! `laika-core`: the pure core of Laika.
//!
//! The logic over the protocol's types (`laika-protocol`): packing, prompts,
//! the render sanitizer, schema composition and validation, model-output
//! extraction, citations, the tool registry, the Policy Gate, redaction,
//! retrieval (tokenizer, stemming, BM25), the `Runtime` trait, the exact
//! calculators behind the host-run app tools and the turn engine.
//!
//! Architecture invariant: nothing here does I/O. No file system, network,
//! SQLite, threads or async runtime; the clock and ids come in through
//! [`ambient::Ambient`]. The crate's `Cargo.toml` and `clippy.toml` keep it
//! so. See `docs/ARCHITECTURE.md`.

pub mod agent;
pub mod agent_state;
pub mod ambient;
pub mod app;
pub mod artifact;
pub mod cancel;
pub mod citation;
pub mod collection;
pub mod connection;
pub mod conversation;
pub mod decoding;
pub mod engine;
pub mod entity_patch;
pub mod follow_ups;
pub mod gate;
pub mod interceptor;
pub mod json_bounded;
pub mod json_scan;
pub mod json_size;
pub mod lexicon;
pub mod mode;
pub mod model;
pub mod model_output;
pub mod pack;
pub mod prompt;
pub mod provenance;
pub mod redact;
pub mod render;
pub mod retrieval;
pub mod runtime;
pub mod schema;
pub mod secrets;
pub mod select;
pub mod staged;
pub mod step_scope;
pub mod stream;
pub mod task_view;
pub mod text;
pub mod text_delta;
pub mod tools;
pub mod transform;
