use super::*;
use laika_protocol::tool_call::ToolName;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Runs tool `name` as the engine does: typed first (arguments the typed
/// call cannot hold are `INVALID_ARGUMENTS`, as the gate has them).
fn run(name: &str, arguments: &Value) -> Result<Value, AppError> {
    let name = ToolName::from_name(name).unwrap();
    let call = ToolCall::from_arguments(name, arguments.clone())
        .map_err(|e| AppError::new(AppErrorCode::InvalidArguments, e.to_string()))?;
    super::run(&call).unwrap().map(ToolOutput::into_value)
}

/// Whether the host runs tool `name` itself (its example call, through [`super::run`]).
fn is_app_tool(name: &str) -> bool {
    ToolName::from_name(name).is_some_and(|name| {
        let example = &name.arguments_schema()["examples"][0];
        let call = ToolCall::from_arguments(name, example.clone()).unwrap();
        super::run(&call).is_some()
    })
}

fn calculate(arguments: Value) -> Result<Value, AppError> {
    run("app.calculate", &arguments)
}

/// `formatted` of `expression` without precision.
fn formatted(expression: &str) -> String {
    let out = calculate(json!({ "expression": expression })).unwrap();
    out["formatted"].as_str().unwrap().to_string()
}

fn calculate_error(expression: &str) -> AppError {
    calculate(json!({ "expression": expression })).unwrap_err()
}

fn money(expression: &str, currency: &str, rounding: Option<&str>) -> Result<Value, AppError> {
    let mut arguments = json!({ "expression": expression, "currency": currency });
    if let Some(rounding) = rounding {
        arguments["rounding"] = json!(rounding);
    }
    run("app.money_calculate", &arguments)
}

fn minor(expression: &str, currency: &str, rounding: Option<&str>) -> i64 {
    money(expression, currency, rounding).unwrap()["amountMinor"]
        .as_i64()
        .unwrap()
}

fn assert_error(result: Result<Value, AppError>, code: AppErrorCode, needle: &str) {
    let error = result.unwrap_err();
    assert_eq!(error.code, code, "{error}");
    assert!(
        error.message.contains(needle),
        "{error} does not contain {needle:?}"
    );
}

// ---- app.calculate: values ----

#[test]
fn decimal_arithmetic_is_exact() {
    let out = calculate(json!({ "expression": "0.1 + 0.2" })).unwrap();
    assert_eq!(out, json!({ "result": 0.3, "formatted": "0.3" }));
    assert_eq!(formatted("1.1 * 1.1"), "1.21");
    assert_eq!(formatted("0.3 - 0.1"), "0.2");
    assert_eq!(formatted("1 / 4"), "0.25");
}

#[test]
fn operators_precedence_and_associativity() {
    assert_eq!(formatted("2 * (3 + 4)"), "14");
    assert_eq!(formatted("2 + 3 * 4"), "14");
    assert_eq!(formatted("10 - 4 - 3"), "3");
    assert_eq!(formatted("100 / 10 / 5"), "2");
    assert_eq!(formatted("2^3^2"), "512");
    assert_eq!(formatted("-2^2"), "-4");
    assert_eq!(formatted("(-2)^2"), "4");
    assert_eq!(formatted("2 * -3"), "-6");
    assert_eq!(formatted("--3"), "3");
    assert_eq!(formatted("+3"), "3");
    assert_eq!(formatted("0^0"), "1");
    assert_eq!(formatted("1.5^2"), "2.25");
    assert_eq!(formatted("2^(1+2)"), "8");
}

#[test]
fn power_and_modulo() {
    let out = calculate(json!({ "expression": "-(2^10)" })).unwrap();
    assert_eq!(out, json!({ "result": -1024, "formatted": "-1024" }));
    assert_eq!(formatted("10 % 3"), "1");
    assert_eq!(formatted("-7 % 3"), "-1");
    assert_eq!(formatted("7 % (-3)"), "1");
    assert_eq!(formatted("5.5 % 2"), "1.5");
    assert_eq!(formatted("1^1000"), "1");
}

#[test]
fn numbers_in_every_accepted_spelling() {
    assert_eq!(formatted(".5"), "0.5");
    assert_eq!(formatted("5."), "5");
    assert_eq!(formatted("007"), "7");
    assert_eq!(formatted("1.250"), "1.25");
    assert_eq!(formatted("1e5"), "100000");
    assert_eq!(formatted("2.5E-3"), "0.0025");
    assert_eq!(formatted("1.5e+2"), "150");
    assert_eq!(formatted("0e999999"), "0");
    assert_eq!(formatted("100e-30 * 1e26"), "0.01");
    assert_eq!(formatted("1.0000000000000000000000000000000000"), "1");
    assert_eq!(
        formatted("79228162514264337593543950335"),
        "79228162514264337593543950335"
    );
    assert_eq!(formatted("2 × 3 − 1 ÷ 4"), "5.75");
    assert_eq!(formatted("\t1\u{a0}+\n2 "), "3");
}

#[test]
fn precision_rounds_half_away_from_zero_with_exact_decimals() {
    let p = |expression: &str, precision: u64| {
        calculate(json!({ "expression": expression, "precision": precision })).unwrap()
    };
    assert_eq!(
        p("2.675", 2),
        json!({ "result": 2.68, "formatted": "2.68" })
    );
    assert_eq!(
        p("1/3", 6),
        json!({ "result": 0.333333, "formatted": "0.333333" })
    );
    assert_eq!(p("-2.675", 2)["formatted"], "-2.68");
    assert_eq!(p("2.5", 0), json!({ "result": 3, "formatted": "3" }));
    assert_eq!(p("3", 2), json!({ "result": 3, "formatted": "3.00" }));
    assert_eq!(p("0.1 + 0.2", 6)["formatted"], "0.300000");
    assert_eq!(p("-0.001", 2), json!({ "result": 0, "formatted": "0.00" }));
    assert_eq!(p("2 * (3 + 4)", 2)["formatted"], "14.00");
}

#[test]
fn without_precision_at_most_twelve_decimals() {
    assert_eq!(formatted("1/3"), "0.333333333333");
    assert_eq!(formatted("2/3"), "0.666666666667");
    assert_eq!(formatted("1e-13"), "0");
    assert_eq!(formatted("-0"), "0");
    assert_eq!(formatted("0 * -1"), "0");
    let out = calculate(json!({ "expression": "1/3" })).unwrap();
    assert_eq!(out["result"], json!(0.333333333333));
}

#[test]
fn large_results_are_json_numbers_and_exact_text() {
    let out = calculate(json!({ "expression": "10^20" })).unwrap();
    assert_eq!(out["formatted"], "100000000000000000000");
    assert_eq!(out["result"], json!(1e20));
    let out = calculate(json!({ "expression": "2^62" })).unwrap();
    assert_eq!(out["result"], json!(4_611_686_018_427_387_904_i64));
}

#[test]
fn precision_may_be_null_or_a_whole_float() {
    let out = calculate(json!({ "expression": "1/8", "precision": null })).unwrap();
    assert_eq!(out["formatted"], "0.125");
    let out = calculate(json!({ "expression": "1/8", "precision": 2.0 })).unwrap();
    assert_eq!(out["formatted"], "0.13");
}

#[test]
fn bad_precision_is_refused_before_evaluating() {
    assert_error(
        calculate(json!({ "expression": "1/0", "precision": 7 })),
        AppErrorCode::InvalidPrecision,
        "'precision' must be a whole number from 0 to 6",
    );
    // Not a whole number at all: the typed call cannot hold it.
    for precision in [json!(-1), json!(2.5), json!("2"), json!(true)] {
        assert_error(
            calculate(json!({ "expression": "1/0", "precision": precision })),
            AppErrorCode::InvalidArguments,
            "",
        );
    }
}

// ---- app.calculate: errors ----

#[test]
fn division_and_remainder_by_zero() {
    for (expression, needle) in [
        ("7 / 0", "division by zero at position 2"),
        ("7 % 0", "remainder by zero at position 2"),
        ("1 / (1 - 1)", "division by zero at position 2"),
    ] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::DivisionByZero,
            needle,
        );
    }
}

