//! People's names in text, offline, in the forms people write them: in any casing, with
//! or without accents, whole or in parts, possessive (Anna's), with an honorific
//! (Nishimura-san), split by a line break. Found are the names the caller knows (the
//! speakers, the workspace's list, what was found before in the same work), given and
//! family names from word lists (see `lists/make_lists.py`), the words after a title (Mrs,
//! Herr, Madame, Señora) or a cue (my name is, talk to, cc, je m'appelle, me llamo), and
//! the words that continue a name found so.
//!
//! Capitalisation is evidence only where the text uses it: each line is read as mixed
//! case, all lower case (as some transcription tools write) or all upper case, and in the
//! latter two only the lists, the cues and the known names decide. A list's entry that is
//! also an ordinary word (Will, May, Rose, Baker) counts only beside another part of a
//! name or after a title or a cue, and a known name's part that is an ordinary word only
//! where it is capitalised or beside another part.

use foldhash::HashSet;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::LazyLock;

use unicode_normalization::UnicodeNormalization;

use super::{Finding, Kind};

/// A word as names are looked up: lower case, without accents, so that José, jose and
/// JOSE are one name.
pub(super) fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(word.len());
    for c in word.nfd() {
        if unicode_normalization::char::is_combining_mark(c) {
            continue;
        }
        match c {
            'ß' => out.push_str("ss"),
            'ø' | 'Ø' => out.push('o'),
            'ł' | 'Ł' => out.push('l'),
            'đ' | 'Đ' => out.push('d'),
            'æ' | 'Æ' => out.push_str("ae"),
            '’' => out.push('\''),
            _ => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// How a list holds a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    Given,
    /// A family name of the hand-kept list: one alone, where it is capitalised.
    Family,
    /// One of the Census's many more family names (places and nouns among them): part of
    /// a name, or one alone after a cue.
    MoreFamily,
    /// A name that is also an ordinary word; `family` when it is a family name.
    Ambiguous {
        family: bool,
    },
}

impl Listed {
    fn family(self) -> bool {
        matches!(
            self,
            Listed::Family | Listed::MoreFamily | Listed::Ambiguous { family: true }
        )
    }

    /// A name whatever else it may be.
    fn sure(self) -> bool {
        matches!(self, Listed::Given | Listed::Family | Listed::MoreFamily)
    }
}

struct Lists {
    given: HashSet<String>,
    family: HashSet<String>,
    more_family: HashSet<String>,
    given_ambiguous: HashSet<String>,
    family_ambiguous: HashSet<String>,
    never: HashSet<String>,
    business: HashSet<String>,
    titles: HashSet<String>,
    particles: HashSet<String>,
    roles: HashSet<String>,
    role_nouns: HashSet<String>,
    possessives: HashSet<String>,
    common: HashSet<String>,
    /// English's ordinary words (lower case): a capitalised one is a title's or a product's.
    english: HashSet<&'static str>,
}

impl Lists {
    /// Whether the hand-kept family-name list holds the word, whatever else holds it
    /// (Harris, Anderson and Thomas are given names too).
    fn family_name(&self, key: &str) -> bool {
        self.family.contains(key) || self.family_ambiguous.contains(key)
    }

    fn listed(&self, key: &str) -> Option<Listed> {
        let common = self.common.contains(key);
        if !common && self.given.contains(key) {
            Some(Listed::Given)
        } else if !common && self.family.contains(key) {
            Some(Listed::Family)
        } else if !common && self.more_family.contains(key) {
            Some(Listed::MoreFamily)
        } else if self.family_ambiguous.contains(key)
            || (common && (self.family.contains(key) || self.more_family.contains(key)))
        {
            Some(Listed::Ambiguous { family: true })
        } else if self.given_ambiguous.contains(key) || (common && self.given.contains(key)) {
            Some(Listed::Ambiguous { family: false })
        } else {
            None
        }
    }
}

/// A word list's entries, folded: those before the line `# ambiguous` and after it.
fn list(text: &'static str) -> (HashSet<String>, HashSet<String>) {
    let mut plain = HashSet::default();
    let mut ambiguous = HashSet::default();
    let mut after = false;
    for line in text.lines().map(str::trim) {
        if line.eq_ignore_ascii_case("# ambiguous") {
            after = true;
        } else if !line.is_empty() && !line.starts_with('#') {
            if after { &mut ambiguous } else { &mut plain }.insert(fold(line));
        }
    }
    (plain, ambiguous)
}

static LISTS: LazyLock<Lists> = LazyLock::new(|| {
    let (given, given_ambiguous) = list(include_str!("given_names.txt"));
    let (family, mut family_ambiguous) = list(include_str!("surnames.txt"));
    let (more_family, more_ambiguous) = list(include_str!("more_surnames.txt"));
    family_ambiguous.extend(more_ambiguous);
    let folded = |words: &[&str]| words.iter().map(|w| fold(w)).collect::<HashSet<String>>();
    let mut common = HashSet::default();
    for code in ["en", "de", "fr", "es", "it", "nl", "pt"] {
        for word in stop_words::lookup(code).unwrap_or_default() {
            // Folded, an accented stop word may become a name (Italian sarà is Sara).
            let key = fold(word);
            let accented = key != word.to_lowercase();
            if !(accented && (given.contains(&key) || family.contains(&key))) {
                common.insert(key);
            }
        }
    }
    common.extend(folded(FILLERS));
    Lists {
        given,
        family,
        more_family,
        given_ambiguous,
        family_ambiguous,
        never: NEVER.iter().chain(BUSINESS).map(|w| fold(w)).collect(),
        business: folded(BUSINESS),
        titles: folded(TITLES),
        particles: folded(PARTICLES),
        roles: folded(ROLE_WORDS),
        role_nouns: folded(ROLE_NOUNS),
        possessives: folded(POSSESSIVES),
        common,
        english: include_str!("english_words.txt")
            .lines()
            .filter(|line| !line.starts_with('#'))
            .collect(),
    }
});

/// Words of speech that the stop-word lists lack.
const FILLERS: &[&str] = &[
    "sempre",
    "siempre",
    "immer",
    "toujours",
    "jamais",
    "nunca",
    "auch",
    "aussi",
    "también",
    "também",
    "seulement",
    "solo",
    "só",
    "yeah",
    "yep",
    "nope",
    "okay",
    "ok",
    "um",
    "uh",
    "erm",
    "hmm",
    "gonna",
    "wanna",
    "kinda",
    "sorta",
    "like",
    "right",
    "sure",
    "just",
    "really",
    "actually",
    "basically",
    "also",
    "maybe",
    "still",
    "even",
    "said",
    "says",
    "say",
    "think",
    "know",
    "mean",
    "guess",
    "thing",
    "things",
    "stuff",
    "lot",
    "lots",
    "bit",
    "way",
    "ja",
    "nein",
    "genau",
    "oui",
    "non",
    "bon",
    "bueno",
    "vale",
    "sim",
    "não",
];

/// Words after which a capitalised word is a name (lower case; `.` stripped).
const TITLES: &[&str] = &[
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "dame",
    "herr",
    "frau",
    "fräulein",
    "m",
    "mme",
    "mlle",
    "madame",
    "monsieur",
    "mademoiselle",
    "maître",
    "sr",
    "sra",
    "srta",
    "señor",
    "señora",
    "señorita",
    "don",
    "doña",
    "dña",
    "sig",
    "sig.ra",
    "signor",
    "signora",
    "uncle",
    "aunt",
    "onkel",
    "tante",
];

/// Phrases after which a word is a name if it looks like one (lower case): a capitalised
/// word in a text that capitalises, a word of the name lists in one that does not.
const CUES: &[&str] = &[
    "say hi to",
    "saludos a",
    "grüße an",
    "dis bonjour à",
    "moi c'est",
    "soy",
    "eu sou",
    "interview with",
    "call with",
    "meeting with",
    "chat with",
    "session with",
    "entretien avec",
    "gespräch mit",
    "interview mit",
    "entrevista con",
    "entrevista com",
    "also known as",
    "aka",
    "mera naam",
    "mi chiamo",
    "me chamo",
    "meu nome é",
    "je suis",
    "ich bin",
    "my name is",
    "my name's",
    "name is",
    "i am called",
    "i'm called",
    "called",
    "named",
    "ask for",
    "speak to",
    "talk to",
    "talked to",
    "spoke to",
    "spoke with",
    "talked with",
    "colleague",
    "manager",
    "boss",
    "husband",
    "wife",
    "partner",
    "daughter",
    "son",
    "friend",
    "mein name ist",
    "ich heiße",
    "ich heisse",
    "heißt",
    "namens",
    "mein kollege",
    "meine kollegin",
    "mein chef",
    "meine chefin",
    "je m'appelle",
    "il s'appelle",
    "elle s'appelle",
    "mon collègue",
    "ma collègue",
    "mon chef",
    "ma cheffe",
    "me llamo",
    "se llama",
    "mi nombre es",
    "mi compañero",
    "mi compañera",
    "mi jefe",
    "mi jefa",
];

/// Phrases after which a word is a name only with more to say so: a word of the name
/// lists, or two capitalised words that are no ordinary words ("This is Adebukola
/// Aderibigbe", "I took over from Iwo Parzonka", "cc Priya").
const WEAK_CUES: &[&str] = &[
    "pergunta pra",
    "pergunte pra",
    "i'd ask",
    "i would ask",
    "parlez-en à",
    "fale com",
    "habla con",
    "sprich mit",
    "reden sie mit",
    "me and",
    "vor allem",
    "surtout",
    "mostly",
    "sobre todo",
    "principalmente",
    "setzen sie",
    "this is",
    "it's",
    "it is",
    "i'm",
    "i am",
    "call me",
    "here is",
    "here's",
    "cc",
    "cc'd",
    "copied",
    "ask",
    "asked",
    "told",
    "tell",
    "thanks",
    "thank",
    "emailed",
    "pinged",
    "ping",
    "met",
    "hi",
    "hello",
    "hey",
    "dear",
    "hola",
    "bonjour",
    "hallo",
    "olá",
    "ciao",
    "namaste",
    "sou",
    "that was",
    "this was",
    "it was",
    "c'est",
    "copy",
    "copying",
    "mettez",
    "copia a",
    "cópia",
    "in kopie",
    "frag",
    "fragen sie",
    "demandez à",
    "pregúntale a",
    "pergunte a",
    "pergunta ao",
    "pergunta à",
];

/// Words after which two capitalised words that are no ordinary words are a name ("I
/// took over from Iwo Parzonka"), though one alone is not ("from Rome").
const LOOSE_CUES: &[&str] = &[
    "from", "with", "to", "by", "for", "via", "and", "or", "mit", "von", "und", "avec", "de", "et", "con", "com", "y",
    "e",
];

/// Words joining the parts of a family name (van der Berg, de la Cruz, bin Said, Ó Dhomhnaill).
const PARTICLES: &[&str] = &[
    "van", "von", "der", "den", "de", "la", "le", "da", "di", "del", "dos", "das", "du", "ter", "ten", "bin", "ibn",
    "al", "el", "y", "zu", "mac", "st", "ó", "o", "ní", "nic", "ua", "mc", "ap", "bint", "abu", "della", "degli", "op",
    "te", "t", "het", "af", "av", "zum", "zur",
];

/// Words for what a person does at work: beside a name with a comma they say it is one
/// ("Hēmi Te Awa, our data lead"; "Our COO, Caroline Cross"; "Kahurangi, Geschäftsführung").
const ROLE_NOUNS: &[&str] = &[
    "lead",
    "manager",
    "head",
    "director",
    "ceo",
    "cto",
    "cfo",
    "coo",
    "cio",
    "cmo",
    "vp",
    "founder",
    "cofounder",
    "co-founder",
    "owner",
    "admin",
    "administrator",
    "engineer",
    "analyst",
    "designer",
    "developer",
    "accountant",
    "coordinator",
    "supervisor",
    "specialist",
    "consultant",
    "president",
    "secretary",
    "officer",
    "lawyer",
    "counsel",
    "controller",
    "champion",
    "intern",
    "boss",
    "colleague",
    "directrice",
    "directeur",
    "responsable",
    "gérant",
    "gérante",
    "fondateur",
    "fondatrice",
    "présidente",
    "comptable",
    "stagiaire",
    "collègue",
    "cheffe",
    "directora",
    "gerente",
    "jefe",
    "jefa",
    "fundador",
    "fundadora",
    "presidenta",
    "contadora",
    "contador",
    "compañero",
    "compañera",
    "colega",
    "diretora",
    "diretor",
    "coordenadora",
    "coordenador",
    "leiter",
    "leiterin",
    "geschäftsführer",
    "geschäftsführerin",
    "geschäftsführung",
    "chefin",
    "kollege",
    "kollegin",
    "gründer",
    "gründerin",
    "inhaber",
    "inhaberin",
    "buchhalter",
    "buchhalterin",
    "vorstand",
];

/// Possessive words that open a role's description (our data lead, notre directrice).
const POSSESSIVES: &[&str] = &[
    "our", "my", "their", "his", "her", "notre", "mon", "ma", "nos", "nuestro", "nuestra", "mi", "nosso", "nossa",
    "meu", "minha", "unser", "unsere", "unserer", "mein", "meine",
];

/// Words joining two names (Shawn and Ifeoma; Marine et Paul).
const CONJUNCTIONS: &[&str] = &["and", "or", "und", "oder", "et", "ou", "y", "e", "o", "&"];

/// Personal pronouns that open a sentence about the person just named ("Rich, without a
/// doubt. He has built…"). Those of French and German name things too, and German
/// capitalises every noun, so they count only after what reads as a name in those
/// languages.
const PRONOUNS: &[&str] = &["he", "she", "él", "ella", "ele", "ela"];
const FRENCH_PRONOUNS: &[&str] = &["il", "elle"];
const GERMAN_PRONOUNS: &[&str] = &["er", "sie"];

/// Particles that are no ordinary word of any language we read: between two capitalised
/// words they make a name (Ruairí Ó Floinn, Gruffudd ap Rhys).
const NAME_PARTICLES: &[&str] = &["Ó", "Ní", "Nic", "Mac", "Mc", "ap", "bin", "ibn", "bint", "abu", "Ua"];

/// Honorifics written after a name with a hyphen (Nishimura-san, Patel-ji): the name is
/// the word before.
const HONORIFIC_SUFFIXES: &[&str] = &[
    "san", "sama", "kun", "chan", "sensei", "senpai", "dono", "ji", "sahab", "saheb", "ssi", "nim", "jan",
];

/// Capitalised words that never start or continue a name.
const NEVER: &[&str] = &[
    "I",
    "I'm",
    "I've",
    "I'd",
    "I'll",
    "The",
    "A",
    "An",
    "And",
    "But",
    "Or",
    "So",
    "We",
    "You",
    "He",
    "She",
    "They",
    "It",
    "This",
    "That",
    "These",
    "Those",
    "Then",
    "There",
    "Here",
    "What",
    "When",
    "Where",
    "Why",
    "How",
    "Who",
    "Yes",
    "No",
    "Ok",
    "OK",
    "Okay",
    "Well",
    "Oh",
    "Hi",
    "Hello",
    "Thanks",
    "Thank",
    "Please",
    "Sorry",
    "My",
    "Our",
    "Your",
    "His",
    "Her",
    "Their",
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Montag",
    "Dienstag",
    "Mittwoch",
    "Donnerstag",
    "Freitag",
    "Samstag",
    "Sonntag",
    "Januar",
    "Februar",
    "März",
    "Juni",
    "Juli",
    "Oktober",
    "Dezember",
    "Lundi",
    "Mardi",
    "Mercredi",
    "Jeudi",
    "Vendredi",
    "Samedi",
    "Dimanche",
    "Janvier",
    "Février",
    "Mars",
    "Avril",
    "Mai",
    "Juin",
    "Juillet",
    "Août",
    "Septembre",
    "Octobre",
    "Novembre",
    "Décembre",
    "Lunes",
    "Martes",
    "Miércoles",
    "Jueves",
    "Viernes",
    "Sábado",
    "Domingo",
    "Enero",
    "Febrero",
    "Marzo",
    "Abril",
    "Mayo",
    "Junio",
    "Julio",
    "Agosto",
    "Septiembre",
    "Octubre",
    "Noviembre",
    "Diciembre",
    "Ich",
    "Wir",
    "Sie",
    "Er",
    "Es",
    "Der",
    "Die",
    "Das",
    "Und",
    "Aber",
    "Je",
    "Nous",
    "Vous",
    "Il",
    "Elle",
    "Ils",
    "Le",
    "La",
    "Les",
    "Et",
    "Mais",
    "Yo",
    "Nosotros",
    "Él",
    "Ella",
    "El",
    "Los",
    "Las",
    "Y",
    "Pero",
    "Team",
    "Support",
    "Sales",
    "Marketing",
    "Finance",
    "Interviewer",
    "Moderator",
    "Respondent",
    "Participant",
    "Speaker",
    "Customer",
    "Client",
    "User",
    "Admin",
    "Manager",
    "CEO",
    "CTO",
    "CFO",
    "HR",
    "IT",
    "Google",
    "Microsoft",
    "Apple",
    "Amazon",
    "Excel",
    "Slack",
    "Jira",
    "Notion",
    "Salesforce",
    "HubSpot",
    "Zoom",
    "Teams",
    "Outlook",
    "Gmail",
    "SAP",
    "Oracle",
    "Shopify",
    "Stripe",
    "PayPal",
    "Visa",
    "Mastercard",
    "Berlin",
    "Paris",
    "London",
    "Madrid",
    "Munich",
    "München",
    "Hamburg",
    "Lyon",
    "Barcelona",
    "Europe",
    "Germany",
    "France",
    "Spain",
    "English",
    "German",
    "French",
    "Spanish",
    "Christmas",
    "San",
    "Santa",
    "Saint",
    "Sankt",
    "Ciudad",
    "Buenos",
    "New",
    "Easter",
    "Q1",
    "Q2",
    "Q3",
    "Q4",
];

/// Words of a business's or a brand's name: never a person's, and what follows them is
/// their name's too ("from Acme Corp", Kingfisher Care, Padaria Pão Dourado, Microsoft Teams).
const BUSINESS: &[&str] = &[
    "Corp",
    "Inc",
    "Ltd",
    "GmbH",
    "AG",
    "LLC",
    "Group",
    "Labs",
    "Technologies",
    "Solutions",
    "Software",
    "Systems",
    "Partners",
    "Bank",
    "University",
    "Cloud",
    "Pro",
    "Plus",
    "Premium",
    "Enterprise",
    "Plan",
    "Tier",
    "Edition",
    "App",
    "Homes",
    "Care",
    "Analytics",
    "Reisen",
    "Logistik",
    "Immobilien",
    "Medien",
    "Books",
    "Health",
    "Studio",
    "Studios",
    "Digital",
    "Media",
    "Consulting",
    "Services",
    "Foods",
    "Coffee",
    "Bakery",
    "Clinic",
    "Clínica",
    "Grupo",
    "Transportes",
    "Padaria",
    "Ópticas",
    "Ótica",
    "Óptica",
    "Boulangeries",
    "Boulangerie",
    "Vignobles",
    "Hotel",
    "Hotels",
    "Capital",
    "Ventures",
    "Logistics",
    "Travel",
    "Insurance",
    "Dental",
    "Pharma",
    "Tech",
    "Holdings",
    "Industries",
    "Company",
    "Co",
    "Agency",
    "Agentur",
    "Verlag",
    "Werke",
    "Olha",
    "Clinics",
    "Clinique",
    "Klinik",
    "Praxis",
    "Lettings",
    "Estates",
    "Properties",
    "Realty",
    "Construtora",
    "Constructora",
    "Construction",
    "Constructions",
    "Bau",
    "Optique",
    "Optik",
    "Opticians",
    "Café",
    "Cafés",
    "Cafe",
    "Kaffee",
    "Restaurant",
    "Restaurante",
    "Bäckerei",
    "Panadería",
    "Pâtisserie",
    "Confeitaria",
    "Farmacia",
    "Farmácia",
    "Pharmacie",
    "Apotheke",
    "Pharmacy",
    "Kanzlei",
    "Legal",
    "Law",
    "Associates",
    "Advogados",
    "Abogados",
    "Avocats",
    "Seguros",
    "Assurances",
    "Versicherung",
    "Versicherungen",
    "Imports",
    "Exports",
    "Supplies",
    "Motors",
    "Autos",
    "Garage",
    "Energie",
    "Energy",
    "Energía",
    "Solar",
    "Transporte",
    "Transport",
    "Logística",
    "Logistique",
    "Distribuidora",
    "Comercial",
    "Atelier",
    "Boutique",
    "Maison",
    "Librería",
    "Livraria",
    "Buchhandlung",
    "Brauerei",
    "Weingut",
    "Domaine",
    "Bodegas",
    "Viñedos",
    "Escola",
    "Escuela",
    "École",
    "Schule",
    "Academy",
    "Akademie",
    "Institut",
    "Instituto",
    "Institute",
    "Stadtwerke",
    "Marketing",
    "Design",
    "Print",
    "Druck",
    "Farms",
    "Fitness",
    "Salon",
    "Ltda",
    "SARL",
    "SAS",
    "KG",
    "PLC",
    "LLP",
    "Google",
    "Microsoft",
    "Amazon",
    "Salesforce",
    "HubSpot",
    "Zoom",
    "Shopify",
    "Stripe",
    "PayPal",
    "SAP",
    "Oracle",
];

/// Speaker labels that name a role, not a person.
const ROLE_WORDS: &[&str] = &[
    "interviewer",
    "moderator",
    "respondent",
    "participant",
    "speaker",
    "host",
    "guest",
    "researcher",
    "customer",
    "user",
    "interviewee",
    "facilitator",
    "unknown",
    "assistant",
    "agent",
    "bot",
    "ai",
    "narrator",
    "q",
    "a",
    "p",
    "r",
    "i",
    "me",
    "you",
    "sprecher",
    "sprecherin",
    "teilnehmer",
    "teilnehmerin",
    "interviewerin",
    "befragter",
    "befragte",
    "intervenant",
    "intervenante",
    "enquêteur",
    "enquêtrice",
    "participante",
    "entrevistador",
    "entrevistadora",
    "entrevistado",
    "entrevistada",
    "team",
    "other",
    "all",
    "everyone",
    "audience",
];

/// The names a caller knows, whole and in parts, folded.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Whole names of more than one word, longest first.
    whole: Vec<Vec<String>>,
    /// The first words of the whole names, so most words need no look at them.
    firsts: HashSet<String>,
    /// Single words (parts of the whole names, and one-word names).
    parts: HashSet<String>,
    /// The parts of the names a workspace lists: found in every casing even where they
    /// are ordinary words too, since someone said they are names here.
    listed: HashSet<String>,
}

