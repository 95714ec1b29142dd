//! Personal values with a shape: e-mail addresses, phone numbers, payment cards (Luhn),
//! IBANs (mod 97), IP addresses and URLs that lead to a person. Each is found as a
//! candidate by its shape and then checked, so that order numbers, dates, prices and
//! version numbers are left alone.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

use super::{Finding, Kind};

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}")
        .expect("the e-mail pattern")
});

static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:https?://|www\.)[^\s<>\x22'()\[\]{}]+|(?-u:\b)(?:[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?\.)+(?:com|org|net|io|social|de|fr|es|uk|me|dev|app|ai|eu|it|nl|ch|at|be|info|biz|tv|ee|online|site)/[^\s<>\x22'()\[\]{}]*",
    )
    .expect("the URL pattern")
});

/// An address written so that a machine would not read it: `a.jove (at) gill (dot) com`,
/// `anna at example dot org`, `anna[at]example[dot]org`. The `at` and the `dot` must both
/// be there, the last part a top-level domain's shape, so that "meet at noon" is left.
static OBFUSCATED_EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    let at = r"(?:\s*[\(\[\{<]\s*(?:at|@|arroba)\s*[\)\]\}>]\s*|\s+(?:at|arroba|arobase|chez|bei)\s+)";
    let dot = r"(?:\s*[\(\[\{<]\s*(?:dot|\.|punto|punkt|point|ponto)\s*[\)\]\}>]\s*|\s+(?:dot|punto|punkt|point|ponto)\s+|\.)";
    let joint = r"(?:\s+(?:underscore|dash|hyphen|guion|guión|unterstrich)\s+)";
    Regex::new(&format!(
        r"(?i)(?-u:\b)[a-z0-9][a-z0-9._%+\-]*(?:(?:{dot}|{joint})[a-z0-9][a-z0-9._%+\-]*)*{at}[a-z0-9][a-z0-9\-]*(?:{dot}[a-z0-9][a-z0-9\-]*)*{dot}(?:com|org|net|edu|gov|io|co|de|fr|es|it|nl|uk|br|in|pt|ch|at|be|eu|info|biz|me|dev|app|ai|mx|ar|cl|pl|ie|nz|au|ca)(?:{dot}[a-z]{{2}})?(?-u:\b)"
    ))
    .expect("the obfuscated e-mail pattern")
});

/// What an obfuscated address needs somewhere in the text, cheap to look for first.
static OBFUSCATED_HINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[\s\(\[\{<](?:dot|punto|punkt|point|ponto)[\s\)\]\}>]|[\(\[\{<]\s*(?:at|arroba)\s*[\)\]\}>]|\s(?:at|arroba|arobase)\s+[a-z0-9\-]+\.[a-z]").expect("the obfuscation hint")
});

/// Digits in groups separated by a space or a dash: a card's shape.
static CARD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9](?:[ \-]?[0-9]){12,18}(?-u:\b)").expect("the card pattern"));

static IPV4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?-u:\b)").expect("the IPv4 pattern"));

/// Runs of hexadecimal digits and colons with two colons at least: an IPv6 candidate.
static IPV6: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)[0-9a-f:]*:[0-9a-f]*:[0-9a-f:.]*").expect("the IPv6 pattern"));

/// An IBAN's start: a country code and two check digits.
static IBAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?-u:\b)[A-Za-z]{2}[0-9]{2}").expect("the IBAN pattern"));

/// Phone numbers: international (`+` or `00`), national with a trunk `0`, North American
/// (3-3-4) and Spanish (nine digits from 6 to 9) shapes.
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:\+|(?-u:\b)00)[1-9][0-9]{0,2}(?:[ \-./]?\(?[0-9]{1,5}\)?){2,7}",
        r"|(?:\(0[0-9]{1,4}\)|(?-u:\b)0[0-9]{1,4})(?:[ \-./]?[0-9]{1,5}){1,6}",
        r"|(?:\([0-9]{3}\) ?|(?-u:\b)[0-9]{3}[\-. ])[0-9]{3}[\-. ][0-9]{4}(?-u:\b)",
        r"|(?-u:\b)[6789][0-9]{2}(?: [0-9]{3} [0-9]{3}| [0-9]{2} [0-9]{2} [0-9]{2})(?-u:\b)",
        r"|(?-u:\b)[89][0-9] [0-9]{3} [0-9]{2} [0-9]{2}(?-u:\b)",
        // Brazil without its parentheses (42 6307-4077), and ten digits in one run, as
        // Indian and North American numbers are often said.
        r"|(?-u:\b)[1-9][0-9] 9?[2-9][0-9]{3}-[0-9]{4}(?-u:\b)",
        r"|(?-u:\b)[2-9][0-9]{9}(?-u:\b)",
    ))
    .expect("the phone pattern")
});