#[test]
fn overflow_is_an_error_not_a_wrap() {
    for (expression, needle) in [
        ("2^1000", "2^1000 at position 1"),
        ("2^96", "2^96"),
        ("79228162514264337593543950335 + 1", "'+' at position 30"),
        ("-79228162514264337593543950335 - 1", "'-' at position 31"),
        ("1e15 * 1e15", "'*' at position 5"),
        ("10 / 0.0000000000000000000000000001", "'/' at position 3"),
        ("79228162514264337593543950336", "the number at position 0"),
        ("1e29", "the number at position 0"),
        ("1e4294967296", "the number at position 0"),
        (
            "1234567890123456789012345678901234567890",
            "the number at position 0",
        ),
    ] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::Overflow,
            needle,
        );
    }
}

#[test]
fn syntax_errors_name_position_and_expectation() {
    for (expression, needle) in [
        (
            "1 +",
            "expected a number at position 3, found the end of the expression",
        ),
        ("1 + ", "expected a number at position 4"),
        ("1 + * 2", "expected a number at position 4, found '*'"),
        ("(1 + 2))", "unexpected ')' at position 7"),
        (")", "expected a number at position 0, found ')'"),
        (
            "(1 + 2",
            "expected ')' at position 6 to close the '(' at position 0",
        ),
        ("2 3", "unexpected '3' at position 2, expected an operator"),
        ("2(3)", "unexpected '(' at position 1"),
        ("", "the expression is empty"),
        ("   ", "the expression is empty"),
        (
            "1.2.3",
            "unexpected '.' at position 3: a number has one decimal point",
        ),
        (".", "unexpected '.' at position 0"),
        ("1 + é", "unexpected 'é' at position 4"),
        ("1 = 1", "unexpected '=' at position 2"),
        ("5e", "unexpected 'e' at position 1"),
        ("1e-29", "more than 28 decimal places"),
        (
            "0.00000000000000000000000000001",
            "more than 28 decimal places",
        ),
        ("2^-1", "whole number from 0 to 1000, got -1"),
        ("2^0.5", "whole number from 0 to 1000, got 0.5"),
        ("1^1001", "whole number from 0 to 1000, got 1001"),
        ("sqrt(4)", "expected a number at position 0, found 'sqrt'"),
    ] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::InvalidExpression,
            needle,
        );
    }
}