impl Known {
    /// Adds a name the caller knows (a workspace's list, a member): found whole and by
    /// its parts; parts of one letter and particles are left out.
    pub fn add(&mut self, name: &str) {
        let words: Vec<String> = words_of(name).map(fold).collect();
        for word in &words {
            if word.chars().count() >= 2 && !LISTS.particles.contains(word) {
                self.parts.insert(word.clone());
            }
        }
        self.add_whole(words);
    }

    /// Adds a name a workspace lists as personal: as [`Known::add`], and its parts found
    /// whatever their case, ordinary words or not.
    pub fn add_listed(&mut self, name: &str) {
        self.add(name);
        for word in words_of(name).map(fold) {
            if word.chars().count() >= 2 && !LISTS.particles.contains(&word) {
                self.listed.insert(word);
            }
        }
    }

    fn add_whole(&mut self, words: Vec<String>) {
        if words.len() > 1 && !self.whole.contains(&words) {
            self.firsts.insert(words[0].clone());
            self.whole.push(words);
            self.whole.sort_by_key(|w| std::cmp::Reverse(w.len()));
        }
    }

    /// Adds a label that may be a name as a whole (a record's name, "Anna Lee"): found as
    /// a whole, in any casing, and not by its parts.
    pub fn add_label(&mut self, label: &str) {
        let words: Vec<&str> = words_of(label).collect();
        if person_like(label, &words) {
            let folded: Vec<String> = words.iter().map(|w| fold(w)).collect();
            if folded.len() == 1 {
                self.parts.insert(folded[0].clone());
            }
            self.add_whole(folded);
        }
    }