/// A date written with numbers only, which a national phone pattern could take.
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[0-9]{1,2}[./\-][0-9]{1,2}[./\-][0-9]{2,4}|[0-9]{4}[./\-][0-9]{1,2}[./\-][0-9]{1,2})$")
        .expect("the date pattern")
});

/// Words before a number that say it is not a phone number.
const NOT_A_PHONE: &[&str] = &[
    "order",
    "invoice",
    "ticket",
    "ref",
    "reference",
    "case",
    "no",
    "nr",
    "number",
    "id",
    "sku",
    "item",
    "account",
    "bestellung",
    "bestellnummer",
    "rechnung",
    "rechnungsnummer",
    "auftrag",
    "kundennummer",
    "commande",
    "facture",
    "référence",
    "numéro",
    "pedido",
    "factura",
    "referencia",
    "número",
    "version",
    "build",
    "tracking",
];

pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    // Most speech holds none of the characters these shapes need: one pass over the
    // bytes says which patterns are worth running.
    let (mut at, mut slash, mut colons, mut digits) = (false, false, 0, false);
    for byte in text.bytes() {
        match byte {
            b'@' => at = true,
            b'/' | b'.' => slash = true,
            b':' => colons += 1,
            b'0'..=b'9' => digits = true,
            _ => {}
        }
    }
    if at {
        for found in EMAIL.find_iter(text) {
            out.push(Finding::new(Kind::Email, found.start(), found.end()));
        }
    }
    if OBFUSCATED_HINT.is_match(text) {
        for found in OBFUSCATED_EMAIL.find_iter(text) {
            // One whose `at` is a plain `@` and dots are plain was found above.
            // "the article at help.example.com/export" is a page, not an address.
            let a_page = text[found.end()..].starts_with('/');
            if !a_page && (!EMAIL.is_match(found.as_str()) || found.as_str().contains(char::is_whitespace)) {
                out.push(Finding::new(Kind::Email, found.start(), found.end()));
            }
        }
    }
    if slash {
        for found in URL.find_iter(text) {
            let url = found.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            if personal_url(url) {
                out.push(Finding::new(Kind::Url, found.start(), found.start() + url.len()));
            }
        }
    }
    if colons >= 2 {
        find_ipv6(text, out);
    }
    if !digits {
        return;
    }
    find_ibans(text, out);
    for found in CARD.find_iter(text) {
        if is_card(found.as_str()) {
            out.push(Finding::new(Kind::Card, found.start(), found.end()));
        }
    }
    for found in IPV4.find_iter(text) {
        let before = &text[..found.start()];
        let after = &text[found.end()..];
        // 1.2.3.4.5 is a version, not an address.
        let version = before.ends_with('.') && before[..before.len() - 1].ends_with(|c: char| c.is_ascii_digit())
            || after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit());
        if !version && !after_version_word(before) && found.as_str().parse::<Ipv4Addr>().is_ok() {
            out.push(Finding::new(Kind::Ip, found.start(), found.end()));
        }
    }
    for found in PHONE.find_iter(text) {
        let number = found.as_str().trim_end_matches(['.', '-', '/', ' ', '(']);
        let after = &text[found.start() + number.len()..];
        if is_phone(number, &text[..found.start()], after) {
            out.push(Finding::new(Kind::Phone, found.start(), found.start() + number.len()));
        }
    }
}

/// Whether the words just before a dotted number say it is a version: "version 1.2.3.4",
/// "we're on 7.14.8.6", "wir waren auf 2.6.4.11".
fn after_version_word(before: &str) -> bool {
    let tail = before.trim_end();
    let from = (tail.len().saturating_sub(24)..=tail.len())
        .find(|&at| tail.is_char_boundary(at))
        .unwrap_or(tail.len());
    let tail = tail[from..].to_lowercase();
    let last = tail.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    [
        "version", "versión", "versão", "v", "build", "release", "firmware", "on", "auf", "en", "na", "la", "sur",
    ]
    .contains(&last)
        || tail.contains("version")
        || tail.contains("versión")
        || tail.contains("versão")
}