#[test]
fn thousands_separators_are_refused_with_a_reason() {
    for expression in ["1,000", "1,234.5 * 2", "3,5"] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::InvalidExpression,
            "without thousands separators",
        );
    }
}

#[test]
fn percent_is_not_a_percentage() {
    for (expression, needle) in [
        (
            "50%",
            "expected a number at position 3 after the '%' at position 2",
        ),
        ("200 * 15%", "not a percentage"),
        ("50% + 3", "found '+'"),
        ("7 % -3", "7 % (-3)"),
    ] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::InvalidExpression,
            needle,
        );
    }
}

#[test]
fn currencies_belong_to_money_calculate() {
    assert_error(
        calculate(json!({ "expression": "USD 5 + 1" })),
        AppErrorCode::InvalidExpression,
        "app.money_calculate",
    );
    assert_error(
        calculate(json!({ "expression": "5 EUR" })),
        AppErrorCode::InvalidExpression,
        "app.money_calculate",
    );
    assert_error(
        calculate(json!({ "expression": "$5" })),
        AppErrorCode::InvalidExpression,
        "ISO 4217",
    );
}

#[test]
fn a_syntax_error_anywhere_wins_over_arithmetic_and_the_first_arithmetic_error_wins() {
    assert_eq!(
        calculate_error("1/0 +").code,
        AppErrorCode::InvalidExpression
    );
    assert_eq!(
        calculate_error("2^1000 + (1").code,
        AppErrorCode::InvalidExpression
    );
    assert_eq!(
        calculate_error("1/0 + 2^1000").code,
        AppErrorCode::DivisionByZero
    );
    assert_eq!(calculate_error("2^1000 + 1/0").code, AppErrorCode::Overflow);
}