    /// Adds a speaker's label unless it names a role ("Interviewer", "Speaker 2", "P1").
    pub fn add_speaker(&mut self, label: &str) {
        let words: Vec<&str> = words_of(label).collect();
        if person_like(label, &words) && !words.iter().any(|w| LISTS.roles.contains(&fold(w))) {
            self.add(label);
        }
    }

    /// Adds the name an e-mail address spells (`maria.lopez@…` is Maria Lopez): the parts of
    /// its local part that the name lists hold, so that "info@" or "sales.team@" add none.
    pub fn add_from_address(&mut self, address: &str) {
        let Some((local, _)) = address.split_once('@') else {
            return;
        };
        let parts: Vec<&str> = local
            .split(['.', '_', '-', '+'])
            .filter(|part| {
                let key = fold(part);
                key.chars().count() >= 3
                    && key.chars().all(char::is_alphabetic)
                    && !LISTS.never.contains(&key)
                    && LISTS.listed(&key).is_some_and(Listed::sure)
            })
            .collect();
        if !parts.is_empty() {
            self.add(&parts.join(" "));
        }
    }

    /// Remembers a name found in the text, so that its other occurrences and its parts are
    /// found too; whether it was new.
    pub(super) fn learn(&mut self, name: &str) -> bool {
        let words: Vec<String> = words_of(name).map(fold).collect();
        let new = words
            .iter()
            .any(|w| w.chars().count() >= 2 && !LISTS.particles.contains(w) && !self.parts.contains(w))
            || (words.len() > 1 && !self.whole.contains(&words));
        if new {
            self.add(name);
        }
        new
    }

    /// Remembers the names among these findings of `text`.
    pub(super) fn learn_found(&mut self, text: &str, found: &[Finding]) {
        for finding in found.iter().filter(|f| f.kind == Kind::Person) {
            self.learn(&text[finding.start..finding.end]);
        }
    }

