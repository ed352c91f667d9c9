//! The app tools the host runs itself: `app.calculate` and
//! `app.money_calculate` (docs/llmcp.md#app-level-tools).
//!
//! The model proposes them like any tool and the Policy Gate mediates them;
//! once allowed, the engine calls [`run`] with the typed call, whose
//! arguments already passed the registry's schema check (see `tools.rs`).
//!
//! Both tools are pure and exact: a hand-written parser over a small
//! expression language (numbers, `+ - * / % ^`, unary signs, parentheses)
//! evaluated in [`rust_decimal::Decimal`] with checked operations. There is no
//! `eval` and no floating point in the arithmetic, so `0.1 + 0.2` is `0.3`.
//! Inputs are bounded (1000 bytes, 64 nesting levels) so a hostile
//! expression cannot exhaust the stack.
//!
//! - `app.calculate` `{ expression, precision? }` answers
//!   `{ result, formatted }`: `formatted` is the exact decimal (to 12 places,
//!   or exactly `precision` places, midpoint rounded away from zero) and
//!   `result` is the same value as a JSON number.
//! - `app.money_calculate` `{ expression, currency, rounding? }` takes amounts
//!   tagged with ISO 4217 codes and answers the total in the currency's minor
//!   units: `{ amountMinor, currency, exponent, formatted, rounding }`.
//!
//! Failures are [`AppError`]s with a stable [`AppErrorCode`]:
//! `INVALID_EXPRESSION` (syntax or limits, with the byte position),
//! `DIVISION_BY_ZERO`, `OVERFLOW` (beyond the decimal range or `i64` minor
//! units), `INVALID_PRECISION`, `UNKNOWN_CURRENCY`, `MIXED_CURRENCIES`,
//! `INVALID_ARGUMENTS` (arguments of the wrong shape) and `UNKNOWN_TOOL`.

mod calculate;
mod commerce;
mod currency;
mod expr;
mod money;

#[cfg(test)]
mod tests;

use laika_protocol::tool_call::{ToolCall, ToolOutput};
use std::fmt;

/// Runs `call` if it is an app tool the host runs itself (on arguments that
/// passed the registry's schema check); `None` for every other tool.
pub fn run(call: &ToolCall) -> Option<Result<ToolOutput, AppError>> {
    match call {
        ToolCall::Calculate(args) => Some(calculate::run(args).map(ToolOutput::Calculated)),
        ToolCall::MoneyCalculate(args) => Some(money::run(args).map(ToolOutput::MoneyTotal)),
        ToolCall::EstimateTax(args) => {
            Some(commerce::estimate_tax(args).map(ToolOutput::TaxEstimate))
        }
        ToolCall::EstimateShipping(args) => {
            Some(commerce::estimate_shipping(args).map(ToolOutput::ShippingEstimate))
        }
        ToolCall::ObserveDom(_)
        | ToolCall::GetSelectionLinks(_)
        | ToolCall::Click(_)
        | ToolCall::Type(_)
        | ToolCall::Select(_)
        | ToolCall::Scroll(_)
        | ToolCall::OpenTab(_)
        | ToolCall::Navigate(_)
        | ToolCall::Back(_)
        | ToolCall::Forward(_)
        | ToolCall::Refresh(_)
        | ToolCall::Search(_)
        | ToolCall::ArtifactSave(_)
        | ToolCall::ArtifactShare(_)
        | ToolCall::ArtifactOpen(_)
        | ToolCall::Mcp(_)
        | ToolCall::IntegrationInvoke(_)
        | ToolCall::CollectionCreate(_)
        | ToolCall::CollectionAddSources(_)
        | ToolCall::CollectionListSources(_)
        | ToolCall::SourceCapture(_)
        | ToolCall::SourceRefresh(_)
        | ToolCall::TransformListTypes(_)
        | ToolCall::TransformRun(_) => None,
    }
}

/// Why an app tool failed: a stable code and a message that says where and
/// what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AppError {
    pub code: AppErrorCode,
    pub message: String,
}

impl AppError {
    fn new(code: AppErrorCode, message: impl Into<String>) -> Self {
        AppError {
            code,
            message: message.into(),
        }
    }
}

/// Stable app-tool error codes. The `SCREAMING_SNAKE_CASE` spelling is what
/// the model and the extension see; never change it once released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AppErrorCode {
    /// The expression is not in the language, or is too long or too deep.
    InvalidExpression,
    /// A division or remainder by zero.
    DivisionByZero,
    /// A number or result beyond exact decimal range (or `i64` minor units).
    Overflow,
    /// `precision` is not a whole number from 0 to 6.
    InvalidPrecision,
    /// A currency code that is not an active ISO 4217 code with minor units.
    UnknownCurrency,
    /// An amount in a currency other than the `currency` argument.
    MixedCurrencies,
    /// The arguments do not have the tool's shape.
    InvalidArguments,
    /// The tool name is not one the host runs.
    UnknownTool,
}

impl AppErrorCode {
    /// The wire spelling, e.g. `DIVISION_BY_ZERO`.
    pub fn as_str(self) -> &'static str {
        match self {
            AppErrorCode::InvalidExpression => "INVALID_EXPRESSION",
            AppErrorCode::DivisionByZero => "DIVISION_BY_ZERO",
            AppErrorCode::Overflow => "OVERFLOW",
            AppErrorCode::InvalidPrecision => "INVALID_PRECISION",
            AppErrorCode::UnknownCurrency => "UNKNOWN_CURRENCY",
            AppErrorCode::MixedCurrencies => "MIXED_CURRENCIES",
            AppErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            AppErrorCode::UnknownTool => "UNKNOWN_TOOL",
        }
    }
}

impl fmt::Display for AppErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