#[test]
fn nesting_and_length_are_bounded() {
    let nested = |depth: usize| format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
    assert_eq!(formatted(&nested(64)), "1");
    for depth in [65, 100, 499] {
        assert_error(
            calculate(json!({ "expression": nested(depth) })),
            AppErrorCode::InvalidExpression,
            "nests deeper than 64 levels at position 64",
        );
    }
    // Unclosed, and signs and powers count too: none of these may recurse
    // without bound.
    for expression in [
        "(".repeat(1000),
        format!("{}1", "-".repeat(999)),
        format!("2{}", "^2".repeat(499)),
        format!("{}1", "-(".repeat(400)),
    ] {
        assert_error(
            calculate(json!({ "expression": expression })),
            AppErrorCode::InvalidExpression,
            "nests deeper than 64 levels",
        );
    }
    // A long flat sum does not recurse, so it only meets the length bound.
    let flat = format!("1{}", "+1".repeat(499));
    assert_eq!(formatted(&flat), "500");
    let too_long = format!("1{}", "+1".repeat(500));
    assert_error(
        calculate(json!({ "expression": too_long })),
        AppErrorCode::InvalidExpression,
        "the expression is 1001 bytes; the limit is 1000",
    );
}

#[test]
fn arguments_of_the_wrong_shape() {
    for (arguments, needle) in [
        (json!("1 + 1"), "expected struct"),
        (json!({}), "missing field `expression`"),
        (
            json!({ "expression": 5 }),
            "invalid type: integer `5`, expected a string",
        ),
    ] {
        assert_error(
            calculate(arguments.clone()),
            AppErrorCode::InvalidArguments,
            needle,
        );
        assert_error(
            run("app.money_calculate", &arguments),
            AppErrorCode::InvalidArguments,
            needle,
        );
    }
}

// ---- app.money_calculate ----

#[test]
fn money_totals_in_minor_units() {
    let out = money("USD 19.99 * 3", "USD", None).unwrap();
    assert_eq!(
        out,
        json!({
            "amountMinor": 5997,
            "currency": "USD",
            "exponent": 2,
            "formatted": "59.97 USD",
            "rounding": "bankers"
        })
    );
    let out = money("19.99 USD + 5 USD + 33.98", "USD", None).unwrap();
    assert_eq!(out["formatted"], "58.97 USD");
    let out = money("10 / 3", "JPY", None).unwrap();
    assert_eq!(out["amountMinor"], 3);
    assert_eq!(out["exponent"], 0);
    assert_eq!(out["formatted"], "3 JPY");
    let out = money("19.99 * 3", "EUR", None).unwrap();
    assert_eq!(out["formatted"], "59.97 EUR");
}

#[test]
fn money_rounding_modes() {
    assert_eq!(minor("0.125", "USD", None), 12);
    assert_eq!(minor("0.125", "USD", Some("bankers")), 12);
    assert_eq!(minor("0.135", "USD", Some("bankers")), 14);
    assert_eq!(minor("0.125", "USD", Some("up")), 13);
    assert_eq!(minor("0.125", "USD", Some("down")), 12);
    assert_eq!(minor("1.0005", "BHD", Some("up")), 1001);
    // `up` and `down` are directed, like Java's RoundingMode.UP and DOWN:
    // any remainder moves away from or toward zero.
    assert_eq!(minor("0.121", "USD", Some("up")), 13);
    assert_eq!(minor("0.129", "USD", Some("down")), 12);
    assert_eq!(minor("0.12", "USD", Some("up")), 12);
    let out = money("1/3", "USD", Some("up")).unwrap();
    assert_eq!(out["rounding"], "up");
    assert_eq!(out["formatted"], "0.34 USD");
}

