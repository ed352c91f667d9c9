//! The Settings screen's slow requests: `config.discover` (what model
//! servers answer on loopback) and `config.test` ("Test connection": one
//! short structured request to a runtime). The session runs them on a
//! worker thread, so `ping`, `cancel` and turns never wait for them, and
//! nothing here is on a turn's path or stored.

use crate::config::RuntimeConfig;
use laika_core::connection;
use laika_protocol::event::{ConnectionTest, ErrorBody, Event};
use laika_runtime::{discover, CancelToken, SystemAmbient};
use std::time::Instant;

/// `config.discover.result`: the servers that answered on `ports`.
pub fn discover(ports: &[u16]) -> Event {
    let started = Instant::now();
    let servers = discover::scan(ports);
    tracing::info!(
        ports = ports.len(),
        found = servers.len(),
        ms = started.elapsed().as_millis() as u64,
        "model servers discovered"
    );
    Event::ConfigDiscover {
        ports: ports.to_vec(),
        servers,
    }
}

/// `config.test.result` for the runtime `config` names: its answer to
/// [`connection::request`], or the coded error in its message.
pub fn test_connection(config: &RuntimeConfig) -> Event {
    let started = Instant::now();
    let runtime = match laika_runtime::from_config(config) {
        Ok(r) => r,
        Err(e) => {
            return Event::ConfigTest(failed(
                laika_protocol::model::RuntimeInfo {
                    kind: config.kind().into(),
                    model: config.model().unwrap_or_default().into(),
                    offline: true,
                    label: config.kind().into(),
                },
                0,
                &e,
                None,
            ))
        }
    };
    let info = runtime.info();
    if matches!(config, RuntimeConfig::Builtin | RuntimeConfig::Scripted(_)) {
        return Event::ConfigTest(ConnectionTest {
            ok: true,
            message: format!(
                "{} runs inside Laika: there is nothing to connect to.",
                info.label
            ),
            runtime: info,
            endpoint: None,
            elapsed_ms: 0,
            answer: None,
            raw: None,
            error: None,
        });
    }
    let outcome = runtime.complete(
        &connection::request(&SystemAmbient),
        &CancelToken::default(),
        &mut |_| {},
    );
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let result = match outcome {
        Err(e) => failed(info, elapsed_ms, &e, None),
        Ok(reply) => match connection::check(&reply.text) {
            Ok(answer) => ConnectionTest {
                ok: true,
                message: format!(
                    "{} answered in {elapsed_ms} ms with the JSON asked for.",
                    info.label
                ),
                runtime: info,
                endpoint: reply.endpoint,
                elapsed_ms,
                answer: Some(answer),
                raw: None,
                error: None,
            },
            Err(e) => {
                let raw = laika_core::text::clip(&reply.text, connection::MAX_RAW_CHARS);
                let mut test = failed(info, elapsed_ms, &e, Some(raw));
                test.endpoint = reply.endpoint;
                test
            }
        },
    };
    tracing::info!(
        kind = %result.runtime.kind,
        ok = result.ok,
        code = result.error.as_ref().map(|e| e.code.as_str()).unwrap_or("-"),
        ms = elapsed_ms,
        "connection tested"
    );
    Event::ConfigTest(result)
}

fn failed(
    runtime: laika_protocol::model::RuntimeInfo,
    elapsed_ms: u64,
    error: &laika_protocol::error::Error,
    raw: Option<String>,
) -> ConnectionTest {
    ConnectionTest {
        ok: false,
        message: format!("{} did not pass: {}", runtime.label, error.message),
        runtime,
        endpoint: None,
        elapsed_ms,
        answer: None,
        raw,
        error: Some(ErrorBody::of(error)),
    }
}
