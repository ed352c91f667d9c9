//! The engine's settings for a benchmark that drives a turn in process: a
//! scripted, offline runtime and default limits.

use laika_core::engine::TurnSettings;
use laika_protocol::model::RuntimeInfo;

pub fn scripted() -> TurnSettings {
    TurnSettings {
        limits: Default::default(),
        runtime: RuntimeInfo {
            kind: "scripted".into(),
            model: "m".into(),
            offline: true,
            label: "bench".into(),
        },
        store_full_packets: false,
        context_window: None,
        page_indexes: None,
        decoding: Default::default(),
        integrations: Vec::new(),
        mcp: Default::default(),
        cancel: laika_core::cancel::CancelToken::default(),
        call_time: None,
    }
}