    /// Whether `key` is a short form of a given name known whole (Franzi of Franziska,
    /// Steffi of Stefanie, Rafa of Rafael, Seb of Sébastien): the name's start, perhaps
    /// with a doubled last letter and a pet ending.
    fn short_form(&self, key: &str) -> bool {
        let letters = key.chars().count();
        if !(3..=8).contains(&letters) || self.firsts.is_empty() {
            return false;
        }
        let mut stems = vec![key];
        for ending in [
            "i", "y", "ie", "o", "a", "e", "le", "li", "chen", "ito", "ita", "inho", "inha",
        ] {
            if let Some(stem) = key.strip_suffix(ending)
                && stem.chars().count() >= 3
            {
                stems.push(stem);
            }
        }
        let undoubled: Vec<&str> = stems
            .iter()
            .filter_map(|stem| {
                let mut chars = stem.chars().rev();
                let (last, before) = (chars.next()?, chars.next()?);
                (last == before && stem.chars().count() >= 4).then(|| &stem[..stem.len() - last.len_utf8()])
            })
            .collect();
        stems.extend(undoubled);
        self.firsts.iter().any(|given| {
            stems
                .iter()
                .any(|stem| given.len() >= stem.len() + 2 && given.starts_with(stem))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty() && self.whole.is_empty()
    }
}

/// Whether a label reads as a person's name: no digits, and each word capitalised, or of a
/// script without capitals (देवनागरी, 中文).
fn person_like(label: &str, words: &[&str]) -> bool {
    !words.is_empty()
        && !label.chars().any(|c| c.is_ascii_digit())
        && words.iter().all(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || (c.is_alphabetic() && !c.is_lowercase()))
        })
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-' || is_mark(c)))
        .map(|w| w.trim_matches(['\'', '’', '-']))
        .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
}

/// A combining mark: part of a word in scripts such as Devanagari (the vowel signs).
fn is_mark(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c)
}

/// What capitalisation says about a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caps {
    /// Capitalised in a text that capitalises: maybe a name.
    Yes,
    /// Lower case in a text that capitalises: an ordinary word unless more says otherwise.
    No,
    /// The text does not capitalise (all lower or all upper case), or its script has no
    /// capitals: nothing.
    Unknown,
}

/// How a line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Casing {
    Mixed,
    Lower,
    Upper,
}

/// How a line is written, from its words after a speaker's label: all upper case when
/// most words are, lower case when its sentences start in lower case (or nothing in it is
/// capitalised), mixed otherwise.
fn casing(line: &str) -> Casing {
    let body = match line.find(':') {
        Some(at) if at < 60 && line[..at].split_whitespace().count() <= 4 => &line[at + 1..],
        _ => line,
    };
    let (mut cased, mut upper, mut capital_starts, mut lower_starts, mut capitals) = (0, 0, 0, 0, 0);
    let mut sentence_start = true;
    for word in body.split_whitespace() {
        let mut letters = word.chars().filter(|c| c.is_alphabetic());
        let Some(first) = letters.next() else {
            continue;
        };
        if first.is_uppercase() || first.is_lowercase() {
            cased += 1;
            let (mut more, mut lower) = (false, first.is_lowercase());
            for c in letters {
                more = true;
                lower |= c.is_lowercase();
            }
            if more && !lower {
                upper += 1;
            }
            if first.is_uppercase() {
                capitals += 1;
            }
            if sentence_start {
                if first.is_uppercase() {
                    capital_starts += 1;
                } else {
                    lower_starts += 1;
                }
            }
            // "i" alone is English's one word always capitalised.
            if word.trim_matches(|c: char| !c.is_alphabetic()) == "i" {
                lower_starts += 1;
            }
        }
        sentence_start = word.ends_with(['.', '!', '?', '…']);
    }
    if cased >= 3 && upper * 10 >= cased * 7 {
        Casing::Upper
    } else if cased > 0 && (capitals == 0 || lower_starts > capital_starts) {
        Casing::Lower
    } else {
        Casing::Mixed
    }
}

/// What lies between two words.
#[derive(Debug, Clone, Copy, Default)]
struct Gap {
    broken: bool,
    newline: bool,
}

/// A word of the text with where it is.
#[derive(Debug, Clone)]
struct Word<'a> {
    /// The word folded (see [`fold`]); borrowed from the text when it is so already.
    key: Cow<'a, str>,
    start: usize,
    end: usize,
    caps: Caps,
    /// The first word of a sentence (or of the text, or after a colon or a line break).
    starts_sentence: bool,
    /// Something other than white space lies between this word and the one before.
    after_break: bool,
    /// A line break lies between this word and the one before.
    after_newline: bool,
    /// Written with an honorific after it (Nishimura-san).
    honorific: bool,
    /// What the lists say of it, looked up once when first asked.
    facts: OnceCell<Facts>,
}

/// What the lists say of a word.
#[derive(Debug, Clone, Copy)]
struct Facts {
    listed: Option<Listed>,
    ordinary: bool,
}

impl Word<'_> {
    fn facts(&self) -> Facts {
        *self.facts.get_or_init(|| {
            let listed = LISTS.listed(&self.key);
            Facts {
                listed,
                ordinary: ordinary_as(&self.key, listed),
            }
        })
    }

    /// How the lists hold the word ([`Lists::listed`]).
    fn listed(&self) -> Option<Listed> {
        self.facts().listed
    }

    /// Whether the word is an ordinary one ([`ordinary_as`]).
    fn ordinary(&self) -> bool {
        self.facts().ordinary
    }
}

fn caps_of(word: &str, casing: Casing) -> Caps {
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return Caps::Unknown;
    };
    if casing != Casing::Mixed || !(first.is_uppercase() || first.is_lowercase()) {
        return Caps::Unknown;
    }
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    // ALL CAPS words in a mixed text are acronyms (NASA, CRM), not names.
    if first.is_uppercase() && letters >= 2 && chars.any(char::is_lowercase) {
        Caps::Yes
    } else {
        Caps::No
    }
}

fn words<'a>(text: &'a str, taken: &[(usize, usize)]) -> Vec<Word<'a>> {
    let mut out = Vec::new();
    let mut start = None;
    let mut sentence = true;
    // What lies between the last word and the next: something other than white space,
    // and a line break.
    let mut gap = Gap::default();
    let mut line_casing = casing(text.split('\n').next().unwrap_or(""));
    let push =
        |out: &mut Vec<Word<'a>>, from: usize, raw_end: usize, sentence: &mut bool, gap: &mut Gap, casing: Casing| {
            let raw = &text[from..raw_end];
            // A possessive is not part of the name (Takeshi's), nor an honorific (Nishimura-san).
            let mut word = raw
                .strip_suffix("'s")
                .or_else(|| raw.strip_suffix("’s"))
                .or_else(|| raw.strip_suffix("'S"))
                .unwrap_or(raw);
            let mut honorific = false;
            if let Some((stem, suffix)) = word.rsplit_once('-')
                && HONORIFIC_SUFFIXES.contains(&suffix.to_lowercase().as_str())
                && !stem.is_empty()
            {
                word = stem;
                honorific = true;
            }
            let word = word.trim_end_matches(['\'', '’', '-']);
            let to = from + word.len();
            let inside_taken = taken.iter().any(|&(s, e)| from < e && to > s);
            if !word.is_empty() && !inside_taken {
                out.push(Word {
                    key: if word.bytes().all(|b| b.is_ascii_lowercase() || b == b'\'' || b == b'-') {
                        Cow::Borrowed(word)
                    } else {
                        Cow::Owned(fold(word))
                    },
                    start: from,
                    end: to,
                    caps: caps_of(word, casing),
                    starts_sentence: *sentence,
                    after_break: gap.broken,
                    after_newline: gap.newline,
                    honorific,
                    facts: OnceCell::new(),
                });
            }
            *sentence = false;
            // What was cut off the word (a possessive) lies between it and the next.
            *gap = Gap {
                broken: raw_end > to,
                newline: false,
            };
        };
    for (i, c) in text.char_indices() {
        let in_word =
            c.is_alphabetic() || is_mark(c) || (start.is_some() && (c == '\'' || c == '’' || c == '-' || c == '.'));
        if in_word {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        if let Some(from) = start.take() {
            // A trailing dot ends the sentence unless the word is a title (Dr.).
            let raw = &text[from..i];
            let (word_end, ends) = match raw.strip_suffix('.') {
                Some(stripped) => (from + stripped.len(), !LISTS.titles.contains(&fold(stripped))),
                None => (i, false),
            };
            push(&mut out, from, word_end, &mut sentence, &mut gap, line_casing);
            if ends {
                sentence = true;
                gap.broken = true;
            }
        }
        if matches!(c, '.' | '!' | '?' | ':' | '\n' | '…' | '¿' | '¡') {
            sentence = true;
        }
        if c == '\n' {
            line_casing = casing(text[i + 1..].split('\n').next().unwrap_or(""));
        }
        gap.broken |= !c.is_whitespace();
        gap.newline |= c == '\n';
    }
    if let Some(from) = start {
        let raw = &text[from..];
        let end = from + raw.trim_end_matches('.').len();
        push(&mut out, from, end, &mut sentence, &mut gap, line_casing);
    }
    out
}

/// Whether a word the lists hold as `listed` is an ordinary one whatever its case: a stop
/// word of the languages we read, a filler, or a list's entry that is also an ordinary word.
fn ordinary_as(key: &str, listed: Option<Listed>) -> bool {
    let lists = &*LISTS;
    matches!(listed, Some(Listed::Ambiguous { .. }))
        || lists.common.contains(key)
        || lists.english.contains(key)
        || key.chars().count() <= 1
}

/// How sure the words before `i` make a name of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cue {
    None,
    Loose,
    Weak,
    Strong,
}

/// The last words of the cues, so that most words need no look at the text before them.
static CUE_ENDS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    CUES.iter()
        .chain(WEAK_CUES)
        .chain(LOOSE_CUES)
        .filter_map(|cue| cue.rsplit(' ').next())
        .map(|last| fold(last.trim_end_matches("'s")))
        .collect()
});