#[test]
fn negative_amounts_round_symmetrically() {
    assert_eq!(minor("-0.125", "USD", Some("up")), -13);
    assert_eq!(minor("-0.125", "USD", Some("down")), -12);
    assert_eq!(minor("-0.125", "USD", Some("bankers")), -12);
    assert_eq!(minor("-0.135", "USD", None), -14);
    assert_eq!(minor("-0.121", "USD", Some("up")), -13);
    let out = money("5 USD - 5.125 USD", "USD", Some("up")).unwrap();
    assert_eq!(out["formatted"], "-0.13 USD");
    let out = money("-0.001", "USD", Some("down")).unwrap();
    assert_eq!(out["amountMinor"], 0);
    assert_eq!(out["formatted"], "0.00 USD");
}

#[test]
fn money_formatting_per_exponent() {
    let format = |expression: &str, currency: &str| {
        money(expression, currency, None).unwrap()["formatted"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(format("0.05", "USD"), "0.05 USD");
    assert_eq!(format("-0.05", "USD"), "-0.05 USD");
    assert_eq!(format("1234567.891", "KWD"), "1234567.891 KWD");
    assert_eq!(format("0.0001", "CLF"), "0.0001 CLF");
    assert_eq!(format("1500.4", "KRW"), "1500 KRW");
    assert_eq!(format("100", "USD"), "100.00 USD");
}

#[test]
fn currency_codes_in_any_case_before_or_after() {
    let out = money("usd 1 + 2 Usd", "usd", None).unwrap();
    assert_eq!(out["currency"], "USD");
    assert_eq!(out["amountMinor"], 300);
    let out = money("2 * (USD 1.5 + 1.5USD)", "USD", None).unwrap();
    assert_eq!(out["amountMinor"], 600);
}

#[test]
fn mixed_and_unknown_currencies() {
    assert_error(
        money("19.99 EUR + 1 USD", "EUR", None),
        AppErrorCode::MixedCurrencies,
        "'USD' at position 14 is not EUR, the currency argument",
    );
    assert_error(
        money("GBP 5", "EUR", None),
        AppErrorCode::MixedCurrencies,
        "GBP",
    );
    assert_error(
        money("XYZ 5", "USD", None),
        AppErrorCode::UnknownCurrency,
        "'XYZ' at position 0 is not an ISO 4217 currency code",
    );
    assert_error(
        money("5 dollars", "USD", None),
        AppErrorCode::UnknownCurrency,
        "'dollars' at position 2",
    );
    for currency in ["XYZ", "XAU", "HRK", "", "US"] {
        assert_error(
            money("5", currency, None),
            AppErrorCode::UnknownCurrency,
            "not an ISO 4217 currency code",
        );
    }
}

#[test]
fn money_syntax_and_argument_errors() {
    for (expression, needle) in [
        ("USD", "expected a number after 'USD' at position 3"),
        (
            "USD (5)",
            "expected a number after 'USD' at position 4, found '('",
        ),
        ("USD 5 USD", "the amount already has its currency 'USD'"),
        ("$5", "ISO 4217"),
        ("5 +", "expected a number at position 3"),
    ] {
        assert_error(
            money(expression, "USD", None),
            AppErrorCode::InvalidExpression,
            needle,
        );
    }
    assert_error(
        money("5 / 0", "USD", None),
        AppErrorCode::DivisionByZero,
        "position 2",
    );
    assert_error(
        money("5", "USD", Some("sideways")),
        AppErrorCode::InvalidArguments,
        "unknown variant `sideways`",
    );
    assert_error(
        run("app.money_calculate", &json!({ "expression": "5" })),
        AppErrorCode::InvalidArguments,
        "missing field `currency`",
    );
    assert_error(
        run(
            "app.money_calculate",
            &json!({ "expression": "5", "currency": 840 }),
        ),
        AppErrorCode::InvalidArguments,
        "invalid type: integer `840`, expected a string",
    );
}

#[test]
fn minor_units_beyond_i64_overflow() {
    assert_eq!(
        minor("92233720368547758.07", "USD", None),
        i64::MAX,
        "the largest amount still fits"
    );
    assert_eq!(minor("-92233720368547758.08", "USD", None), i64::MIN);
    assert_error(
        money("92233720368547758.08", "USD", None),
        AppErrorCode::Overflow,
        "amountMinor",
    );
    assert_error(
        money("1e20", "JPY", None),
        AppErrorCode::Overflow,
        "amountMinor",
    );
    assert_eq!(
        money("-92233720368547758.08", "USD", None).unwrap()["formatted"],
        "-92233720368547758.08 USD"
    );
}

#[test]
fn the_currency_table_is_sorted_iso_4217() {
    let table = currency::currencies();
    assert!(table.len() > 150, "{}", table.len());
    for pair in table.windows(2) {
        assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
    }
    for &(code, exponent) in table {
        assert!(
            code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()),
            "{code}"
        );
        assert!(exponent <= 4, "{code}");
        assert_eq!(currency::exponent(code), Some(exponent));
    }
    for (code, exponent) in [
        ("JPY", 0),
        ("KRW", 0),
        ("VND", 0),
        ("CLP", 0),
        ("ISK", 0),
        ("BHD", 3),
        ("KWD", 3),
        ("OMR", 3),
        ("JOD", 3),
        ("TND", 3),
        ("LYD", 3),
        ("IQD", 3),
        ("CLF", 4),
        ("UYW", 4),
        ("USD", 2),
        ("EUR", 2),
        ("GBP", 2),
        ("CHF", 2),
        ("INR", 2),
        ("IDR", 2),
        ("HUF", 2),
    ] {
        assert_eq!(currency::exponent(code), Some(exponent), "{code}");
    }
    assert_eq!(currency::exponent("usd"), None, "lookups take upper case");
    assert_eq!(currency::exponent("XAU"), None);
}

// ---- the module's surface ----

#[test]
fn dispatch_and_tool_names() {
    assert!(is_app_tool("app.calculate"));
    assert!(is_app_tool("app.money_calculate"));
    assert!(!is_app_tool("app.calc"));
    assert!(is_app_tool("commerce.estimate_tax"));
    assert!(
        !is_app_tool("collection.create"),
        "store-backed: the driver runs it"
    );
    assert!(!is_app_tool("artifact.save"));
}

#[test]
fn the_registry_examples_run() {
    for name in ["app.calculate", "app.money_calculate"] {
        let tool = crate::tools::find(name).unwrap();
        for example in tool.arguments["examples"].as_array().unwrap() {
            assert!(run(name, example).is_ok(), "{name} {example}");
        }
    }
    let example = &crate::tools::find("app.calculate").unwrap().arguments["examples"][0];
    assert_eq!(
        run("app.calculate", example).unwrap(),
        json!({ "result": 14, "formatted": "14.00" })
    );
    // The schema takes a whole float as an integer; so does `run`.
    let validator = crate::tools::find("app.calculate")
        .unwrap()
        .validator()
        .unwrap();
    let whole_float = json!({ "expression": "1", "precision": 2.0 });
    assert_eq!(
        validator.is_valid(&whole_float),
        calculate(whole_float.clone()).is_ok()
    );
}

#[test]
fn error_codes_spell_as_serde_does() {
    for code in [
        AppErrorCode::InvalidExpression,
        AppErrorCode::DivisionByZero,
        AppErrorCode::Overflow,
        AppErrorCode::InvalidPrecision,
        AppErrorCode::UnknownCurrency,
        AppErrorCode::MixedCurrencies,
        AppErrorCode::InvalidArguments,
        AppErrorCode::UnknownTool,
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        assert_eq!(code.to_string(), code.as_str());
    }
    let error = calculate_error("7 / 0");
    assert_eq!(
        error.to_string(),
        "DIVISION_BY_ZERO: division by zero at position 2"
    );
}

// ---- properties ----

fn operand() -> impl Strategy<Value = i64> {
    // Small enough that a product fits the decimal range (< 2^96).
    -(1i64 << 46)..(1i64 << 46)
}

/// An operand as an expression writes it: negative ones in parentheses so
/// that `%` takes them.
fn write(n: i128) -> String {
    if n < 0 {
        format!("({n})")
    } else {
        n.to_string()
    }
}

proptest! {
    #[test]
    fn integer_arithmetic_matches_i128(a in operand(), b in operand(), op in 0usize..5) {
        let (a, b) = (i128::from(a), i128::from(b));
        let (symbol, expected) = match op {
            0 => ('+', Some(a + b)),
            1 => ('-', Some(a - b)),
            2 => ('*', Some(a * b)),
            3 => ('%', a.checked_rem(b)),
            // Exact division of a multiple of b: i128 agrees there.
            _ => ('/', (a - a.checked_rem(b).unwrap_or(0)).checked_div(b)),
        };
        let dividend = if symbol == '/' { a - a.checked_rem(b).unwrap_or(0) } else { a };
        let expression = format!("{} {symbol} {}", write(dividend), write(b));
        let out = calculate(json!({ "expression": expression }));
        match expected {
            None => prop_assert_eq!(out.unwrap_err().code, AppErrorCode::DivisionByZero),
            Some(expected) => {
                let out = out.unwrap();
                prop_assert_eq!(out["formatted"].as_str().unwrap(), expected.to_string());
                if expected.unsigned_abs() < (1 << 53) {
                    prop_assert_eq!(out["result"].as_i64().map(i128::from), Some(expected));
                }
            }
        }
    }

    #[test]
    fn division_undoes_multiplication(a in operand(), b in operand()) {
        prop_assume!(b != 0);
        let expression = format!("{} * {} / {}", write(a.into()), write(b.into()), write(b.into()));
        let out = calculate(json!({ "expression": expression })).unwrap();
        prop_assert_eq!(out["formatted"].as_str().unwrap(), a.to_string());
    }

    #[test]
    fn the_parser_never_panics(expression in ".{0,200}") {
        let _ = calculate(json!({ "expression": expression.clone() }));
        let _ = money(&expression, "USD", None);
    }

    #[test]
    fn the_parser_never_panics_on_near_grammatical_input(
        expression in "[0-9.eE+\\-*/%^() ,USDEURJPY×]{0,200}",
        precision in 0u64..=6,
    ) {
        let _ = calculate(json!({ "expression": expression.clone(), "precision": precision }));
        let _ = money(&expression, "EUR", Some("up"));
    }

    #[test]
    fn money_rounding_stays_within_one_minor_unit(cents in -1_000_000_000i64..1_000_000_000, extra in 0u32..1000) {
        // cents + extra/1000 of a cent, rounded each way.
        let expression = format!("{}{:03}", write_cents(cents), extra);
        let down = minor(&expression, "USD", Some("down"));
        let up = minor(&expression, "USD", Some("up"));
        let bankers = minor(&expression, "USD", None);
        prop_assert!(down.abs() <= up.abs());
        prop_assert!((up - down).abs() <= 1);
        prop_assert!(bankers == up || bankers == down);
        if extra == 0 {
            prop_assert_eq!(up, down);
        }
    }
}

/// `-123` cents as `-1.23`, for the property above (the fraction digits are
/// appended to it).
fn write_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}
