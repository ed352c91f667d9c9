//! The page's language, guessed from its function words, and the Snowball
//! stemmer for it, so "restoring", "restored" and "restore" match, in the
//! languages Snowball knows. A language Snowball does not know (Indonesian,
//! Polish) is still detected, so its question words are used; its words are
//! cut by a light suffix rule given with it. Pages in no listed language (or
//! too short to tell) use English stemming, which leaves most non-Latin words
//! unchanged.

use rust_stemmers::{Algorithm, Stemmer};

/// A language the page may be in.
struct Language {
    /// ISO 639-1 code: the key of its question words in `questions.json`.
    code: &'static str,
    /// Its Snowball stemmer, if Snowball has one.
    stemmer: Option<Algorithm>,
    /// Without a stemmer: clitics and suffixes cut off a word (the first
    /// that ends it, leaving at least four letters): Indonesian "rumahnya"
    /// ("his house") is "rumah".
    suffixes: &'static [&'static str],
    /// Very common function words: enough to tell the languages apart on a
    /// few hundred words, and dropped from the index like English stopwords.
    words: &'static [&'static str],
}

/// English: the fallback.
const ENGLISH: Language = Language {
    code: "en",
    stemmer: Some(Algorithm::English),
    suffixes: &[],
    words: &["the", "and", "of", "to", "is", "that", "with", "for", "was"],
};

/// The languages detected, English first (it wins ties).
const LANGUAGES: &[Language] = &[
    ENGLISH,
    Language {
        code: "de",
        stemmer: Some(Algorithm::German),
        suffixes: &[],
        words: &[
            "der", "die", "und", "das", "ist", "nicht", "mit", "sich", "auf", "ein", "eine", "den",
            "dem", "des", "auch", "wird", "werden",
        ],
    },
    Language {
        code: "fr",
        stemmer: Some(Algorithm::French),
        suffixes: &[],
        words: &[
            "le", "la", "les", "et", "des", "est", "une", "dans", "pour", "pas", "qui", "sur",
            "du", "au", "aux", "avec",
        ],
    },
    Language {
        code: "es",
        stemmer: Some(Algorithm::Spanish),
        suffixes: &[],
        words: &[
            "el", "los", "las", "y", "es", "una", "del", "por", "para", "con", "que", "se", "al",
            "como", "pero",
        ],
    },
    Language {
        code: "pt",
        stemmer: Some(Algorithm::Portuguese),
        suffixes: &[],
        words: &[
            "o", "os", "as", "e", "um", "uma", "do", "da", "dos", "das", "não", "em", "com",
            "para", "que", "no", "na",
        ],
    },
    Language {
        code: "it",
        stemmer: Some(Algorithm::Italian),
        suffixes: &[],
        words: &[
            "il", "gli", "di", "che", "è", "per", "una", "non", "sono", "della", "con", "del",
            "nel", "alla",
        ],
    },
    Language {
        code: "nl",
        stemmer: Some(Algorithm::Dutch),
        suffixes: &[],
        words: &[
            "de", "het", "een", "en", "van", "niet", "zijn", "op", "dat", "voor", "met", "ook",
            "wordt",
        ],
    },
    Language {
        code: "sv",
        stemmer: Some(Algorithm::Swedish),
        suffixes: &[],
        words: &[
            "och", "att", "det", "som", "är", "för", "med", "inte", "har", "av", "till",
        ],
    },
    Language {
        code: "ru",
        stemmer: Some(Algorithm::Russian),
        suffixes: &[],
        words: &[
            "и", "в", "не", "на", "что", "с", "как", "по", "это", "для", "из", "от",
        ],
    },
    Language {
        code: "tr",
        stemmer: Some(Algorithm::Turkish),
        suffixes: &[],
        words: &[
            "ve", "bir", "bu", "için", "ile", "çok", "olarak", "daha", "gibi", "olan", "şu", "ama",
            "değil",
        ],
    },
    Language {
        code: "ar",
        stemmer: Some(Algorithm::Arabic),
        suffixes: &[],
        words: &[
            "في", "من", "على", "إلى", "أن", "عن", "التي", "الذي", "مع", "هذا", "كان", "هذه",
        ],
    },
    Language {
        code: "fi",
        stemmer: Some(Algorithm::Finnish),
        suffixes: &[],
        words: &[
            "ja", "on", "ei", "että", "oli", "kun", "mutta", "myös", "hän", "tai", "ovat", "joka",
            "jo", "vain", "sen", "mukaan",
        ],
    },
    // Polish case endings, longest first: "mostu", "mostem" → "most".
    Language {
        code: "pl",
        stemmer: None,
        suffixes: &[
            "ami", "ach", "ego", "emu", "owi", "om", "ów", "em", "ie", "ej", "ą", "ę", "y", "a",
            "u", "i", "e", "o",
        ],
        words: &[
            "i", "w", "nie", "na", "się", "z", "że", "do", "jest", "jak", "po", "od", "ale",
            "przez", "dla", "oraz", "został", "była",
        ],
    },
    Language {
        code: "id",
        stemmer: None,
        suffixes: &["nya", "lah", "kah", "pun"],
        words: &[
            "yang", "dan", "di", "ke", "dari", "ini", "itu", "dengan", "untuk", "tidak", "pada",
            "adalah", "dalam", "akan", "juga", "sudah", "telah", "oleh", "karena",
        ],
    },
];