fn cue_before(text: &str, words: &[Word<'_>], i: usize) -> Cue {
    if i == 0 || !CUE_ENDS.contains(&*words[i - 1].key) {
        return if i > 0 && !words[i].after_break && LISTS.titles.contains(&*words[i - 1].key) || words[i].honorific {
            Cue::Strong
        } else {
            Cue::None
        };
    }
    if i > 0 && !words[i].after_break && LISTS.titles.contains(&*words[i - 1].key) {
        return Cue::Strong;
    }
    if words[i].honorific {
        return Cue::Strong;
    }
    // The longest cue is under 40 bytes: only the end of the text before the word counts.
    let start = words[i].start;
    let from = (start.saturating_sub(40)..=start)
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(start);
    let before = text[from..start]
        .trim_end_matches([' ', ',', '!', '\t'])
        .to_lowercase()
        .replace('’', "'");
    let ends_with = |cue: &&str| {
        before.ends_with(*cue)
            && before[..before.len() - cue.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphabetic())
    };
    if CUES.iter().any(ends_with) {
        Cue::Strong
    } else if WEAK_CUES.iter().any(ends_with) {
        Cue::Weak
    } else if LOOSE_CUES.iter().any(ends_with) {
        Cue::Loose
    } else {
        Cue::None
    }
}

/// Where the text's names are, the known ones first.
pub(super) fn find(text: &str, known: &Known, taken: &[(usize, usize)], out: &mut Vec<Finding>) {
    let lists = &*LISTS;
    let words = words(text, taken);
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        // A known whole name, word by word, in any casing.
        if known.firsts.contains(&*word.key)
            && let Some(len) = known.whole.iter().find_map(|whole| {
                let fits = whole.len() <= words.len() - i
                    && whole.iter().zip(&words[i..]).all(|(a, b)| *a == b.key)
                    && words[i + 1..i + whole.len()].iter().all(|w| !w.after_break);
                fits.then_some(whole.len())
            })
        {
            let last = extend(text, &words, i, i + len - 1, known, Cue::Strong);
            out.push(Finding::new(Kind::Person, word.start, words[last].end));
            i = last + 1;
            continue;
        }
        if word.caps == Caps::No && !known.parts.contains(&*word.key) && !lists.particles.contains(&*word.key) {
            // Most words are lower case in a text that capitalises, and start nothing;
            // but a list's name after a cue does (talk to priya). A cue needs a word
            // before that ends one, or a title: most words are passed over on that.
            let may_cue = word.honorific
                || i > 0 && (CUE_ENDS.contains(&*words[i - 1].key) || lists.titles.contains(&*words[i - 1].key));
            let listed = || matches!(word.listed(), Some(Listed::Given | Listed::Family | Listed::MoreFamily));
            if !(may_cue && word.key.chars().count() >= 3 && listed() && cue_before(text, &words, i) >= Cue::Weak) {
                i += 1;
                continue;
            }
        }
        if lists.never.contains(&*word.key) && !known.parts.contains(&*word.key) {
            i += 1;
            continue;
        }
        // The words after a business's or a brand's word are its name's (Padaria Pão
        // Dourado, Microsoft Teams), not a person's.
        if i > 0
            && !word.after_break
            && words[i - 1].caps != Caps::No
            && lists.business.contains(&*words[i - 1].key)
            && !known.parts.contains(&*word.key)
        {
            i += 1;
            continue;
        }
        // A title is not part of the name it introduces (Don Andrés, Herr von Bülow).
        if lists.titles.contains(&*word.key) && words.get(i + 1).is_some_and(|next| !next.after_break) {
            i += 1;
            continue;
        }
        // A known name with a possessive s and no apostrophe (Lisas alte Firma).
        if word.caps == Caps::Yes
            && let Some(stem) = word.key.strip_suffix('s')
            && stem.chars().count() >= 2
            && known.parts.contains(stem)
            && text[word.start..word.end].ends_with('s')
        {
            out.push(Finding::new(Kind::Person, word.start, word.end - 1));
            i += 1;
            continue;
        }
        let mut cue = if i > 0 || word.honorific {
            cue_before(text, &words, i)
        } else {
            Cue::None
        };
        // Two capitalised words that no language calls ordinary, inside a sentence: a
        // name (Sempre Wiremu Ngata e…), as a cue would say.
        cue = cue.max(pair(text, &words, i, known));
        // In a text without capitals, two words that no language calls ordinary after a
        // loose cue (i took over from tāne waititi).
        if cue == Cue::Loose
            && word.caps == Caps::Unknown
            && words
                .get(i + 1)
                .is_some_and(|next| close(text, &words, i + 1) && [word, next].iter().all(|w| unlisted_word(w, known)))
        {
            cue = Cue::Weak;
        }
        if cue < Cue::Strong && known_context(text, &words, i, known, out.last()) {
            cue = Cue::Strong;
        }
        let Some(sure) = start_of_name(&words, i, known, cue) else {
            i += 1;
            continue;
        };
        // A given name that no list holds, just before a family name (Amélie Girard).
        let mut first = i;
        if i > 0 && word.listed().is_some_and(Listed::sure) && word.listed() != Some(Listed::Given) && !word.after_break
        {
            let before = &words[i - 1];
            if before.caps == Caps::Yes
                && !lists.never.contains(&*before.key)
                && !before.ordinary()
                && !lists.titles.contains(&*before.key)
                && !lists.role_nouns.contains(&*before.key)
                && out.last().is_none_or(|f: &Finding| f.end < before.start)
            {
                first = i - 1;
            }
        }
        let last = extend(text, &words, i, i, known, cue);
        // A capitalised word no list holds and no language calls ordinary, inside a
        // sentence before a name of two words or more, is its first (with Severo Álvaro
        // Barroso).
        if first == i && last > i && i > 0 && !word.after_break {
            let before = &words[i - 1];
            if before.caps == Caps::Yes
                && !before.starts_sentence
                && before.listed().is_none()
                && !before.ordinary()
                && !lists.never.contains(&*before.key)
                && !lists.titles.contains(&*before.key)
                && !lists.role_nouns.contains(&*before.key)
                && out.last().is_none_or(|f: &Finding| f.end < before.start)
            {
                first = i - 1;
            }
        }
        let whole = last > i || first < i;
        if !whole && cue < Cue::Strong && !known.parts.contains(&*word.key) && named_thing(&words, i) {
            i += 1;
            continue;
        }
        if sure || whole {
            // A lone word that merely starts a sentence needs the list to be sure of it.
            let lone_sentence_start =
                !whole && word.starts_sentence && !known.parts.contains(&*word.key) && cue == Cue::None;
            if (!lone_sentence_start || word.listed() == Some(Listed::Given))
                && let Some(end) = before_business(text, &words, first, last, known)
            {
                out.push(Finding::new(Kind::Person, words[first].start, words[end].end));
            }
        }
        i = last + 1;
    }
    joined_before(&words, out);
}

