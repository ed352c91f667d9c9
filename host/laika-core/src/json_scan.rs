//! One pass over JSON-ish bytes that skips the contents of strings, so callers
//! can count brackets without being fooled by `"{"` in a string. Works on any
//! bytes, valid JSON or not.

/// Yields `(offset, byte)` for every byte outside string literals (the
/// opening and closing quotes themselves are not yielded).
pub fn structural_bytes(bytes: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut in_string = false;
    let mut escaped = false;
    bytes.iter().enumerate().filter_map(move |(offset, &b)| {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            return None;
        }
        if b == b'"' {
            in_string = true;
            return None;
        }
        Some((offset, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_strings_and_escapes() {
        let got: String = structural_bytes(br#"{"a{": "\"}", "b": [1]}"#)
            .map(|(_, b)| b as char)
            .filter(|c| !c.is_whitespace())
            .collect();
        assert_eq!(got, "{:,:[1]}");
    }

    #[test]
    fn offsets_are_positions_in_the_input() {
        let got: Vec<usize> = structural_bytes(br#""x"{"#).map(|(o, _)| o).collect();
        assert_eq!(got, vec![3]);
    }
}
