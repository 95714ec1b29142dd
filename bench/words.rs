//! The synthetic speech the search benchmarks index: a fixed-seed xorshift generator over a
//! vocabulary of spoken interviews (55% function words, 25% words of the domain, the rest a
//! long tail of 20,000 invented words, each class Zipf-distributed), so every run indexes the
//! same text.
#![allow(dead_code)]

/// xorshift64*: small, fast, and the same text on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const FUNCTION_WORDS: &str = "the i and to a of that it was we you in they is so but for like just have on \
    with this be what do not at our about if it's don't there when are all or them more one can really think \
    know would because then their from an out very some which had get how also were could me my he she has \
    been who did your yeah okay um uh right well actually kind sort lot much";

const CONTENT_WORDS: &str = "price pricing prices priced expensive cheap cost costs budget budgets \
    licence licences license seat seats plan plans tier tiers subscription subscriptions renewal renew \
    contract contracts procurement invoice invoices billing discount discounts trial trials onboarding \
    onboarded setup install installed integration integrations integrate api webhook export exports \
    exported import imported dashboard dashboards report reports reporting chart charts filter filters \
    search searching notification notifications email emails slack calendar mobile app apps browser \
    login password sso permission permissions admin admins team teams manager managers colleague \
    colleagues customer customers client clients user users feature features request requests bug bugs \
    crash crashes slow slowly fast performance reliable reliability outage outages downtime support \
    ticket tickets answer answered response responses documentation docs tutorial tutorials training \
    workflow workflows process processes spreadsheet spreadsheets excel data database sync syncing \
    backup security compliance gdpr privacy audit migration migrate migrated competitor competitors \
    alternative switch switched churn cancel cancelled cancelling upgrade upgraded downgrade value \
    worth useful helpful confusing confused frustrating frustrated annoying easy difficult hard simple \
    complicated intuitive learning curve week weeks month months year quarter deadline project projects \
    meeting meetings interview interviews feedback survey research insight insights persona goal goals \
    problem problems pain issue issues need needs expectation expected surprised happy unhappy \
    satisfied recommend recommended trust quality design layout button screen page settings template \
    templates automation automate manual manually time saving saved hours minutes";

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ser", "tan", "vo", "ri", "bel", "dor", "fen", "gu", "hal", "jin", "kor", "lu", "mar", "nel",
    "op", "pra", "qua", "sto", "tri", "ul", "zen",
];
const SUFFIXES: [&str; 6] = ["", "s", "ing", "ed", "er", "ly"];
/// Invented words of the long tail.
pub const TAIL_WORDS: usize = 20_000;

/// The vocabulary of spoken interviews: 55% of the words are function words, 25% content words
/// of the domain, the rest a long tail of 20,000 invented words (names, products, rare
/// inflections); each class Zipf-distributed.
pub struct Vocabulary {
    pub function: Zipf,
    pub content: Zipf,
    pub tail: Zipf,
}

pub struct Zipf {
    pub words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Zipf {
    pub fn new(words: Vec<String>) -> Self {
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|rank| {
                total += 1.0 / (rank as f64 + 1.5);
                total
            })
            .collect();
        Self { words, cumulative }
    }

    pub fn draw(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let target = rng.unit() * total;
        let rank = self.cumulative.partition_point(|&c| c < target);
        self.words.get(rank).or(self.words.last()).map_or("", String::as_str)
    }
}

impl Vocabulary {
    pub fn new(rng: &mut Rng) -> Self {
        let words = |list: &str| list.split_whitespace().map(str::to_owned).collect();
        let tail = (0..TAIL_WORDS)
            .map(|_| {
                let syllables = 2 + rng.below(3);
                let mut word: String = (0..syllables).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
                word.push_str(SUFFIXES[rng.below(SUFFIXES.len())]);
                word
            })
            .collect();
        Self {
            function: Zipf::new(words(FUNCTION_WORDS)),
            content: Zipf::new(words(CONTENT_WORDS)),
            tail: Zipf::new(tail),
        }
    }

    pub fn draw(&self, rng: &mut Rng) -> &str {
        match rng.below(20) {
            0..=10 => self.function.draw(rng),
            11..=15 => self.content.draw(rng),
            _ => self.tail.draw(rng),
        }
    }

    /// A content word, uniformly: what people ask about.
    pub fn topic(&self, rng: &mut Rng) -> &str {
        let words = &self.content.words;
        words.get(rng.below(words.len())).map_or("", String::as_str)
    }
}

/// Appends the `i`th of `len` words to a sentence in the making: capitalised first, then
/// after a space, with a comma now and then and a full stop inside.
pub fn push_word(text: &mut String, word: &str, i: usize, len: usize, rng: &mut Rng) {
    if i == 0 {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            text.extend(first.to_uppercase());
            text.push_str(chars.as_str());
        }
    } else {
        text.push(' ');
        text.push_str(word);
    }
    match rng.below(40) {
        0..=2 => text.push(','),
        3 if i + 1 < len => text.push('.'),
        _ => {}
    }
}