/// Where the name of words `first..=last` ends when a business's word follows it (Summit
/// Ridge Clinics, Heidemarie Gröttner von Elbstrand Immobilien): before a particle that
/// leads to the business's name, at `last` when a list or the caller knows a part of it
/// as a name (Anna Schmidt Consulting still names her), or nowhere.
fn before_business(text: &str, words: &[Word<'_>], first: usize, last: usize, known: &Known) -> Option<usize> {
    let lists = &*LISTS;
    let business_after = words.get(last + 1).is_some_and(|next| {
        close(text, words, last + 1) && next.caps != Caps::No && lists.business.contains(&*next.key)
    });
    if !business_after {
        return Some(last);
    }
    if let Some(particle) = (first + 1..=last)
        .rev()
        .find(|&k| lists.particles.contains(&*words[k].key))
    {
        return Some(particle - 1);
    }
    words[first..=last]
        .iter()
        .any(|w| known.parts.contains(&*w.key) || w.listed().is_some_and(Listed::sure))
        .then_some(last)
}

/// Names joined by a conjunction to a name found after them (Immer Bram van 't Hek und
/// Þórður Ásgeirsson; Surtout Marine et Paul).
fn joined_before(words: &[Word<'_>], out: &mut Vec<Finding>) {
    let lists = &*LISTS;
    let mut more = Vec::new();
    for found in out.iter().filter(|f| f.kind == Kind::Person) {
        let Ok(k) = words.binary_search_by_key(&found.start, |w| w.start) else {
            continue;
        };
        if k < 2 || words[k].after_break || words[k - 1].after_break || !CONJUNCTIONS.contains(&&*words[k - 1].key) {
            continue;
        }
        let end = k - 2;
        let last = &words[end];
        let covered = |w: &Word<'_>| out.iter().chain(&more).any(|f| f.start <= w.start && w.end <= f.end);
        let name_like = |w: &Word<'_>| match w.caps {
            Caps::Yes => {
                !lists.never.contains(&*w.key)
                    && !lists.titles.contains(&*w.key)
                    && w.key.chars().count() >= 2
                    && if w.ordinary() {
                        !w.starts_sentence && w.listed().is_some() && !lists.common.contains(&*w.key)
                    } else {
                        true
                    }
            }
            Caps::Unknown => w.listed().is_some_and(Listed::sure),
            Caps::No => false,
        };
        if !name_like(last) || covered(last) {
            continue;
        }
        let mut first = end;
        while first > 0 && end - first < 4 && !words[first].after_break {
            let before = &words[first - 1];
            let joins = lists.particles.contains(&*before.key)
                || (name_like(before) && (before.listed().is_some_and(Listed::sure) || !before.starts_sentence));
            if !joins || covered(before) {
                break;
            }
            first -= 1;
        }
        while first < end && lists.particles.contains(&*words[first].key) {
            first += 1;
        }
        more.push(Finding::new(Kind::Person, words[first].start, last.end));
    }
    out.extend(more);
}

/// What the words around `i` say of it as a name, beyond the cues before it: a role beside
/// it ("Hēmi Te Awa, our data lead"), a name joined to it (Shawn and Ifeoma), a pronoun
/// opening the next sentence (Raju would love… He has been asking), or its being a short
/// form of a name known whole (Franzi of Franziska).
fn known_context(text: &str, words: &[Word<'_>], i: usize, known: &Known, last: Option<&Finding>) -> bool {
    let lists = &*LISTS;
    let word = &words[i];
    let key = &*word.key;
    if lists.common.contains(key)
        || lists.never.contains(key)
        || lists.titles.contains(key)
        || known.parts.contains(key)
    {
        return false;
    }
    let listed = word.listed();
    let plain = !word.ordinary() && key.chars().count() >= 2;
    let name_like = match word.caps {
        Caps::Yes => plain || listed.is_some(),
        Caps::Unknown => listed.is_some_and(Listed::sure) || (plain && key.chars().count() >= 3 && !verb_like(key)),
        Caps::No => false,
    };
    if !name_like {
        return false;
    }
    if (plain || word.caps == Caps::Yes && !word.starts_sentence) && known.short_form(key) {
        return true;
    }
    let joined = i >= 2
        && !word.after_break
        && !words[i - 1].after_break
        && CONJUNCTIONS.contains(&&*words[i - 1].key)
        && last.is_some_and(|f| f.kind == Kind::Person && f.end == words[i - 2].end);
    if joined && (plain || listed.is_some() || (word.caps == Caps::Yes && odd_after(words, i))) {
        return true;
    }
    beside_role(text, words, i) || pronoun_after(text, words, i, listed, plain)
}

/// Whether the lists hold a word as a given name only: after a particle it is no family
/// name (Alejandro y Sofía; el Amex de Pablo).
fn given_only(word: &Word<'_>) -> bool {
    word.listed() == Some(Listed::Given) && !LISTS.family_name(&word.key)
}

/// Whether a word of a text without capitals may be part of a name no list holds.
fn unlisted_word(word: &Word<'_>, known: &Known) -> bool {
    word.caps == Caps::Unknown
        && !word.ordinary()
        && !verb_like(&word.key)
        && !LISTS.never.contains(&*word.key)
        && !known.parts.contains(&*word.key)
        && word.key.chars().count() >= 3
}

/// Whether only white space or an apostrophe lies between words `k - 1` and `k` (van 't Hek).
fn close(text: &str, words: &[Word<'_>], k: usize) -> bool {
    text[words[k - 1].end..words[k].start]
        .chars()
        .all(|c| c.is_whitespace() && c != '\n' || c == '\'' || c == '’')
}

/// Whether only white space and a comma lie between words `k - 1` and `k`.
fn comma_between(text: &str, words: &[Word<'_>], k: usize) -> bool {
    let gap = &text[words[k - 1].end..words[k].start];
    gap.contains(',') && gap.chars().all(|c| c == ',' || c.is_whitespace())
}

/// Whether the name starting at word `i` stands beside a role with a comma between
/// (Our COO, Caroline Cross; Hēmi Te Awa, our data lead; Kahurangi, Geschäftsführung).
fn beside_role(text: &str, words: &[Word<'_>], i: usize) -> bool {
    let lists = &*LISTS;
    let is_role = |w: &Word<'_>| lists.role_nouns.contains(&*w.key);
    // Before: a possessive's role, then the comma.
    if i > 0 && comma_between(text, words, i) {
        let mut start = i - 1;
        while start > 0 && i - 1 - start < 5 && !words[start].after_break && !words[start].starts_sentence {
            start -= 1;
        }
        let segment = &words[start..i];
        if segment.len() <= 5 && lists.possessives.contains(&*segment[0].key) && segment.iter().any(is_role) {
            return true;
        }
    }
    // After: up to four words of the name, the comma, then the role (alone, or after a
    // possessive).
    let Some(j) = (i + 1..words.len().min(i + 5)).find(|&j| words[j].after_break) else {
        return false;
    };
    let of_name = words[i + 1..j]
        .iter()
        .all(|w| w.caps != Caps::No || lists.particles.contains(&*w.key));
    if !of_name || !comma_between(text, words, j) {
        return false;
    }
    let after: Vec<&Word<'_>> = words[j..]
        .iter()
        .take(4)
        .enumerate()
        .take_while(|(n, w)| *n == 0 || !w.after_break)
        .map(|(_, w)| w)
        .collect();
    after.first().is_some_and(|w| is_role(w))
        || (after.first().is_some_and(|w| lists.possessives.contains(&*w.key)) && after[1..].iter().any(|w| is_role(w)))
}

/// Whether the sentence after the one word `i` opens with a personal pronoun that points
/// back at it, `i` being the first name-like word of its own sentence.
fn pronoun_after(text: &str, words: &[Word<'_>], i: usize, listed: Option<Listed>, plain: bool) -> bool {
    let word = &words[i];
    // The first name-like word of its sentence: after none but ordinary words (Just that
    // Raju…), or a text without capitals where it opens the sentence or follows "that".
    let mut s = i;
    while s > 0 && !words[s].starts_sentence {
        s -= 1;
    }
    let first_of_sentence = match word.caps {
        Caps::Yes => words[s..i]
            .iter()
            .all(|w| w.caps == Caps::No || w.ordinary() || w.starts_sentence),
        _ => {
            i == s
                || ["that", "dass", "que", "just", "only", "nur", "juste", "solo", "so"].contains(&&*words[i - 1].key)
                    && i - s <= 3
        }
    };
    if !first_of_sentence {
        return false;
    }
    let Some(next) = words[i + 1..].iter().take(20).find(|w| w.starts_sentence) else {
        return false;
    };
    if next.after_newline {
        return false;
    }
    // Pronouns are short: a word of more than five letters is none.
    if next.end - next.start > 6 {
        return false;
    }
    let pronoun = text[next.start..next.end].to_lowercase();
    let sure = listed.is_some_and(Listed::sure);
    // A capital at a sentence's start says nothing: there the word must be no ordinary one.
    let capitalised = word.caps == Caps::Yes && !word.starts_sentence;
    if PRONOUNS.contains(&pronoun.as_str()) {
        sure || plain || capitalised && listed.is_some()
    } else if FRENCH_PRONOUNS.contains(&pronoun.as_str()) {
        // French capitalises no nouns, so a capitalised word inside a sentence is a name.
        sure || capitalised && (plain || listed.is_some())
    } else if GERMAN_PRONOUNS.contains(&pronoun.as_str()) {
        sure || capitalised && listed.is_some()
    } else {
        false
    }
}

/// What two capitalised words at `i` and after it (perhaps with a particle between) say,
/// when neither is an ordinary word, a business's or a title, after a word that is no
/// part of a heading: a name no list holds (Sempre Wiremu Ngata e…) as a loose cue would
/// say, or, when a list holds one as a family name, as a weak one (Dionisio Romeu Vélez).
fn pair(text: &str, words: &[Word<'_>], i: usize, known: &Known) -> Cue {
    let lists = &*LISTS;
    let odd = |w: &Word<'_>| {
        w.caps == Caps::Yes
            && w.listed()
                .is_none_or(|l| matches!(l, Listed::Family | Listed::MoreFamily))
            && !w.ordinary()
            && !lists.never.contains(&*w.key)
            && !lists.titles.contains(&*w.key)
            && !lists.role_nouns.contains(&*w.key)
            && !known.parts.contains(&*w.key)
            && w.key.chars().count() >= 2
    };
    let apart = |w: &Word<'_>| w.after_break || w.after_newline || w.starts_sentence;
    let Some(mut next) = words.get(i + 1) else {
        return Cue::None;
    };
    let listed = |w: &Word<'_>| w.listed().is_some_and(Listed::sure);
    // With a particle between (Gruffudd ap Rhys) when a list holds one of the two: the
    // nouns of German are capitalised (Angebot von Zendesk).
    if lists.particles.contains(&*next.key)
        && next.caps == Caps::No
        && !apart(next)
        && let Some(after) = words.get(i + 2)
        && (NAME_PARTICLES.contains(&&text[next.start..next.end])
            || (listed(&words[i]) || listed(after)) && !given_only(after))
    {
        next = after;
    }
    let second = odd(next) || (next.caps == Caps::Yes && listed(next) && !next.ordinary());
    // After an article it is a thing's name (el Amex de Pablo, the Summit Ridge).
    let after_article = i > 0
        && !words[i].after_break
        && [
            "the", "el", "la", "le", "les", "los", "las", "der", "die", "das", "den", "un", "une", "una",
        ]
        .contains(&&*words[i - 1].key);
    if !odd(&words[i]) || !second || apart(next) || after_article {
        return Cue::None;
    }
    // In a heading every word is capitalised; in speech the word before is not, or
    // opens the sentence.
    let in_speech = i == 0
        || words[i].after_break
        || words[i].starts_sentence
        || words[i - 1].caps != Caps::Yes
        || words[i - 1].starts_sentence;
    if !in_speech {
        Cue::None
    } else if words[i].listed().is_some() || next.listed().is_some() {
        Cue::Weak
    } else {
        Cue::Loose
    }
}

/// Whether an unlisted word in a text without capitals reads as a verb, an adverb or a
/// role rather than a family name (anna wants, priya quickly, talk to support).
fn verb_like(key: &str) -> bool {
    key.len() < 3
        || ["s", "ed", "ing", "ly"]
            .iter()
            .any(|end| key.ends_with(end) && !key.ends_with("ss"))
        || LISTS.roles.contains(key)
        || [
            "support", "sales", "team", "everyone", "someone", "anyone", "them", "us", "legal", "billing", "finance",
        ]
        .contains(&key)
}

/// Words before a name that make it a thing's (the Denver plan, our Marvin), and words
/// after it that say what thing (Vienna tier, Atlas app).
const THING_BEFORE: &[&str] = &[
    "the", "our", "your", "their", "its", "der", "die", "das", "el", "los", "las", "les", "in", "near", "em", "nach",
    "outgrew", "do", "du", "en", "plan", "plano", "tarif", "migrated", "switched",
];

/// Verbs of using a thing, before it or before an article and it (we use Iris, a gente
/// usa o Iris).
const USING: &[&str] = &[
    "use",
    "uses",
    "using",
    "used",
    "nutzen",
    "nutzt",
    "verwenden",
    "usa",
    "usamos",
    "usam",
    "usan",
    "utilise",
    "utilisons",
    "utilisez",
    "usar",
];
const ARTICLES: &[&str] = &["o", "a", "the", "el", "la", "le", "l", "den", "das", "die"];
const THING_AFTER: &[&str] = &[
    "plan",
    "plans",
    "tier",
    "package",
    "edition",
    "app",
    "version",
    "release",
    "licence",
    "license",
    "subscription",
    "bundle",
    "integration",
    "plugin",
    "api",
    "dashboard",
    "feature",
    "module",
    "workspace",
    "office",
    "branch",
    "server",
    "store",
    "brand",
    "product",
    "model",
    "tarif",
    "paket",
    "abo",
    "plano",
    "offre",
    "forfait",
];

/// Whether the word after `i` is a capitalised one that no language calls ordinary nor a
/// business's (von Davit Gelashvili, not from Summit Ridge Clinics).
fn odd_after(words: &[Word<'_>], i: usize) -> bool {
    words.get(i + 1).is_some_and(|next| {
        !next.after_break
            && !next.starts_sentence
            && next.caps == Caps::Yes
            && !next.ordinary()
            && !LISTS.never.contains(&*next.key)
    })
}

/// Whether the lone name-like word `i` names a thing rather than a person.
fn named_thing(words: &[Word<'_>], i: usize) -> bool {
    let before = i.checked_sub(1).map(|b| &words[b]).filter(|_| !words[i].after_break);
    let after = words.get(i + 1).filter(|a| !a.after_break);
    let used = i >= 2
        && before.is_some_and(|b| ARTICLES.contains(&b.key.as_ref()) && !b.after_break)
        && USING.contains(&words[i - 2].key.as_ref());
    used || before.is_some_and(|b| THING_BEFORE.contains(&b.key.as_ref()) || USING.contains(&b.key.as_ref()))
        || after.is_some_and(|a| THING_AFTER.contains(&a.key.as_ref()))
}

/// Whether word `i` may start a name: `Some(true)` when it is one alone, `Some(false)`
/// when it is one only with another part of a name after it, `None` when it is not.
fn start_of_name(words: &[Word<'_>], i: usize, known: &Known, cue: Cue) -> Option<bool> {
    let lists = &*LISTS;
    let word = &words[i];
    if known.parts.contains(&*word.key) {
        // A known part that is an ordinary word (Will, Rose) must look like a name.
        return Some(
            known.listed.contains(&*word.key)
                || word.listed().is_some_and(Listed::sure)
                || !word.ordinary()
                || word.caps == Caps::Yes
                || cue == Cue::Strong,
        );
    }
    // A bare line break may split a name (Jay⏎Thomas).
    let next = words
        .get(i + 1)
        .filter(|n| !n.after_break && (!n.starts_sentence || n.after_newline));
    if lists.particles.contains(&*word.key) {
        // van der Berg after a title, or Ó Dhomhnaill.
        let named_after = next.is_some_and(|n| n.caps == Caps::Yes || n.listed().is_some());
        return (named_after && (cue == Cue::Strong || word.caps == Caps::Yes)).then_some(false);
    }
    if lists.common.contains(&*word.key) {
        return None;
    }
    // An ordinary word that is also a name starts one only before a family name (Rose
    // Miller), not before a given name (Tell Emily, Ask Oluwaseun).
    // Past particles (Josué da Conceição).
    let next = next.and_then(|n| {
        let skip = words[i + 1..]
            .iter()
            .take(3)
            .take_while(|w| lists.particles.contains(&*w.key) && w.caps == Caps::No && !w.after_break)
            .count();
        if skip == 0 {
            Some(n)
        } else {
            words.get(i + 1 + skip).filter(|w| !w.after_break)
        }
    });
    let before_family = next.is_some_and(|n| {
        !n.honorific
            && match n.listed() {
                // After a weak cue, before any name (Hi, I'm Holly Alexander).
                Some(listed) => {
                    (listed.family() || lists.family_name(&n.key) || cue >= Cue::Weak && listed.sure())
                        && n.caps != Caps::No
                }
                None => n.caps == Caps::Yes && !n.ordinary(),
            }
    });
    match (word.listed(), word.caps) {
        (Some(Listed::Given), Caps::Yes | Caps::Unknown) => Some(true),
        (Some(Listed::Family), Caps::Yes) => Some(!word.starts_sentence || cue > Cue::None),
        (Some(Listed::Family), Caps::Unknown) => Some(true),
        (Some(Listed::MoreFamily), Caps::Yes | Caps::Unknown) => Some(cue >= Cue::Weak),
        (Some(Listed::Given | Listed::Family | Listed::MoreFamily), Caps::No) => Some(cue >= Cue::Weak),
        (Some(Listed::Ambiguous { .. }), Caps::Yes | Caps::Unknown) if cue == Cue::Strong => Some(true),
        // Capitalised inside a sentence of a text that capitalises, a name that is also an
        // ordinary word is the name (Só que Carol adoraria, which Regina had cancelled).
        (Some(Listed::Ambiguous { family: false }), Caps::Yes) if !word.starts_sentence => Some(true),
        (Some(Listed::Ambiguous { .. }), Caps::Yes | Caps::Unknown) => before_family.then_some(false),
        (Some(Listed::Ambiguous { .. }), Caps::No) => None,
        (None, Caps::Yes) => match cue {
            Cue::Strong => Some(true),
            // After a weaker cue, a name no list holds needs a second capitalised word; after
            // a loose one it must be no ordinary word itself (from Summit Ridge Clinics).
            Cue::Weak => Some(false),
            Cue::Loose => (!word.ordinary() || odd_after(words, i)).then_some(false),
            Cue::None => None,
        },
        (None, Caps::Unknown) => {
            (cue >= Cue::Weak && word.key.chars().count() >= 3 && !verb_like(&word.key) && !word.ordinary())
                .then_some(true)
        }
        (None, Caps::No) => None,
    }
}

/// The last word of the name that starts at `first` and runs at least to `last`: on through
/// the parts of names (and the particles between them); after a given name, a known part
/// or a cue, through one more capitalised word that is no ordinary word (a family name no
/// list holds).
fn extend(text: &str, words: &[Word<'_>], first: usize, mut last: usize, known: &Known, cue: Cue) -> usize {
    let lists = &*LISTS;
    let mut j = last + 1;
    let mut unlisted = 0;
    while j < words.len() && j - first <= 4 {
        let next = &words[j];
        if next.after_break || (next.starts_sentence && !next.after_newline) {
            break;
        }
        let listed = next.listed();
        let knows = known.parts.contains(&*next.key);
        let after_given = words[last].listed() == Some(Listed::Given)
            || known.parts.contains(&*words[last].key)
            || (last == first && cue > Cue::None);
        // A line break inside a name only between parts the lists or the caller know, or
        // after a given name before a capitalised word.
        if next.after_newline
            && !(knows
                || listed.is_some_and(Listed::sure)
                || (after_given
                    && next.caps == Caps::Yes
                    && (!next.ordinary() || cue == Cue::Strong && listed.is_some_and(Listed::family))))
        {
            break;
        }
        // van der Berg, García y Pérez, Ó Dhomhnaill, op de Beeck: particles join what
        // looks like a name.
        // Dutch "in 't" is a particle too (Maarten in 't Veld), "in" alone is not.
        let particles = words[j..]
            .iter()
            .enumerate()
            .take(3)
            .take_while(|(n, w)| {
                lists.particles.contains(&*w.key) || w.key == "in" && words.get(j + n + 1).is_some_and(|t| t.key == "t")
            })
            .count();
        if particles > 0
            && (j + 1..=j + particles).all(|k| k < words.len() && close(text, words, k))
            && words.get(j + particles).is_some_and(|after| {
                !lists.particles.contains(&*after.key)
                    && match after.listed() {
                        // A given name only after a particle of names (Gruffudd ap Rhys).
                        Some(listed) => {
                            listed.family()
                                || lists.family_name(&after.key)
                                || listed == Listed::Given
                                    && after.caps == Caps::Yes
                                    && words[j..j + particles]
                                        .iter()
                                        .any(|p| NAME_PARTICLES.contains(&&text[p.start..p.end]))
                        }
                        None => after.caps != Caps::No && !after.ordinary(),
                    }
            })
        {
            j += particles;
            continue;
        }
        if lists.never.contains(&*next.key) && !knows {
            break;
        }
        let fits = match (listed, next.caps) {
            _ if knows => next.caps != Caps::No || !next.ordinary(),
            (Some(Listed::Given | Listed::Family | Listed::MoreFamily), Caps::Yes | Caps::Unknown) => true,
            (Some(Listed::Ambiguous { .. }), Caps::Yes) => true,
            // michael bass, lisa baker: after a given name, a family name that is a word too.
            (Some(Listed::Ambiguous { family: true }), Caps::Unknown) => {
                after_given && !lists.common.contains(&*next.key)
            }
            // wendy flynn, in a text that capitalises but not this name.
            (Some(listed), Caps::No) => {
                words[first].caps == Caps::No && listed.family() && after_given && !lists.common.contains(&*next.key)
            }
            // hi! kevin sarma here: after a cue, one more word of a text without capitals.
            (None, Caps::Unknown) => {
                let fits =
                    unlisted == 0 && last == first && cue >= Cue::Weak && !next.ordinary() && !verb_like(&next.key);
                unlisted += usize::from(fits);
                fits
            }
            (None, Caps::Yes) => {
                let fits = unlisted == 0 && after_given && !next.ordinary();
                unlisted += usize::from(fits);
                fits
            }
            _ => false,
        };
        if !fits {
            break;
        }
        last = j;
        j += 1;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, known: &Known) -> Vec<String> {
        let mut out = Vec::new();
        find(text, known, &[], &mut out);
        out.into_iter().map(|f| text[f.start..f.end].to_owned()).collect()
    }

    #[test]
    fn known_names_lists_titles_and_cues() {
        let mut known = Known::default();
        known.add_speaker("Anna Schmidt");
        known.add_speaker("Interviewer");
        known.add_speaker("Speaker 2");
        assert_eq!(
            names("Anna Schmidt said Anna would call.", &known),
            ["Anna Schmidt", "Anna"]
        );
        assert!(names("The Interviewer asked.", &known).is_empty());
        let none = Known::default();
        assert_eq!(
            names("I spoke with Maria González yesterday.", &none),
            ["Maria González"]
        );
        assert_eq!(names("Then Mrs Patel and Dr. Weber came.", &none), ["Patel", "Weber"]);
        assert_eq!(names("My name is Zbigniew, hi.", &none), ["Zbigniew"]);
        assert_eq!(names("Mein Kollege Jonas hat das gemacht.", &none), ["Jonas"]);
        assert!(names("We will use Excel in May in Berlin.", &none).is_empty());
        assert!(names("Will it work? May be.", &none).is_empty());
    }

    #[test]
    fn a_known_name_in_every_form() {
        let mut known = Known::default();
        known.add_speaker("José Nuñez");
        known.add_speaker("Priya Raman");
        for (text, name) in [
            ("then jose nuñez called", "jose nuñez"),
            ("THEN JOSÉ NUÑEZ CALLED", "JOSÉ NUÑEZ"),
            ("Jose Nunez said so.", "Jose Nunez"),
            ("We asked Nuñez twice.", "Nuñez"),
            ("That was Priya's idea.", "Priya"),
            ("I met Raman-san there.", "Raman"),
            ("It was Priya\nRaman who wrote it.", "Priya\nRaman"),
            ("ok so priya handled it", "priya"),
        ] {
            assert_eq!(names(text, &known), [name], "{text}");
        }
    }

    #[test]
    fn a_name_no_list_holds_by_its_cues() {
        let none = Known::default();
        assert_eq!(
            names("This is Adebukola Aderibigbe, I run the finance side.", &none),
            ["Adebukola Aderibigbe"]
        );
        assert_eq!(
            names("I took over the account from Iwo Parzonka last year.", &none),
            ["Iwo Parzonka"]
        );
        assert_eq!(names("My name is Saoirse den Teuling.", &none), ["Saoirse den Teuling"]);
        assert_eq!(names("Ask Nishimura-san about it.", &none), ["Nishimura"]);
        assert_eq!(
            names("We moved from Zendesk to the Denver plan in March.", &none),
            Vec::<String>::new()
        );
        assert_eq!(names("Tell Emily", &none), ["Emily"]);
    }

    #[test]
    fn a_speaker_label_in_a_script_without_capitals() {
        let mut known = Known::default();
        known.add_speaker("प्रिया शर्मा");
        assert_eq!(names("प्रिया शर्मा: नमस्ते", &known), ["प्रिया शर्मा"]);
        assert_eq!(names("फिर प्रिया ने कहा", &known), ["प्रिया"]);
    }

    #[test]
    fn names_are_learned_and_found_in_their_parts() {
        let mut known = Known::default();
        assert!(known.learn("Iwo Parzonka"));
        assert!(!known.learn("Iwo Parzonka"));
        assert_eq!(names("parzonka agreed, and IWO too", &known), ["parzonka", "IWO"]);
        let mut known = Known::default();
        known.add_from_address("maria.lopez@example.org");
        known.add_from_address("sales.team@example.org");
        assert_eq!(names("then maria sent it to the sales team", &known), ["maria"]);
    }

    #[test]
    fn names_by_what_stands_around_them() {
        let none = Known::default();
        for (text, found) in [
            // A role beside the name, before or after it, with a comma.
            ("Zanele Mokoena, our finance lead, signed it.", &["Zanele Mokoena"][..]),
            ("Unsere Leiterin der Buchhaltung, Oyelaran, war dagegen.", &["Oyelaran"]),
            ("Tauriel, Geschäftsführung bei uns, wollte es.", &["Tauriel"]),
            // Names joined to a name.
            (
                "Mostly Shawn and Oyelaran, the rest never log in.",
                &["Shawn", "Oyelaran"],
            ),
            (
                "Immer Ingrid Vestby und Paul, die anderen nicht.",
                &["Ingrid Vestby", "Paul"],
            ),
            // A pronoun opening the next sentence.
            ("I think that Tunde would like it. He asked twice.", &["Tunde"]),
            (
                "Juste que Quentinou aimerait le tester. Il demande depuis mars.",
                &["Quentinou"],
            ),
            ("just that lachu would love it. she asked twice.", &["lachu"]),
            // Particles in a row, an apostrophe among them, and a name behind a preposition.
            ("I took over from Jan van 't Hoff in May.", &["Jan van 't Hoff"]),
            ("Con Tamar Gelashvili, que lleva los datos.", &["Tamar Gelashvili"]),
            ("i took over from tamati rangi in july.", &["tamati rangi"]),
        ] {
            assert_eq!(names(text, &none), found, "{text}");
        }
        for text in [
            "Wir hatten ein Angebot von Zendesk und eins von Händlern.",
            "Then Trello, obviously. It was the cheapest.",
            "Der Bericht kam spät. Er war zu lang.",
            "Sempre Bem, o nosso plano, custa menos.",
        ] {
            assert!(names(text, &none).is_empty(), "{text}: {:?}", names(text, &none));
        }
    }

    #[test]
    fn short_and_possessive_forms_of_a_known_name() {
        let mut known = Known::default();
        known.learn("Franziska Hiller");
        known.learn("Stefanie Albers");
        known.learn("Lisa Otto");
        for (text, found) in [
            ("Bei uns heißt sie nur Franzi.", "Franzi"),
            ("Steffi hat den Dienstag damit verbracht.", "Steffi"),
            ("Lisas alte Firma hat es genutzt.", "Lisa"),
        ] {
            assert_eq!(names(text, &known), [found], "{text}");
        }
        // Only a given name's start is a short form.
        assert_eq!(names("So Hil and Alb said no.", &known), Vec::<String>::new());
    }

    #[test]
    fn how_a_line_is_written() {
        assert_eq!(casing("Interviewer: so i think we should go."), Casing::Lower);
        assert_eq!(casing("INTERVIEWER: SO WE WENT TO THE BANK."), Casing::Upper);
        assert_eq!(casing("Anna: We went there with Tom."), Casing::Mixed);
    }
}
