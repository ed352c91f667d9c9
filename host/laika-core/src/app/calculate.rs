//! `app.calculate { expression, precision? }` → `{ result, formatted }`.
//!
//! Rounding with `toFixed` on doubles, as a browser would, has edge cases
//! (2.675 → "2.67"). This one computes exactly and
//! rounds the decimal half away from zero, as a person would: 2.675 → "2.68".

use super::expr::{self, Mode};
use super::{AppError, AppErrorCode};
use laika_protocol::tool_call::{Calculate, Calculated, MAX_PRECISION};
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Number;

/// Without `precision`, results keep at most this many decimals: enough for
/// any everyday answer, short of the 28 digits of `1/3`.
const DEFAULT_PLACES: u32 = 12;
const ROUNDING: RoundingStrategy = RoundingStrategy::MidpointAwayFromZero;

pub(super) fn run(args: &Calculate) -> Result<Calculated, AppError> {
    let precision = precision_argument(args.precision)?;
    let value = expr::evaluate(&args.expression, Mode::Plain)?;
    let (rounded, formatted) = match precision {
        Some(places) => {
            let rounded = expr::positive_zero(value.round_dp_with_strategy(places, ROUNDING));
            (rounded, fixed(rounded, places))
        }
        None => {
            let rounded =
                expr::positive_zero(value.round_dp_with_strategy(DEFAULT_PLACES, ROUNDING))
                    .normalize();
            (rounded, rounded.to_string())
        }
    };
    Ok(Calculated {
        result: json_number(rounded, &formatted),
        formatted,
    })
}

/// `precision`: absent for the default, else a whole number 0..=6.
fn precision_argument(precision: Option<u64>) -> Result<Option<u32>, AppError> {
    let Some(value) = precision else {
        return Ok(None);
    };
    match u32::try_from(value)
        .ok()
        .filter(|&p| u64::from(p) <= MAX_PRECISION)
    {
        Some(places) => Ok(Some(places)),
        None => Err(AppError::new(
            AppErrorCode::InvalidPrecision,
            format!("'precision' must be a whole number from 0 to {MAX_PRECISION}, got {value}"),
        )),
    }
}

/// `value` (already rounded to `places`) with exactly `places` decimals.
fn fixed(value: Decimal, places: u32) -> String {
    let text = value.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let places = places as usize;
    if places == 0 {
        return int.to_string();
    }
    format!("{int}.{frac:0<places$}")
}

/// The value as a JSON number: an integer when it is one (so `-1024`, not
/// `-1024.0`), else the nearest `f64` to the exact decimal text. laika-core's
/// serde_json has no arbitrary precision; `formatted` keeps the exact value.
fn json_number(value: Decimal, formatted: &str) -> Option<Number> {
    if value.is_integer() {
        if let Ok(integer) = i64::try_from(value) {
            return Some(Number::from(integer));
        }
    }
    formatted.parse::<f64>().ok().and_then(Number::from_f64)
}
