//! Text helpers every task shares: a text on one line, the comparison form of a text,
//! and the names of languages.

use unicode_normalization::UnicodeNormalization;

/// What [`one_line`] does with the spaces inside a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spaces {
    /// Kept as they are: only line breaks, with the spaces around them, become one space
    /// (material for a model, and text quoted back as it was written).
    Kept,
    /// Every run of whitespace becomes one space (text laid out in Markdown).
    Collapsed,
}

/// The text on one line, without leading or trailing whitespace.
pub fn one_line(text: &str, spaces: Spaces) -> String {
    match spaces {
        Spaces::Kept => text
            .split(['\n', '\r'])
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        Spaces::Collapsed => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The comparison form of a text, the one quotes are checked in (see `quotes.rs`): NFKC,
/// lower case, typographic apostrophes and quotation marks made straight, every dash
/// (with the spaces around it) made ` - `, zero-width characters, soft hyphens and
/// asterisks dropped, whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // A space or dash is written once, when the next other character arrives.
    let (mut space, mut dash) = (false, false);
    for c in text.nfkc() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{02BC}' | '`' | '\u{00B4}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}' | '\u{00BB}' => '"',
            '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' | '*' => continue,
            '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' => {
                dash = true;
                continue;
            }
            c if c.is_whitespace() => {
                space = true;
                continue;
            }
            c => c,
        };
        if dash {
            out.push_str(if out.is_empty() { "- " } else { " - " });
        } else if space && !out.is_empty() {
            out.push(' ');
        }
        (space, dash) = (false, false);
        out.extend(c.to_lowercase());
    }
    if dash {
        out.push_str(if out.is_empty() { "-" } else { " -" });
    }
    out
}

/// The English name of a language by its ISO 639-1 code.
pub fn language_name(code: &str) -> Option<&'static str> {
    Some(match code {
        "ar" => "Arabic",
        "bg" => "Bulgarian",
        "bn" => "Bengali",
        "ca" => "Catalan",
        "cs" => "Czech",
        "da" => "Danish",
        "de" => "German",
        "el" => "Greek",
        "en" => "English",
        "es" => "Spanish",
        "et" => "Estonian",
        "fa" => "Persian",
        "fi" => "Finnish",
        "fr" => "French",
        "ga" => "Irish",
        "he" => "Hebrew",
        "hi" => "Hindi",
        "hr" => "Croatian",
        "hu" => "Hungarian",
        "id" => "Indonesian",
        "is" => "Icelandic",
        "it" => "Italian",
        "ja" => "Japanese",
        "ka" => "Georgian",
        "kk" => "Kazakh",
        "ko" => "Korean",
        "lt" => "Lithuanian",
        "lv" => "Latvian",
        "ms" => "Malay",
        "nb" => "Norwegian Bokmål",
        "nl" => "Dutch",
        "nn" => "Norwegian Nynorsk",
        "no" => "Norwegian",
        "pl" => "Polish",
        "pt" => "Portuguese",
        "ro" => "Romanian",
        "ru" => "Russian",
        "sk" => "Slovak",
        "sl" => "Slovenian",
        "sr" => "Serbian",
        "sv" => "Swedish",
        "sw" => "Swahili",
        "ta" => "Tamil",
        "th" => "Thai",
        "tl" => "Tagalog",
        "tr" => "Turkish",
        "uk" => "Ukrainian",
        "ur" => "Urdu",
        "uz" => "Uzbek",
        "vi" => "Vietnamese",
        "zh" => "Chinese",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        assert_eq!(
            normalize("  It’s\u{00A0}a  “mess” —  really…  "),
            "it's a \"mess\" - really..."
        );
        assert_eq!(normalize("e-mail"), "e - mail");
        assert_eq!(normalize("ＦＵＬＬ\u{200B}width"), "fullwidth");
        assert_eq!(normalize("STRASSE Über"), "strasse über");
    }
}
