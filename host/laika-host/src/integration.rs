//! `integration.invoke`: an integration is a plugin program the user added
//! under `[integrations.<name>]` in config.toml, run the way the `command`
//! runtime runs its plugin (docs/plugin-protocol.md, "Integrations"): one
//! process per call, one JSON request on stdin, one JSON object on stdout,
//! a timeout, a cap on what it may write, the host's secrets kept out of
//! its environment. The gate asks the user before every call and denies a
//! name that is not configured.

use laika_core::cancel::CancelToken;
use laika_core::text::prefix_chars;
use laika_protocol::agent::ToolError;
use laika_protocol::error::{ErrorCode, Result};
use laika_protocol::tool_call::IntegrationInvoke;
use laika_runtime::command::{CommandConfig, CommandRuntime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The request's `protocol`.
pub const PROTOCOL: &str = "laika_integration_v1";
/// The request's `task.kind`.
pub const TASK_KIND: &str = "integration_invoke";
/// Default for `timeout_ms`: an integration is a quick call, not a model.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// What an integration may write on stdout before it is killed; its result
/// goes back to the model, so it is kept small.
pub const MAX_OUTPUT: usize = 256 << 10;

/// One `[integrations.<name>]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntegrationConfig {
    /// The plugin program: an absolute path or a bare name found in PATH.
    pub command: Option<PathBuf>,
    /// Its arguments, passed as is (no shell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// How long one call may take; default [`DEFAULT_TIMEOUT_MS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Extra environment variables (it otherwise inherits only the few the
    /// command runtime passes on).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The operations the model may ask for; empty: any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<String>,
}

impl IntegrationConfig {
    fn command_config(&self) -> CommandConfig {
        CommandConfig {
            command: self.command.clone(),
            args: self.args.clone(),
            timeout_ms: Some(self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
            env: self.env.clone(),
            ..CommandConfig::default()
        }
    }

    /// Every key's check; errors name `integrations.<name>.<key>`.
    pub fn validate(&self, name: &str) -> Result<()> {
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid_name {
            return Err(laika_protocol::error::Error::new(
                ErrorCode::ConfigInvalid,
                format!(
                    "integrations.{name:?}: a name is 1 to 64 letters, digits, '_', '-' or '.'"
                ),
            ));
        }
        self.command_config()
            .validate_as(&format!("integrations.{name}"))
    }
}

fn failed(code: &str, message: String) -> ToolError {
    ToolError::new(code, prefix_chars(&message, 2000))
}

/// Runs integration `call.integration` (already gated and approved).
pub fn invoke(
    integrations: &BTreeMap<String, IntegrationConfig>,
    call: &IntegrationInvoke,
    cancel: &CancelToken,
) -> std::result::Result<Value, ToolError> {
    let name = call.integration.as_str();
    let operation = call.operation.as_str();
    let config = integrations.get(name).ok_or_else(|| {
        failed(
            "NOT_FOUND",
            format!(
                "no integration named {:?} is configured",
                prefix_chars(name, 80)
            ),
        )
    })?;
    if !config.operations.is_empty() && !config.operations.iter().any(|o| o == operation) {
        return Err(failed(
            "UNKNOWN_OPERATION",
            format!(
                "integration {name} has no operation {:?}; it offers {}",
                prefix_chars(operation, 80),
                config.operations.join(", ")
            ),
        ));
    }
    let runtime = CommandRuntime::from_config(&config.command_config())
        .map_err(|e| failed("INTEGRATION_UNAVAILABLE", e.message))?
        .with_max_stdout(MAX_OUTPUT);
    let request = json!({
        "protocol": PROTOCOL,
        "task": {
            "kind": TASK_KIND,
            "integration": name,
            "operation": operation,
            "payload": call.payload,
            "idempotency_key": call.idempotency_key,
        }
    });
    let response = runtime.call(&request, cancel).map_err(|e| {
        let code = match e.code {
            ErrorCode::RuntimeUnavailable => "INTEGRATION_UNAVAILABLE",
            ErrorCode::RuntimeTimeout => "INTEGRATION_TIMEOUT",
            ErrorCode::Cancelled => "CANCELLED",
            _ => "INTEGRATION_FAILED",
        };
        failed(code, format!("integration {name}: {}", e.message))
    })?;
    let result = response.get("result").cloned().ok_or_else(|| {
        failed(
            "INTEGRATION_FAILED",
            format!("integration {name} answered without a `result`"),
        )
    })?;
    let message = response
        .get("message")
        .and_then(Value::as_str)
        .map(|m| prefix_chars(m, 300).to_owned())
        .unwrap_or_else(|| format!("{name} ran {}.", prefix_chars(operation, 80)));
    Ok(json!({
        "integration": name,
        "operation": operation,
        "result": result,
        "message": message,
    }))
}
