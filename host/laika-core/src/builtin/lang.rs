//! The page's language, guessed from its function words, and the Snowball
//! stemmer for it, so "restoring", "restored" and "restore" match, in the
//! languages Snowball knows. Pages in other languages (or too short to tell)
//! use English stemming, which leaves most non-Latin words unchanged.

use rust_stemmers::{Algorithm, Stemmer};

/// Very common function words per language: enough to tell the languages
/// apart on a few hundred words, and dropped from the index like English
/// stopwords.
const FUNCTION_WORDS: &[(Algorithm, &[&str])] = &[
    (
        Algorithm::English,
        &["the", "and", "of", "to", "is", "that", "with", "for", "was"],
    ),
    (
        Algorithm::German,
        &[
            "der", "die", "und", "das", "ist", "nicht", "mit", "sich", "auf", "ein", "eine", "den",
            "dem", "des", "auch", "wird", "werden",
        ],
    ),
    (
        Algorithm::French,
        &[
            "le", "la", "les", "et", "des", "est", "une", "dans", "pour", "pas", "qui", "sur",
            "du", "au", "aux", "avec",
        ],
    ),
    (
        Algorithm::Spanish,
        &[
            "el", "los", "las", "y", "es", "una", "del", "por", "para", "con", "que", "se", "al",
            "como", "pero",
        ],
    ),
    (
        Algorithm::Portuguese,
        &[
            "o", "os", "as", "e", "um", "uma", "do", "da", "dos", "das", "não", "em", "com",
            "para", "que", "no", "na",
        ],
    ),
    (
        Algorithm::Italian,
        &[
            "il", "gli", "di", "che", "è", "per", "una", "non", "sono", "della", "con", "del",
            "nel", "alla",
        ],
    ),
    (
        Algorithm::Dutch,
        &[
            "de", "het", "een", "en", "van", "niet", "zijn", "op", "dat", "voor", "met", "ook",
            "wordt",
        ],
    ),
    (
        Algorithm::Swedish,
        &[
            "och", "att", "det", "som", "är", "för", "med", "inte", "har", "av", "till",
        ],
    ),
    (
        Algorithm::Russian,
        &[
            "и", "в", "не", "на", "что", "с", "как", "по", "это", "для", "из", "от",
        ],
    ),
    (
        Algorithm::Turkish,
        &[
            "ve", "bir", "bu", "için", "ile", "çok", "olarak", "daha", "gibi", "olan", "şu", "ama",
            "değil",
        ],
    ),
    (
        Algorithm::Arabic,
        &[
            "في", "من", "على", "إلى", "أن", "عن", "التي", "الذي", "مع", "هذا", "كان", "هذه",
        ],
    ),
];

/// The ISO 639-1 code of a Snowball language (the key of its question words).
fn code_of(algo: Algorithm) -> &'static str {
    match algo {
        Algorithm::German => "de",
        Algorithm::French => "fr",
        Algorithm::Spanish => "es",
        Algorithm::Portuguese => "pt",
        Algorithm::Italian => "it",
        Algorithm::Dutch => "nl",
        Algorithm::Swedish => "sv",
        Algorithm::Russian => "ru",
        Algorithm::Turkish => "tr",
        Algorithm::Arabic => "ar",
        _ => "en",
    }
}

/// How many words are read to guess the language.
const SAMPLE_WORDS: usize = 2000;

/// A language's stemmer and function words.
pub struct Lang {
    stemmer: Stemmer,
    words: &'static [&'static str],
    code: &'static str,
}

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lang").field("code", &self.code).finish()
    }
}

impl Default for Lang {
    fn default() -> Lang {
        Lang::new(Algorithm::English)
    }
}

impl Lang {
    fn new(algo: Algorithm) -> Lang {
        let words = FUNCTION_WORDS
            .iter()
            .find(|(a, _)| *a == algo)
            .map_or(&[][..], |(_, w)| *w);
        Lang {
            stemmer: Stemmer::create(algo),
            words,
            code: code_of(algo),
        }
    }

    /// The language's ISO 639-1 code ("en", "de", …).
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The language whose function words are most frequent in `texts`
    /// (English on a tie or when none occur).
    pub fn detect<'a>(texts: impl IntoIterator<Item = &'a str>) -> Lang {
        let mut counts = [0usize; FUNCTION_WORDS.len()];
        let mut seen = 0usize;
        'outer: for text in texts {
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if word.is_empty() {
                    continue;
                }
                seen += 1;
                if seen > SAMPLE_WORDS {
                    break 'outer;
                }
                let lower = word.to_lowercase();
                for (i, (_, words)) in FUNCTION_WORDS.iter().enumerate() {
                    if words.contains(&lower.as_str()) {
                        if let Some(c) = counts.get_mut(i) {
                            *c += 1;
                        }
                    }
                }
            }
        }
        let best = counts
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
            .map_or(0, |(i, _)| i);
        let algo = FUNCTION_WORDS
            .get(best)
            .filter(|_| counts.get(best).is_some_and(|&c| c > 0))
            .map_or(Algorithm::English, |(a, _)| *a);
        Lang::new(algo)
    }

    /// A function word of this language (lower case).
    pub fn is_function_word(&self, word: &str) -> bool {
        self.words.contains(&word)
    }

    /// The Snowball stem of a lower-case word; numbers and mixed tokens are
    /// left as they are.
    pub fn stem(&self, word: &str) -> String {
        if word.chars().any(|c| c.is_ascii_digit()) {
            // "A380s" is the plural of "A380".
            let bytes = word.as_bytes();
            if let [.., d, b's'] = bytes {
                if d.is_ascii_digit() {
                    return word.get(..word.len() - 1).unwrap_or(word).to_string();
                }
            }
            return word.to_string();
        }
        self.stemmer.stem(word).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_language_and_stems_for_it() {
        let en = Lang::detect(["The crews began restoring power to the homes that were cut off."]);
        assert_eq!(en.stem("restoring"), en.stem("restored"));
        assert_eq!(en.stem("gusting"), "gust");
        let de = Lang::detect(["Die Regierung hat die Stromversorgung in der Stadt und auf dem Land wiederhergestellt."]);
        assert_eq!(de.stem("häuser"), de.stem("häusern"));
        assert!(de.is_function_word("der"));
        let fr = Lang::detect(["Le gouvernement a rétabli le courant dans la ville et les villages pour les habitants."]);
        assert_eq!(fr.stem("habitants"), fr.stem("habitant"));
        // Unknown or empty text: English.
        assert_eq!(Lang::detect([""]).stem("houses"), "hous");
        assert_eq!(en.stem("3.5"), "3.5");
    }
}
