//! `app.money_calculate { expression, currency, rounding? }` →
//! `{ amountMinor, currency, exponent, formatted, rounding }`.
//!
//! Amounts may carry an ISO 4217 code before or after the number
//! (`USD 19.99 * 3`, `19.99 USD + 5 USD`); every code must be the
//! `currency` argument's, as the tool knows no exchange rates. Symbols (`$`,
//! `€`) are refused: `$` alone is a dozen currencies. The expression is
//! computed exactly, and only the final total is rounded to the currency's
//! minor unit.

use super::currency::exponent;
use super::expr::{self, Mode};
use super::{AppError, AppErrorCode};
use laika_protocol::tool_call::{MoneyCalculate, MoneyTotal, Rounding};
use rust_decimal::{Decimal, RoundingStrategy};

/// How the exact total becomes a whole number of minor units: half to
/// even (the default, unbiased over many sums); up, away from zero, any
/// remainder (0.121 USD → 0.13); down, toward zero (0.129 USD → 0.12).
fn strategy(rounding: Rounding) -> RoundingStrategy {
    match rounding {
        Rounding::Bankers => RoundingStrategy::MidpointNearestEven,
        Rounding::Up => RoundingStrategy::AwayFromZero,
        Rounding::Down => RoundingStrategy::ToZero,
    }
}

pub(super) fn run(args: &MoneyCalculate) -> Result<MoneyTotal, AppError> {
    let (currency, exponent) = currency_argument(&args.currency)?;
    let rounding = args.rounding.unwrap_or_default();
    let total = expr::evaluate(&args.expression, Mode::Money(&currency))?;
    let rounded = total.round_dp_with_strategy(exponent, strategy(rounding));
    let amount_minor = 10i64
        .checked_pow(exponent)
        .and_then(|unit| rounded.checked_mul(Decimal::from(unit)))
        .and_then(|minor| i64::try_from(minor).ok())
        .ok_or_else(|| {
            AppError::new(
                AppErrorCode::Overflow,
                format!(
                    "the total {} {currency} is beyond what amountMinor (a 64-bit integer of \
                     minor units) holds",
                    expr::positive_zero(rounded)
                ),
            )
        })?;
    Ok(MoneyTotal {
        amount_minor,
        formatted: format_minor(amount_minor, exponent, &currency),
        currency,
        exponent,
        rounding,
    })
}

/// `currency`: a known ISO 4217 code, any case; answered in upper case.
fn currency_argument(code: &str) -> Result<(String, u32), AppError> {
    let upper = code.trim().to_ascii_uppercase();
    match exponent(&upper) {
        Some(exponent) => Ok((upper, exponent)),
        None => Err(AppError::new(
            AppErrorCode::UnknownCurrency,
            format!(
                "'currency' is '{code}', which is not an ISO 4217 currency code (USD, EUR, JPY, …)"
            ),
        )),
    }
}

/// `5997, 2, "USD"` → `"59.97 USD"`, from the integer so that the text is
/// exactly the amount.
fn format_minor(amount_minor: i64, exponent: u32, currency: &str) -> String {
    let sign = if amount_minor < 0 { "-" } else { "" };
    let digits = amount_minor.unsigned_abs().to_string();
    let places = exponent as usize;
    if places == 0 {
        return format!("{sign}{digits} {currency}");
    }
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (units, minor) = padded.split_at(padded.len() - places);
    format!("{sign}{units}.{minor} {currency}")
}
