//! The expression language both app tools share, and its exact evaluation.
//!
//! ```text
//! sum     := product (('+' | '-') product)*
//! product := unary (('*' | '/' | '%') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary ('^' unary)?          right-associative: 2^3^2 = 2^9
//! primary := amount | '(' sum ')'
//! amount  := number                        app.calculate
//!          | CODE? number CODE?            app.money_calculate (one code at most)
//! number  := digits ('.' digits?)? exp? | '.' digits exp?
//! exp     := ('e' | 'E') ('+' | '-')? digits
//! ```
//!
//! `^` binds tighter than a sign (`-2^2` is -4) and takes a whole exponent
//! from 0 to 1000. `%` is the remainder, with the sign of the dividend as in
//! Rust (`-7 % 3` is -1). `×`, `÷` and `−` are read as `*`, `/` and `-`
//! because models copy them from pages. Positions in messages are byte
//! offsets into the expression.
//!
//! The parser evaluates as it goes, with no tree, so `1+1+…` never recurses;
//! only signs, `^` and parentheses recurse and together they may nest 64
//! deep. An arithmetic failure (division by zero, overflow) is kept until the
//! whole expression has parsed, so a syntax error anywhere is reported first.

use super::currency;
use super::{AppError, AppErrorCode};
use rust_decimal::Decimal;

/// The longest expression, in bytes.
pub(super) const MAX_BYTES: usize = 1000;
/// How deep signs, `^` and parentheses may nest.
pub(super) const MAX_DEPTH: usize = 64;
/// The largest exponent of `^`. Far beyond what fits (2^96 overflows), it only
/// keeps the square-and-multiply loop short for bases like 1 or 0.5.
pub(super) const MAX_POWER: u32 = 1000;

/// What a word in the expression may be.
#[derive(Debug, Clone, Copy)]
pub(super) enum Mode<'a> {
    /// `app.calculate`: numbers only.
    Plain,
    /// `app.money_calculate`: amounts may carry this ISO 4217 code (known,
    /// upper case) and no other.
    Money(&'a str),
}

/// Evaluates `expression` exactly. The value is never negative zero.
pub(super) fn evaluate(expression: &str, mode: Mode<'_>) -> Result<Decimal, AppError> {
    if expression.len() > MAX_BYTES {
        return Err(invalid(format!(
            "the expression is {} bytes; the limit is {MAX_BYTES}",
            expression.len()
        )));
    }
    let tokens = lex(expression)?;
    if tokens.is_empty() {
        return Err(invalid("the expression is empty"));
    }
    let mut parser = Parser {
        tokens,
        next: 0,
        end: Token {
            kind: Kind::End,
            pos: expression.len(),
            text: "",
        },
        depth: 0,
        mode,
        failed: None,
    };
    let value = parser.sum()?;
    let token = parser.peek();
    match token.kind {
        Kind::End => {}
        Kind::Close => {
            return Err(invalid(format!(
                "unexpected ')' at position {}: there is no '(' to close",
                token.pos
            )))
        }
        _ => {
            return Err(invalid(format!(
                "unexpected {} at position {}, expected an operator or the end of the expression{}",
                token.describe(),
                token.pos,
                parser.word_hint(token)
            )))
        }
    }
    match parser.failed {
        Some(error) => Err(error),
        None => Ok(positive_zero(value)),
    }
}

/// `-0` prints as `-0`; nobody wants to read that.
pub(super) fn positive_zero(value: Decimal) -> Decimal {
    if value.is_zero() {
        Decimal::ZERO
    } else {
        value
    }
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::new(AppErrorCode::InvalidExpression, message)
}

fn out_of_range(what: impl std::fmt::Display) -> AppError {
    AppError::new(
        AppErrorCode::Overflow,
        format!(
            "{what} is beyond the range of exact decimal arithmetic (±{})",
            Decimal::MAX
        ),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

impl Op {
    fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
            Op::Rem => '%',
            Op::Pow => '^',
        }
    }
}