fn find_ipv6(text: &str, out: &mut Vec<Finding>) {
    for found in IPV6.find_iter(text) {
        let candidate = found.as_str().trim_end_matches(['.', ':']);
        let start = found.start();
        // `::1` and the like start with a colon; a time (10:30:00) never parses.
        let trimmed = if candidate.starts_with(':') && !candidate.starts_with("::") {
            &candidate[1..]
        } else {
            candidate
        };
        let offset = candidate.len() - trimmed.len();
        if trimmed.matches(':').count() >= 2 && trimmed.parse::<Ipv6Addr>().is_ok() {
            out.push(Finding::new(Kind::Ip, start + offset, start + offset + trimmed.len()));
        }
    }
}

/// Whether a candidate is a phone number: enough digits for one, not a date, not a
/// price, not a number some word before it names as something else.
fn is_phone(number: &str, before: &str, after: &str) -> bool {
    // A piece of a longer run of digit groups (a tracking or company number) is not one.
    let digit_then_gap = |text: &mut dyn Iterator<Item = char>| {
        let mut gap = false;
        for c in text {
            match c {
                ' ' | '-' | '.' | '/' if !gap => gap = true,
                c if c.is_ascii_digit() => return gap,
                _ => return false,
            }
        }
        false
    };
    if digit_then_gap(&mut after.chars()) || digit_then_gap(&mut before.chars().rev()) {
        return false;
    }
    let digits = number.chars().filter(char::is_ascii_digit).count();
    let international = number.starts_with('+') || number.starts_with("00");
    let (least, most) = if international { (8, 15) } else { (8, 12) };
    if !(least..=most).contains(&digits) || DATE.is_match(number) {
        return false;
    }
    // 0000 0000 is a form's placeholder, not a number anyone has.
    let mut all_digits = number.chars().filter(char::is_ascii_digit);
    let first = all_digits.next();
    if all_digits.all(|d| Some(d) == first) {
        return false;
    }
    if number.contains(',') {
        return false;
    }
    // A decimal point in the last group (1.299 or 3.50) is a price or a quantity.
    if !international {
        let groups: Vec<&str> = number.split([' ', '-', '.', '/']).filter(|g| !g.is_empty()).collect();
        if groups.len() == 1 && digits < 9 {
            return false;
        }
    }
    let previous = before
        .trim_end_matches([' ', ':', '#', '°', '(', '-'])
        .rsplit(|c: char| !c.is_alphanumeric() && c != 'é' && c != 'ú')
        .next()
        .unwrap_or("")
        .to_lowercase();
    let previous = previous.trim_end_matches('.');
    // "no" is a number sign after what is numbered (order no), but Portuguese's "in the"
    // elsewhere (me liga no 96 3167-1628).
    let numbered = previous != "no" || {
        let mut words = before.rsplit(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
        words.next();
        words
            .next()
            .is_some_and(|w| NOT_A_PHONE.contains(&w.to_lowercase().as_str()))
    };
    if before.trim_end().ends_with('#') || (NOT_A_PHONE.contains(&previous) && numbered) {
        return false;
    }
    true
}

/// Luhn's check and a card issuer's prefix, with one kind of separator throughout.
fn is_card(candidate: &str) -> bool {
    if candidate.contains(' ') && candidate.contains('-') {
        return false;
    }
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) || !matches!(digits[0], 2..=6) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The length of an IBAN of each country (SWIFT's registry).
fn iban_length(country: &str) -> Option<usize> {
    Some(match country {
        "NO" => 15,
        "BE" => 16,
        "DK" | "FI" | "FO" | "GL" | "NL" => 18,
        "MK" | "SI" => 19,
        "AT" | "BA" | "EE" | "KZ" | "LT" | "LU" | "XK" => 20,
        "CH" | "CR" | "HR" | "LI" | "LV" => 21,
        "BG" | "BH" | "DE" | "GB" | "GE" | "IE" | "ME" | "RS" => 22,
        "AE" | "GI" | "IL" | "TL" => 23,
        "AD" | "CZ" | "ES" | "MD" | "PK" | "RO" | "SA" | "SE" | "SK" | "TN" | "VG" => 24,
        "PT" => 25,
        "IS" | "TR" => 26,
        "FR" | "GR" | "IT" | "MC" | "MR" | "SM" => 27,
        "AL" | "AZ" | "BY" | "CY" | "DO" | "GT" | "HU" | "LB" | "PL" => 28,
        "BR" | "EG" | "PS" | "QA" | "UA" => 29,
        "JO" | "KW" | "MU" => 30,
        "MT" | "SC" => 31,
        "LC" => 32,
        _ => return None,
    })
}

/// IBANs in print (groups of four) or electronic form, of the length of their country,
/// whose check digits hold (ISO 13616: mod 97 = 1).
fn find_ibans(text: &str, out: &mut Vec<Finding>) {
    for start in IBAN.find_iter(text) {
        let Some(length) = iban_length(&start.as_str()[..2].to_ascii_uppercase()) else {
            continue;
        };
        let mut code = String::with_capacity(length);
        let mut end = start.start();
        let bytes = text.as_bytes();
        let mut i = start.start();
        while i < bytes.len() && code.len() < length {
            let b = bytes[i];
            if b.is_ascii_alphanumeric() {
                code.push(b.to_ascii_uppercase() as char);
                i += 1;
                end = i;
            } else if b == b' '
                && i + 1 < bytes.len()
                && bytes[i + 1].is_ascii_alphanumeric()
                && code.len().is_multiple_of(4)
            {
                i += 1;
            } else {
                break;
            }
        }
        let bounded = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if code.len() == length && bounded && iban_checks(&code) {
            out.push(Finding::new(Kind::Iban, start.start(), end));
        }
    }
}

fn iban_checks(code: &str) -> bool {
    let rearranged = code[4..].chars().chain(code[..4].chars());
    let mut remainder: u32 = 0;
    for c in rearranged {
        let value = match c.to_digit(36) {
            Some(value) => value,
            None => return false,
        };
        remainder = if value < 10 {
            (remainder * 10 + value) % 97
        } else {
            (remainder * 100 + value) % 97
        };
    }
    remainder == 1
}

/// Sites where the first segment of a path names a person (a profile).
const PROFILE_HOSTS: &[&str] = &[
    "twitter.com",
    "x.com",
    "facebook.com",
    "fb.com",
    "instagram.com",
    "github.com",
    "gitlab.com",
    "tiktok.com",
    "medium.com",
    "threads.net",
    "t.me",
    "wa.me",
    "about.me",
    "keybase.io",
    "patreon.com",
    "soundcloud.com",
    "pinterest.com",
    "dribbble.com",
    "behance.net",
    "linktr.ee",
    "calendly.com",
    "bitbucket.org",
    "substack.com",
    "snapchat.com",
    "vk.com",
    "telegram.me",
    "codepen.io",
    "dev.to",
    "hashnode.com",
    "tumblr.com",
    "flickr.com",
];

/// First segments of those sites' paths that are pages of the site, not people.
const SITE_PAGES: &[&str] = &[
    "home",
    "explore",
    "search",
    "about",
    "settings",
    "login",
    "signup",
    "help",
    "pricing",
    "features",
    "blog",
    "docs",
    "policies",
    "legal",
    "privacy",
    "terms",
    "hashtag",
    "i",
    "intent",
    "share",
    "sharer",
    "sharer.php",
    "marketplace",
    "topics",
    "trending",
    "enterprise",
    "sponsors",
    "notifications",
    "watch",
    "business",
    "company",
    "jobs",
    "careers",
    "events",
    "groups",
    "pages",
    "reel",
    "p",
    "tags",
    "tag",
    "discover",
    "new",
    "orgs",
];

/// Path segments that introduce a person on any site.
const PERSON_SEGMENTS: &[&str] = &[
    "in",
    "pub",
    "user",
    "users",
    "u",
    "profile",
    "profiles",
    "people",
    "person",
    "member",
    "members",
    "author",
    "authors",
    "staff",
    "employee",
    "employees",
    "mitarbeiter",
    "personne",
    "usuario",
    "usuarios",
    "perfil",
];

/// Query keys whose value names a person.
const PERSON_KEYS: &[&str] = &[
    "email",
    "e-mail",
    "mail",
    "user",
    "username",
    "userid",
    "user_id",
    "uid",
    "name",
    "login",
    "member",
    "profile",
    "fullname",
    "first_name",
    "last_name",
];

/// Whether a URL leads to a person: a profile on a social site, a path through
/// `/users/`, `/~name` or `/@name`, or a query naming a user or an address.
pub(super) fn personal_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .unwrap_or(&lower);
    let (host_and_path, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let host_and_path = host_and_path.split('#').next().unwrap_or(host_and_path);
    let (host, path) = match host_and_path.split_once('/') {
        Some((host, path)) => (host, path),
        None => (host_and_path, ""),
    };
    let host = host
        .trim_start_matches("www.")
        .trim_start_matches("m.")
        .trim_start_matches("mobile.");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(query) = query {
        let names_someone = query.split('&').any(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            !value.is_empty() && PERSON_KEYS.contains(&key)
        });
        if names_someone {
            return true;
        }
    }
    if segments
        .iter()
        .any(|s| s.starts_with('@') && s.len() > 1 || s.starts_with('~') && s.len() > 1)
    {
        return true;
    }
    if path.contains('@') || path.contains("%40") {
        return true;
    }
    let social = PROFILE_HOSTS
        .iter()
        .any(|site| host == *site || host.ends_with(&format!(".{site}")));
    let linkedin = host == "linkedin.com" || host.ends_with(".linkedin.com");
    if linkedin {
        return matches!(segments.first(), Some(&"in" | &"pub")) && segments.len() > 1;
    }
    if social {
        if let Some(first) = segments.first() {
            return !SITE_PAGES.contains(first);
        }
        return false;
    }
    segments
        .windows(2)
        .any(|pair| PERSON_SEGMENTS.contains(&pair[0]) && pair[0] != "in" && pair[0] != "pub" && !pair[1].is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, String)> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.sort_by_key(|f| f.start);
        out.into_iter()
            .map(|f| (f.kind, text[f.start..f.end].to_owned()))
            .collect()
    }

    #[test]
    fn finds_each_kind_and_leaves_its_near_misses() {
        assert_eq!(
            kinds("Write to anna.k+news@mail.example.org now."),
            vec![(Kind::Email, "anna.k+news@mail.example.org".to_owned())]
        );
        for (said, address) in [
            (
                "mail a.jove (at) gill (dot) com.br please",
                "a.jove (at) gill (dot) com.br",
            ),
            ("it's anna at example dot org, thanks", "anna at example dot org"),
            (
                "ANNA [AT] EXAMPLE [DOT] CO [DOT] UK",
                "ANNA [AT] EXAMPLE [DOT] CO [DOT] UK",
            ),
            ("write bob(at)mail.example.de today", "bob(at)mail.example.de"),
        ] {
            assert_eq!(kinds(said), vec![(Kind::Email, address.to_owned())], "{said}");
        }
        assert!(kinds("we met at noon and the dot on the map").is_empty());
        assert!(
            !kinds("the article at help.example.com/export is old")
                .iter()
                .any(|(k, _)| *k == Kind::Email)
        );
        assert_eq!(
            kinds("Card 4111 1111 1111 1111."),
            vec![(Kind::Card, "4111 1111 1111 1111".to_owned())]
        );
        assert!(kinds("Tracking 4111 1111 1111 1112.").is_empty());
        assert_eq!(
            kinds("IBAN GB82 WEST 1234 5698 7654 32 please"),
            vec![(Kind::Iban, "GB82 WEST 1234 5698 7654 32".to_owned())]
        );
        assert_eq!(
            kinds("DE89370400440532013000."),
            vec![(Kind::Iban, "DE89370400440532013000".to_owned())]
        );
        assert!(kinds("GB83 WEST 1234 5698 7654 32").is_empty());
        assert_eq!(
            kinds("from 81.2.69.160 today"),
            vec![(Kind::Ip, "81.2.69.160".to_owned())]
        );
        assert_eq!(
            kinds("and 2001:db8::8a2e:370:7334."),
            vec![(Kind::Ip, "2001:db8::8a2e:370:7334".to_owned())]
        );
        assert!(kinds("version 10.0.19041.1 at 10:30:00").is_empty());
        assert_eq!(
            kinds("Call +44 20 7946 0958."),
            vec![(Kind::Phone, "+44 20 7946 0958".to_owned())]
        );
        assert_eq!(
            kinds("ring (020) 7946 0958"),
            vec![(Kind::Phone, "(020) 7946 0958".to_owned())]
        );
        assert_eq!(
            kinds("ou me liga no 96 3167-1628"),
            vec![(Kind::Phone, "96 3167-1628".to_owned())]
        );
        assert!(kinds("order no 0612345678 shipped").is_empty());
        assert_eq!(
            kinds("call 555-123-4567"),
            vec![(Kind::Phone, "555-123-4567".to_owned())]
        );
        assert_eq!(
            kinds("au 06.12.34.56.78"),
            vec![(Kind::Phone, "06.12.34.56.78".to_owned())]
        );
        assert!(kinds("order 4471-2290 on 15.03.2024 for €1.299,00").is_empty());
        assert!(kinds("Bestellnummer 0123456789").is_empty());
        assert_eq!(
            kinds("see linkedin.com/in/anna-schmidt, or https://www.example.com/pricing."),
            vec![(Kind::Url, "linkedin.com/in/anna-schmidt".to_owned())]
        );
        assert_eq!(
            kinds("https://app.example.io/users/4411?tab=1 and https://x.com/home"),
            vec![(Kind::Url, "https://app.example.io/users/4411?tab=1".to_owned())]
        );
    }
}
