//! `commerce.estimate_tax` and `commerce.estimate_shipping`: labelled
//! estimates from tables shipped with Laika as data
//! (`laika-core/data/commerce_tables.json`, compiled in), each answer naming
//! the table's source and date. They never claim to be a quote.

use super::{AppError, AppErrorCode};
use laika_protocol::tool_call::{
    DayRange, Destination, EstimateShipping, EstimateTax, ShippingEstimate, TaxEstimate,
};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::OnceLock;

const TABLES: &str = include_str!("../../data/commerce_tables.json");

#[derive(Deserialize)]
struct Tables {
    tax: TaxTable,
    shipping: ShippingTable,
}

#[derive(Deserialize)]
struct TaxTable {
    label: String,
    source: String,
    as_of: String,
    currency: String,
    rates_percent: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Rate {
    amount_minor: i64,
    days: [u32; 2],
}

#[derive(Deserialize)]
struct ShippingTable {
    label: String,
    source: String,
    as_of: String,
    currency: String,
    regions: BTreeMap<String, BTreeMap<String, Rate>>,
    noncontiguous_states: Vec<String>,
}

fn tables() -> Result<&'static Tables, AppError> {
    static PARSED: OnceLock<Option<Tables>> = OnceLock::new();
    PARSED
        .get_or_init(|| serde_json::from_str(TABLES).ok())
        .as_ref()
        .ok_or_else(|| {
            AppError::new(
                AppErrorCode::InvalidArguments,
                "the commerce tables shipped with Laika do not parse",
            )
        })
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::new(AppErrorCode::InvalidArguments, message)
}

/// The destination's two-letter state code, upper-cased.
fn state(destination: &Destination) -> String {
    destination.state.trim().to_ascii_uppercase()
}

pub(super) fn estimate_tax(args: &EstimateTax) -> Result<TaxEstimate, AppError> {
    let table = &tables()?.tax;
    let amount = args.amount_minor;
    if amount < 0 {
        return Err(invalid("'amountMinor' must not be negative"));
    }
    let currency = args.currency.trim().to_ascii_uppercase();
    if currency != table.currency {
        return Err(AppError::new(
            AppErrorCode::UnknownCurrency,
            format!(
                "the tax table covers US states in {}, not '{currency}'",
                table.currency
            ),
        ));
    }
    let state = state(&args.destination);
    let rate = table
        .rates_percent
        .get(&state)
        .and_then(|r| Decimal::from_str(r).ok())
        .ok_or_else(|| {
            invalid(format!(
                "'{state}' is not a US state code the tax table knows (two letters, e.g. CA)"
            ))
        })?;
    let tax = (Decimal::from(amount) * rate / Decimal::ONE_HUNDRED)
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
    let tax_minor = i64::try_from(tax.mantissa()).map_err(|_| {
        AppError::new(
            AppErrorCode::Overflow,
            "the tax does not fit in minor units",
        )
    })?;
    Ok(TaxEstimate {
        estimate: true,
        label: table.label.clone(),
        source: table.source.clone(),
        as_of: table.as_of.clone(),
        rate_percent: rate.normalize().to_string(),
        tax_minor,
        formatted: format!("{} {currency} (estimate)", Decimal::new(tax_minor, 2)),
        message: format!(
            "Estimated state sales tax for {state}: {} {currency} at {}% (state rate only; table of {}).",
            Decimal::new(tax_minor, 2), rate.normalize(), table.as_of
        ),
        state,
        currency,
    })
}

pub(super) fn estimate_shipping(args: &EstimateShipping) -> Result<ShippingEstimate, AppError> {
    let table = &tables()?.shipping;
    let state = state(&args.destination);
    if !(state.len() == 2 && tables()?.tax.rates_percent.contains_key(&state)) {
        return Err(invalid(format!(
            "'{state}' is not a US state code (two letters, e.g. CA)"
        )));
    }
    let speed = args.speed.unwrap_or_default();
    let region = if table.noncontiguous_states.contains(&state) {
        "noncontiguous"
    } else {
        "contiguous"
    };
    let rate = table
        .regions
        .get(region)
        .and_then(|r| r.get(speed.as_str()))
        .ok_or_else(|| invalid(format!("no '{}' rate for {state}", speed.as_str())))?;
    let price = Decimal::new(rate.amount_minor, 2);
    Ok(ShippingEstimate {
        estimate: true,
        label: table.label.clone(),
        source: table.source.clone(),
        as_of: table.as_of.clone(),
        speed,
        amount_minor: rate.amount_minor,
        currency: table.currency.clone(),
        days: DayRange {
            min: rate.days[0],
            max: rate.days[1],
        },
        formatted: format!("{price} {} (estimate)", table.currency),
        message: format!(
            "Estimated {} shipping to {state}: {price} {}, {}–{} days (illustrative table of {}, not a quote).",
            speed.as_str(), table.currency, rate.days[0], rate.days[1], table.as_of
        ),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn estimate_tax(arguments: &Value) -> Result<Value, AppError> {
        super::estimate_tax(&serde_json::from_value(arguments.clone()).unwrap())
            .map(|out| serde_json::to_value(out).unwrap())
    }

    fn estimate_shipping(arguments: &Value) -> Result<Value, AppError> {
        super::estimate_shipping(&serde_json::from_value(arguments.clone()).unwrap())
            .map(|out| serde_json::to_value(out).unwrap())
    }

    #[test]
    fn tax_is_labelled_and_rounded_from_the_table() {
        let v = estimate_tax(
            &json!({"amountMinor": 1999, "currency": "usd", "destination": {"state": "ca"}}),
        )
        .unwrap();
        assert_eq!(v["taxMinor"], 145, "19.99 × 7.25% = 1.449… → 1.45");
        assert_eq!(v["estimate"], true);
        assert!(v["label"].as_str().unwrap().starts_with("Estimate"));
        assert!(v["source"].as_str().unwrap().contains("Tax Foundation"));
        assert_eq!(v["asOf"], "2024-01-01");
        let zero = estimate_tax(
            &json!({"amountMinor": 5000, "currency": "USD", "destination": {"state": "OR"}}),
        )
        .unwrap();
        assert_eq!(zero["taxMinor"], 0);
        let e = estimate_tax(
            &json!({"amountMinor": 100, "currency": "EUR", "destination": {"state": "CA"}}),
        )
        .unwrap_err();
        assert_eq!(e.code, AppErrorCode::UnknownCurrency);
        let e = estimate_tax(
            &json!({"amountMinor": 100, "currency": "USD", "destination": {"state": "ZZ"}}),
        )
        .unwrap_err();
        assert_eq!(e.code, AppErrorCode::InvalidArguments);
        let e = estimate_tax(
            &json!({"amountMinor": -1, "currency": "USD", "destination": {"state": "CA"}}),
        )
        .unwrap_err();
        assert_eq!(e.code, AppErrorCode::InvalidArguments);
    }

    #[test]
    fn shipping_depends_on_region_and_speed() {
        let v = estimate_shipping(&json!({"destination": {"state": "NY"}})).unwrap();
        assert_eq!(v["amountMinor"], 899);
        assert_eq!(v["speed"], "standard");
        let v = estimate_shipping(&json!({"destination": {"state": "HI"}, "speed": "expedited"}))
            .unwrap();
        assert_eq!(v["amountMinor"], 4999);
        assert!(v["message"].as_str().unwrap().contains("not a quote"));
        assert!(estimate_shipping(&json!({"destination": {"state": "Bavaria"}})).is_err());
    }
}