#[derive(Debug, Clone)]
enum Kind<'a> {
    /// A literal's value, or why it has none (kept, like any arithmetic
    /// failure, until the syntax is known to be fine).
    Number(Result<Decimal, AppError>),
    Word(&'a str),
    Op(Op),
    Open,
    Close,
    End,
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Kind<'a>,
    /// Byte offset of the token's first byte.
    pos: usize,
    /// The token as written, for messages.
    text: &'a str,
}

impl Token<'_> {
    fn describe(&self) -> String {
        match self.kind {
            Kind::End => "the end of the expression".to_string(),
            _ => format!("'{}'", self.text),
        }
    }
}

fn lex(src: &str) -> Result<Vec<Token<'_>>, AppError> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let single = |kind| Token {
            kind,
            pos: i,
            text: src.get(i..i + 1).unwrap_or_default(),
        };
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'(' | b')' => {
                let kind = match byte {
                    b'+' => Kind::Op(Op::Add),
                    b'-' => Kind::Op(Op::Sub),
                    b'*' => Kind::Op(Op::Mul),
                    b'/' => Kind::Op(Op::Div),
                    b'%' => Kind::Op(Op::Rem),
                    b'^' => Kind::Op(Op::Pow),
                    b'(' => Kind::Open,
                    _ => Kind::Close,
                };
                tokens.push(single(kind));
                i += 1;
            }
            b'0'..=b'9' | b'.' => {
                let (token, end) = number(src, i)?;
                tokens.push(token);
                i = end;
            }
            b if b.is_ascii_alphabetic() => {
                let len = bytes
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|b| b.is_ascii_alphabetic())
                    .count();
                let text = src.get(i..i + len).unwrap_or_default();
                tokens.push(Token {
                    kind: Kind::Word(text),
                    pos: i,
                    text,
                });
                i += len;
            }
            b',' => {
                return Err(invalid(format!(
                    "unexpected ',' at position {i}: write numbers without thousands separators \
                     and with '.' as the decimal point (1234.5, not 1,234.5)"
                )))
            }
            _ => {
                // Only ASCII is stepped over byte by byte, so `i` is on a
                // character boundary here.
                let Some(ch) = src.get(i..).and_then(|rest| rest.chars().next()) else {
                    return Err(invalid(format!("unexpected byte at position {i}")));
                };
                let width = ch.len_utf8();
                let text = src.get(i..i + width).unwrap_or_default();
                let kind = match ch {
                    '×' => Some(Kind::Op(Op::Mul)),
                    '÷' => Some(Kind::Op(Op::Div)),
                    '−' => Some(Kind::Op(Op::Sub)),
                    _ if ch.is_whitespace() => None,
                    '$' | '€' | '£' | '¥' | '₹' | '₩' | '₽' | '₺' | '₪' | '₫' | '¢' => {
                        return Err(invalid(format!(
                            "unexpected '{ch}' at position {i}: currency symbols are ambiguous; \
                             write the ISO 4217 code instead (19.99 USD) with app.money_calculate"
                        )))
                    }
                    _ => return Err(invalid(format!("unexpected '{ch}' at position {i}"))),
                };
                if let Some(kind) = kind {
                    tokens.push(Token { kind, pos: i, text });
                }
                i += width;
            }
        }
    }
    Ok(tokens)
}