/// How many words are read to guess the language.
const SAMPLE_WORDS: usize = 2000;

/// A language's stemmer and function words.
pub struct Lang {
    stemmer: Option<Stemmer>,
    language: &'static Language,
}

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lang")
            .field("code", &self.language.code)
            .finish()
    }
}

impl Default for Lang {
    fn default() -> Lang {
        Lang::new(0)
    }
}

impl Lang {
    /// The language at `LANGUAGES[i]` (English when out of range).
    fn new(i: usize) -> Lang {
        let language = LANGUAGES.get(i).unwrap_or(&ENGLISH);
        Lang {
            stemmer: language.stemmer.map(Stemmer::create),
            language,
        }
    }

    /// The language's ISO 639-1 code ("en", "de", …).
    pub fn code(&self) -> &'static str {
        self.language.code
    }

    /// The language whose function words are most frequent in `texts`
    /// (English on a tie or when none occur).
    pub fn detect<'a>(texts: impl IntoIterator<Item = &'a str>) -> Lang {
        let mut counts = [0usize; LANGUAGES.len()];
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
                for (i, l) in LANGUAGES.iter().enumerate() {
                    if l.words.contains(&lower.as_str()) {
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
            .filter(|(_, &c)| c > 0)
            .map_or(0, |(i, _)| i);
        Lang::new(best)
    }

    /// A function word of this language (lower case).
    pub fn is_function_word(&self, word: &str) -> bool {
        self.language.words.contains(&word)
    }

    /// The stem of a lower-case word; numbers and mixed tokens are left as
    /// they are.
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
        match &self.stemmer {
            Some(stemmer) => stemmer.stem(word).into_owned(),
            None => self
                .language
                .suffixes
                .iter()
                .find_map(|s| {
                    word.strip_suffix(s)
                        .filter(|base| base.chars().count() >= 4)
                })
                .unwrap_or(word)
                .to_string(),
        }
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

    #[test]
    fn detects_a_language_without_a_snowball_stemmer() {
        let id = Lang::detect(["Jembatan baru di atas sungai itu sudah selesai dan akan dibuka oleh wali kota pada hari Jumat."]);
        assert_eq!(id.code(), "id");
        assert!(id.is_function_word("yang"));
        // Clitics are cut; short words and words without one are kept.
        assert_eq!(id.stem("rumahnya"), "rumah");
        assert_eq!(id.stem("jembatan"), "jembatan");
        assert_eq!(id.stem("dia"), "dia");
        let fi = Lang::detect([
            "Uusi silta on valmis, ja se avattiin myös jalankulkijoille, mutta ei autoille.",
        ]);
        assert_eq!(fi.code(), "fi");
        assert_eq!(fi.stem("sillan"), fi.stem("sillat"));
        let pl = Lang::detect([
            "Nowy most na rzece został otwarty w piątek i jest już dostępny dla mieszkańców.",
        ]);
        assert_eq!(pl.code(), "pl");
        assert_eq!(pl.stem("mostu"), pl.stem("mostem"));
        // English words are not stemmed as Indonesian.
        assert_eq!(
            Lang::detect(["The bridge is open and the city is glad."]).code(),
            "en"
        );
    }
}