/// Lexes the number starting at `start`; returns it and where it ends. The
/// literal is turned into a decimal exactly, without going through `f64`.
fn number(src: &str, start: usize) -> Result<(Token<'_>, usize), AppError> {
    let bytes = src.as_bytes();
    let digits_from = |from: usize| {
        bytes
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int_len = digits_from(start);
    let mut end = start + int_len;
    let mut frac = (end, end);
    if bytes.get(end) == Some(&b'.') {
        let frac_len = digits_from(end + 1);
        frac = (end + 1, end + 1 + frac_len);
        end = frac.1;
        if int_len == 0 && frac_len == 0 {
            return Err(invalid(format!(
                "unexpected '.' at position {start}, expected a number"
            )));
        }
    }
    if bytes.get(end) == Some(&b'.') {
        return Err(invalid(format!(
            "unexpected '.' at position {end}: a number has one decimal point"
        )));
    }
    // An exponent only when digits follow, so that `5e` or `5 EUR` stay words.
    let mut exponent: (bool, u32) = (false, 0);
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = matches!(bytes.get(end + 1), Some(b'+' | b'-'));
        let digits_at = end + 1 + usize::from(sign);
        let exp_len = digits_from(digits_at);
        if exp_len > 0 {
            let negative = bytes.get(end + 1) == Some(&b'-');
            // Saturating: any exponent past the decimal range fails the same way.
            let magnitude = bytes
                .get(digits_at..digits_at + exp_len)
                .unwrap_or_default()
                .iter()
                .fold(0u32, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u32::from(d - b'0'))
                });
            exponent = (negative, magnitude);
            end = digits_at + exp_len;
        }
    }
    let text = src.get(start..end).unwrap_or_default();
    let int = bytes.get(start..start + int_len).unwrap_or_default();
    let frac = bytes.get(frac.0..frac.1).unwrap_or_default();
    let value = literal(int, frac, exponent, start);
    Ok((
        Token {
            kind: Kind::Number(value),
            pos: start,
            text,
        },
        end,
    ))
}

/// The exact value of `int.frac × 10^±exp`.
fn literal(
    int: &[u8],
    frac: &[u8],
    (exp_negative, exp): (bool, u32),
    pos: usize,
) -> Result<Decimal, AppError> {
    let too_large = || out_of_range(format!("the number at position {pos}"));
    // Trailing zeros of the fraction do not change the value; dropping them
    // keeps `1.000…0` (any length) exact.
    let frac_len = frac.iter().rposition(|&d| d != b'0').map_or(0, |at| at + 1);
    let frac = frac.get(..frac_len).unwrap_or_default();
    let mut mantissa: u128 = 0;
    for &digit in int.iter().chain(frac) {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(digit - b'0')))
            .ok_or_else(too_large)?;
    }
    if mantissa == 0 {
        return Ok(Decimal::ZERO);
    }
    let mut scale = u32::try_from(frac.len()).unwrap_or(u32::MAX);
    if exp_negative {
        scale = scale.saturating_add(exp);
    } else {
        let shift = exp.min(scale);
        scale -= shift;
        mantissa = 10u128
            .checked_pow(exp - shift)
            .and_then(|power| mantissa.checked_mul(power))
            .ok_or_else(too_large)?;
    }
    while scale > Decimal::MAX_SCALE && mantissa % 10 == 0 {
        mantissa /= 10;
        scale -= 1;
    }
    if scale > Decimal::MAX_SCALE {
        return Err(invalid(format!(
            "the number at position {pos} has more than {} decimal places, \
             the most exact decimal arithmetic holds",
            Decimal::MAX_SCALE
        )));
    }
    let mantissa = i128::try_from(mantissa).map_err(|_| too_large())?;
    Decimal::try_from_i128_with_scale(mantissa, scale).map_err(|_| too_large())
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    next: usize,
    /// Returned by `peek` past the last token.
    end: Token<'a>,
    depth: usize,
    mode: Mode<'a>,
    /// The first arithmetic failure, reported once the syntax is known good.
    failed: Option<AppError>,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token<'a> {
        self.tokens.get(self.next).unwrap_or(&self.end)
    }

    fn advance(&mut self) {
        self.next += 1;
    }

    /// Counts one level of recursion; the bound is what keeps a hostile
    /// expression from overflowing the stack.
    fn enter(&mut self, pos: usize) -> Result<(), AppError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(invalid(format!(
                "the expression nests deeper than {MAX_DEPTH} levels at position {pos}"
            )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Keeps the first arithmetic failure and goes on with a stand-in value,
    /// so that the rest of the syntax is still checked.
    fn settle(&mut self, result: Result<Decimal, AppError>) -> Decimal {
        match result {
            Ok(value) => value,
            Err(error) => {
                if self.failed.is_none() {
                    self.failed = Some(error);
                }
                Decimal::ZERO
            }
        }
    }

    fn sum(&mut self) -> Result<Decimal, AppError> {
        let mut value = self.product()?;
        loop {
            let (op, pos) = match self.peek() {
                Token {
                    kind: Kind::Op(op @ (Op::Add | Op::Sub)),
                    pos,
                    ..
                } => (*op, *pos),
                _ => return Ok(value),
            };
            self.advance();
            let rhs = self.product()?;
            value = self.settle(apply(op, pos, value, rhs));
        }
    }

    fn product(&mut self) -> Result<Decimal, AppError> {
        let mut value = self.unary()?;
        loop {
            let (op, pos) = match self.peek() {
                Token {
                    kind: Kind::Op(op @ (Op::Mul | Op::Div | Op::Rem)),
                    pos,
                    ..
                } => (*op, *pos),
                _ => return Ok(value),
            };
            self.advance();
            if op == Op::Rem {
                self.not_a_percent(pos)?;
            }
            let rhs = self.unary()?;
            value = self.settle(apply(op, pos, value, rhs));
        }
    }

    fn unary(&mut self) -> Result<Decimal, AppError> {
        let (op, pos) = match self.peek() {
            Token {
                kind: Kind::Op(op @ (Op::Add | Op::Sub)),
                pos,
                ..
            } => (*op, *pos),
            _ => return self.power(),
        };
        self.advance();
        self.enter(pos)?;
        let value = self.unary()?;
        self.leave();
        Ok(if op == Op::Sub { -value } else { value })
    }

    fn power(&mut self) -> Result<Decimal, AppError> {
        let base = self.primary()?;
        let pos = match self.peek() {
            Token {
                kind: Kind::Op(Op::Pow),
                pos,
                ..
            } => *pos,
            _ => return Ok(base),
        };
        self.advance();
        self.enter(pos)?;
        let exponent = self.unary()?;
        self.leave();
        Ok(self.settle(power(base, exponent, pos)))
    }

    fn primary(&mut self) -> Result<Decimal, AppError> {
        let token = self.peek().clone();
        match token.kind {
            Kind::Number(value) => {
                self.advance();
                let value = self.settle(value);
                if let (Mode::Money(_), Kind::Word(code)) = (self.mode, &self.peek().kind) {
                    let (code, pos) = (*code, self.peek().pos);
                    self.check_currency(code, pos)?;
                    self.advance();
                }
                Ok(value)
            }
            Kind::Word(code) => {
                if matches!(self.mode, Mode::Plain) {
                    return Err(invalid(format!(
                        "expected a number at position {}, found '{code}'{}",
                        token.pos,
                        self.word_hint(&token)
                    )));
                }
                self.check_currency(code, token.pos)?;
                self.advance();
                let amount = self.peek().clone();
                let Kind::Number(value) = amount.kind else {
                    return Err(invalid(format!(
                        "expected a number after '{code}' at position {}, found {}",
                        amount.pos,
                        amount.describe()
                    )));
                };
                self.advance();
                if let Kind::Word(_) = self.peek().kind {
                    return Err(invalid(format!(
                        "unexpected {} at position {}: the amount already has its currency '{code}'",
                        self.peek().describe(),
                        self.peek().pos
                    )));
                }
                Ok(self.settle(value))
            }
            Kind::Open => {
                self.advance();
                self.enter(token.pos)?;
                let value = self.sum()?;
                self.leave();
                let close = self.peek();
                if !matches!(close.kind, Kind::Close) {
                    return Err(invalid(format!(
                        "expected ')' at position {} to close the '(' at position {}, found {}",
                        close.pos,
                        token.pos,
                        close.describe()
                    )));
                }
                self.advance();
                Ok(value)
            }
            _ => Err(invalid(format!(
                "expected a number at position {}, found {}",
                token.pos,
                token.describe()
            ))),
        }
    }

    /// Models write `15%` meaning a percentage. `%` is the remainder, so
    /// `50% + 3` would quietly be `50 % (+3)`: a sign or nothing after `%`
    /// is refused with a hint instead (write `7 % (-3)` for a negative
    /// divisor).
    fn not_a_percent(&self, pos: usize) -> Result<(), AppError> {
        let next = self.peek();
        if matches!(next.kind, Kind::Op(_) | Kind::Close | Kind::End) {
            return Err(invalid(format!(
                "expected a number at position {} after the '%' at position {pos}, found {}; \
                 '%' is the remainder, not a percentage (15% of 80 is 80 * 15 / 100), and a \
                 negative divisor needs parentheses: 7 % (-3)",
                next.pos,
                next.describe()
            )));
        }
        Ok(())
    }

    /// In `app.money_calculate`, a code must be known and be the currency
    /// argument's: the tool has no exchange rates.
    fn check_currency(&self, word: &str, pos: usize) -> Result<(), AppError> {
        let Mode::Money(currency) = self.mode else {
            return Ok(());
        };
        let code = word.to_ascii_uppercase();
        if currency::exponent(&code).is_none() {
            return Err(AppError::new(
                AppErrorCode::UnknownCurrency,
                format!(
                    "'{word}' at position {pos} is not an ISO 4217 currency code \
                     (write a code such as USD or EUR)"
                ),
            ));
        }
        if code != currency {
            return Err(AppError::new(
                AppErrorCode::MixedCurrencies,
                format!(
                    "'{word}' at position {pos} is not {currency}, the currency argument; \
                     app.money_calculate does not convert between currencies"
                ),
            ));
        }
        Ok(())
    }

    /// Why a word is out of place, when that can be said better.
    fn word_hint(&self, token: &Token<'_>) -> &'static str {
        match (self.mode, &token.kind) {
            (Mode::Plain, Kind::Word(word))
                if currency::exponent(&word.to_ascii_uppercase()).is_some() =>
            {
                " (amounts in a currency go to app.money_calculate)"
            }
            (Mode::Plain, Kind::Word(_)) => {
                " (names, functions and variables are not part of the expression language)"
            }
            _ => "",
        }
    }
}

fn apply(op: Op, pos: usize, lhs: Decimal, rhs: Decimal) -> Result<Decimal, AppError> {
    let what = || format!("the result of '{}' at position {pos}", op.symbol());
    let by_zero = |verb: &str| {
        AppError::new(
            AppErrorCode::DivisionByZero,
            format!("{verb} by zero at position {pos}"),
        )
    };
    match op {
        Op::Add => lhs.checked_add(rhs),
        Op::Sub => lhs.checked_sub(rhs),
        Op::Mul => lhs.checked_mul(rhs),
        Op::Div if rhs.is_zero() => return Err(by_zero("division")),
        Op::Div => lhs.checked_div(rhs),
        Op::Rem if rhs.is_zero() => return Err(by_zero("remainder")),
        Op::Rem => lhs.checked_rem(rhs),
        Op::Pow => return power(lhs, rhs, pos),
    }
    .ok_or_else(|| out_of_range(what()))
}

/// `base^exponent` for a whole exponent in 0..=MAX_POWER, by square and
/// multiply with checked steps (`rust_decimal`'s own `powu` needs the `maths`
/// feature and is not checked the same way).
fn power(base: Decimal, exponent: Decimal, pos: usize) -> Result<Decimal, AppError> {
    let n = u32::try_from(exponent)
        .ok()
        .filter(|&n| exponent.is_integer() && n <= MAX_POWER)
        .ok_or_else(|| {
            invalid(format!(
                "the exponent of '^' at position {pos} must be a whole number from 0 to \
                 {MAX_POWER}, got {}",
                positive_zero(exponent)
            ))
        })?;
    let too_large = || out_of_range(format!("{base}^{n} at position {pos}"));
    let mut result = Decimal::ONE;
    let mut square = base;
    let mut rest = n;
    while rest > 0 {
        if rest & 1 == 1 {
            result = result.checked_mul(square).ok_or_else(too_large)?;
        }
        rest >>= 1;
        if rest > 0 {
            square = square.checked_mul(square).ok_or_else(too_large)?;
        }
    }
    Ok(result)
}
