//! The offline persona writer: who one interview's respondent is, in the respondent's own
//! words, with no model and no network.
//!
//! [`offline_persona`] is extractive and deterministic (same input, same output):
//!
//! 1. **Material.** Only the utterances of respondents are read. When no utterance is marked as
//!    a respondent's, the utterances of every speaker but the one asking the most questions are
//!    read instead (with nobody asking, all of them). The persona is named after the speaker of
//!    the material with the most words (ties: who spoke first).
//! 2. **Sentences.** Each utterance is split into sentences (UAX #29); a sentence longer than
//!    [`MAX_SENTENCE_WORDS`] words (a transcript without punctuation) is cut into clauses at
//!    commas and dashes, and a clause still too long into windows of words. Fillers of speech at
//!    the start ("Um,", "So", "Yeah,") are left out; questions and sentences of fewer than
//!    [`MIN_WORDS`] words are not used. Every unit stays a verbatim slice of its utterance.
//! 3. **Cues.** Units are classified by cue phrases, matched at word boundaries in lower case
//!    with typographic apostrophes made straight: goals ("I need", "I'm trying to"), pains
//!    ("frustrating", "takes forever", "can't"), behaviours and workarounds ("every morning",
//!    "spreadsheet", "by hand"), motivations ("I care about", "matters") and the ideal solution
//!    ("ideally", "I wish", "magic wand"). A unit with an ideal-solution cue is about the ideal
//!    solution; otherwise the earliest goal, pain, behaviour or strong motivation cue decides
//!    (the main clause comes first: "I want to stop wasting time" is a goal); a unit with only a
//!    reason ("because", "so that") is a motivation. Background (team, company, experience,
//!    location) is recognised on its own, and the role from "I'm a …", "I work as …", "my role is
//!    …", "as a …" followed by a role noun (manager, dispatcher, Teamleiterin…), or "I lead / I
//!    manage …" followed by a team or an organisation; the role is the phrase cut at the end of
//!    its clause, at most [`MAX_ROLE_CHARS`] characters. Cues cover English, German, French,
//!    Spanish and Russian: a recognised `language` gets its own cues and English ones (people
//!    switch), an absent or other language gets all of them.
//! 4. **Ranking.** Each list keeps at most [`MAX_ITEMS`] units, the most informative first
//!    (distinct longer words, cue hits, numbers; very long units lose), near-duplicates dropped.
//!    Quotes ([`MIN_QUOTES`] to [`MAX_QUOTES`]) are taken in turn from pains, goals, the ideal
//!    solution, motivations and behaviours, and, when there are too few, from the remaining
//!    sentences. Jobs to be done are the goals, written "When <situation>, I want to <goal>" when
//!    an English goal sentence names its situation ("when", "whenever", "every time"), and the
//!    goal sentence as it stands otherwise.
//!
//! Every item, quote and role is the respondent's own text; only the summary and the jobs to be
//! done add a few fixed template words, and the summary says that it was extracted without a
//! model ([`EXTRACTED_NOTE`]). [`render_markdown`] writes the persona as a document with a fixed
//! set of sections, empty ones saying so ([`NOTHING_HERE`]).

use std::collections::BTreeSet;
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::text::{Spaces, normalize, one_line};
use crate::domain::persona::{Persona, PersonaQuote};
use crate::domain::record::Utterance;
use crate::search::bm25::Analyzer;

/// Items per list at most (goals, pains, behaviours, motivations, jobs to be done).
pub const MAX_ITEMS: usize = 6;
/// Quotes at most.
pub const MAX_QUOTES: usize = 6;
/// Quotes at least, when the respondent said that many sentences.
pub const MIN_QUOTES: usize = 3;
/// Characters of the role phrase at most.
pub const MAX_ROLE_CHARS: usize = 80;
/// Sentences with fewer words ("Yes, exactly.") say nothing about the respondent.
pub const MIN_WORDS: usize = 3;
/// Longer sentences are cut into clauses.
pub const MAX_SENTENCE_WORDS: usize = 50;
/// The last sentence of every summary.
pub const EXTRACTED_NOTE: &str = "Extracted from the interview's own words; no model was used.";
/// What an empty section of the Markdown says.
pub const NOTHING_HERE: &str = "Nothing in the interview speaks to this.";
/// The name of a respondent whom the transcript does not name.
pub const UNNAMED: &str = "Respondent";

/// Words per clause when a long sentence is cut.
const CLAUSE_WORDS: usize = 30;
/// Background sentences at most.
const MAX_BACKGROUND: usize = 3;
/// Ideal-solution sentences at most.
const MAX_IDEAL: usize = 2;
/// Words of a goal or pain quoted in the summary.
const SUMMARY_WORDS: usize = 30;
/// Words of a role phrase at most.
const ROLE_WORDS: usize = 12;
/// Characters that end a clause.
const CLAUSE_PUNCTUATION: [char; 16] = [
    ',', '.', ';', ':', '!', '?', '(', ')', '[', ']', '"', '—', '–', '…', '«', '»',
];

/// The cue phrases of one language, in lower case with straight apostrophes, separated by `|`
/// ([`phrases`]). A phrase matches at word boundaries; a trailing `*` lets it match the start of a
/// longer word (`frustrat*`).
struct Cues {
    /// What the respondent wants to get done.
    goals: &'static str,
    /// What gets in the way.
    pains: &'static str,
    /// How the respondent works today, workarounds included.
    behaviors: &'static str,
    /// Why it matters, said outright.
    motivations: &'static str,
    /// A reason given in passing ("because"): a motivation when nothing else is said.
    reasons: &'static str,
    /// The ideal solution.
    ideal: &'static str,
    /// Background: team, company, experience, location.
    background: &'static str,
    /// Experience: background when the sentence also has a number and a year word.
    tenure: &'static str,
    /// Head count ("employees"): background when the sentence also has a number.
    headcount: &'static str,
    /// "We're a …": background when the sentence also names an organisation.
    organisation: &'static str,
    /// The role follows as it stands ("my role is").
    role_explicit: &'static str,
    /// A role noun must follow within so many words ("I'm a", 4).
    role_noun: &'static [(&'static str, usize)],
    /// "I lead": the clause is the role when a team or an organisation follows.
    role_verb: &'static str,
    /// Words that end a role phrase.
    stops: &'static str,
    /// Words after a role noun that carry the phrase on ("manager at …").
    prepositions: &'static str,
}

static ENGLISH: Cues = Cues {
    goals: "i need | i really need | i just need | we need | we really need | i want | i really want | \
        i just want | we want | i'm trying to | i am trying to | we're trying to | we are trying to | i try to | \
        my goal | our goal | the goal is | i have to | we have to | i've got to | it's important | \
        it is important | it's really important | it's crucial | it's essential | i'd like | i would like | \
        we'd like | we would like | i'm looking for | i am looking for | we're looking for | we are looking for | \
        i hope to | i'm hoping to | my priority | our priority | i must | we must | what i need is | \
        what i want is | all i want | all i need",
    pains: "frustrat* | the problem | a problem | problem is | problems | biggest problem | main problem | \
        the issue | issues with | annoy* | hate* | struggl* | difficult* | hard to | harder to | takes forever | \
        took forever | taking forever | takes ages | takes too long | too long | waste* | wasting | painful | \
        a pain | pain point* | doesn't work | does not work | didn't work | don't work | never works | \
        isn't working | not working | can't | cannot | can not | couldn't | impossible | broken | breaks | \
        tedious | slow* | confus* | nightmare | headache | error-prone | messy | a mess | stuck | lose | losing | \
        worried | worry | stress* | fail* | complain* | time-consuming | time consuming | drives me crazy | \
        drives me nuts | crash* | mistakes | errors | clunky | cumbersome | unreliable | no way to",
    behaviors: "i usually | we usually | usually | every day | every morning | every week | every month | \
        every evening | every night | each day | each week | each morning | daily | weekly | we use | i use | \
        we're using | we are using | i'm using | i am using | we rely on | i rely on | currently | right now i | \
        right now we | at the moment | these days | spreadsheet* | excel | google sheets | workaround* | \
        work around | manually | by hand | i end up | we end up | i always | we always | i typically | \
        we typically | typically | i tend to | we tend to | my routine | copy-paste | copy paste | \
        copy and paste | i go through | i write down | i keep | we keep | first thing | normally | sticky notes | \
        post-it* | whatsapp",
    motivations: "matters | matter to me | i care about | we care about | care about | i love | i enjoy | i like | \
        what i like | i'm proud | proud of | what drives me | motivat* | the reason i | the reason we | \
        that's why | peace of mind | makes me happy",
    reasons: "because | so that | so i can | so we can | so i don't | so we don't | in order to | that way",
    ideal: "ideally | in an ideal world | in a perfect world | i wish | it would be great if | it'd be great if | \
        would be great if | it would be nice if | it'd be nice if | would be nice if | would be amazing | \
        would be awesome | would be perfect | would be ideal | i would love | i'd love | we'd love | \
        we would love | if i could | if we could | if only | the perfect tool | the perfect solution | \
        the ideal tool | the ideal solution | magic wand | my dream | dream tool",
    background: "based in | based out of | i live in | i'm from | i am from | located in | our team of | \
        my team of | a team of | team of | people on my team | people on our team | people in my team | \
        people in our team | years of experience | year of experience | headcount | i work at | i work for | \
        our company | my company | our startup | our business | our agency | our firm",
    tenure: "i've been | i have been | i've worked | i have worked | working | worked | experience | doing this | \
        in this role | in this job | in the industry | joined | since",
    headcount: "employees | people | staff | headcount | dispatchers | drivers | engineers | developers",
    organisation: "we're a | we are a | we're an | we are an | we're about | we are about | we're around | \
        it's a small",
    role_explicit: "my role is | my role's | my title is | my job title is | my official title is | \
        my position is | i work as a | i work as an | i work as",
    role_noun: &[
        ("i'm a", 4),
        ("i'm an", 4),
        ("i am a", 4),
        ("i am an", 4),
        ("i'm the", 4),
        ("i am the", 4),
        ("i'm currently a", 4),
        ("i'm currently the", 4),
        ("i'm", 2),
        ("i am", 2),
        ("as a", 3),
        ("as an", 3),
        ("as the", 3),
        ("my job is", 4),
    ],
    role_verb: "i lead | i manage | i run | i head up | i head | i oversee | i'm responsible for | \
        i am responsible for | i'm in charge of | i am in charge of | i own",
    stops: "and | but | so | because | which | where | who | that | since | though | although | when | while | \
        um | uh | like | basically | i | we | i'm | we're",
    prepositions: "at | for | in | of | with | on | from",
};

static GERMAN: Cues = Cues {
    goals: "ich brauche | wir brauchen | ich benötige | wir benötigen | ich möchte | wir möchten | ich will | \
        wir wollen | ich muss | wir müssen | mein ziel | unser ziel | das ziel ist | es ist wichtig | \
        wichtig ist | ich hätte gern | ich hätte gerne | ich würde gern | ich würde gerne | ich versuche | \
        wir versuchen | ich suche | wir suchen",
    pains: "frustrier* | frust | nervt | nervig | ärgert | ärgerlich | das problem | ein problem | probleme | \
        problem ist | schwierig* | schwer zu | mühsam | umständlich | dauert ewig | dauert zu lange | \
        dauert lange | zeitverschwendung | verschwende* | hasse | funktioniert nicht | klappt nicht | geht nicht | \
        kann nicht | können nicht | kann ich nicht | können wir nicht | fehler | kompliziert | anstrengend | \
        lästig | stress* | unmöglich | langsam | chaos | chaotisch | kaputt | stürzt ab",
    behaviors: "normalerweise | meistens | in der regel | jeden tag | jede woche | jeden morgen | jeden abend | \
        jeden monat | täglich | wöchentlich | wir nutzen | wir benutzen | wir verwenden | ich nutze | \
        ich benutze | ich verwende | wir arbeiten mit | ich arbeite mit | aktuell | derzeit | momentan | zurzeit | \
        im moment | tabelle* | excel* | manuell | von hand | per hand | händisch | workaround | am ende | \
        ich mache das | rufe ich | ich rufe | zettel",
    motivations: "ist mir wichtig | mir ist wichtig | mir geht es um | am herzen | ich liebe | ich mag | \
        gefällt mir | macht mir spaß | stolz | motiviert",
    reasons: "weil | damit | sodass | so dass | deshalb | deswegen",
    ideal: "idealerweise | im idealfall | ideal wäre | optimal wäre | ich wünsche | ich würde mir wünschen | \
        ich wünschte | wäre toll | wäre schön | wäre super | wäre großartig | wäre cool | wäre es toll | \
        wäre es schön | wenn ich könnte | zauberstab | das perfekte | perfekt wäre | mein traum",
    background: "team von | team aus | jahre erfahrung | jahren erfahrung | ich wohne in | ich lebe in | \
        sitzen in | mit sitz in | standort | ich arbeite bei | ich arbeite für | unsere firma | \
        unser unternehmen | unser startup | unser start-up",
    tenure: "seit | arbeite | erfahrung | dabei",
    headcount: "mitarbeiter* | mitarbeitende* | leute | leuten | personen | kollegen",
    organisation: "wir sind ein | wir sind eine | wir sind ungefähr | wir sind etwa | wir sind rund",
    role_explicit: "ich arbeite als | meine rolle ist | meine position ist | meine stelle ist | mein titel ist",
    role_noun: &[("ich bin", 3), ("bin ich", 3), ("als", 2)],
    role_verb: "ich leite | ich führe | ich verantworte | ich betreue",
    stops: "und | aber | weil | denn | also | wo | wenn | ich | wir | dass | sodass | damit | seit | muss | habe | \
        bin | ist",
    prepositions: "bei | für | in | im | von | vom | der | des | mit | am",
};

static FRENCH: Cues = Cues {
    goals: "j'ai besoin | nous avons besoin | on a besoin | je veux | je voudrais | j'aimerais | nous voulons | \
        on veut | je dois | on doit | nous devons | mon objectif | notre objectif | le but | il faut | \
        il me faut | c'est important | il est important | j'essaie de | on essaie de | je cherche | on cherche",
    pains: "frustr* | le problème | un problème | les problèmes | des problèmes | agaçant | agace | énerv* | \
        je déteste | difficile* | dur de | compliqué* | pénible | prend des heures | une éternité | trop long | \
        trop de temps | perte de temps | perd* du temps | ne marche pas | marche pas | ne fonctionne pas | \
        fonctionne pas | je ne peux pas | on ne peut pas | impossible | galère* | lent* | fastidieux | \
        casse-tête | erreurs",
    behaviors: "d'habitude | habituellement | en général | généralement | tous les jours | chaque jour | \
        chaque semaine | toutes les semaines | chaque matin | tous les matins | on utilise | nous utilisons | \
        j'utilise | on se sert | je me sers | actuellement | en ce moment | pour l'instant | tableur | excel | \
        manuellement | à la main | contournement | je finis par | on finit par",
    motivations: "ça compte | compte pour moi | je tiens à | j'adore | j'aime | ce qui me motive | \
        important pour moi | je suis fier | je suis fière | m'importe",
    reasons: "parce qu* | pour que | afin de | afin que | comme ça",
    ideal: "idéalement | dans l'idéal | l'idéal | je rêve | j'aimerais que | j'aimerais bien | ce serait génial | \
        ce serait bien | ce serait super | ce serait top | ce serait parfait | ça serait génial | ça serait bien | \
        si je pouvais | si on pouvait | si nous pouvions | baguette magique | l'outil parfait | l'outil idéal | \
        la solution idéale | la solution parfaite",
    background: "basé à | basée à | basés à | j'habite | je vis à | équipe de | ans d'expérience | \
        notre entreprise | notre société | notre boîte | je travaille chez | je travaille pour",
    tenure: "depuis | travaille | expérience",
    headcount: "salariés | employés | collaborateurs | personnes",
    organisation: "nous sommes une | nous sommes un | on est une | on est un | on est environ | \
        nous sommes environ",
    role_explicit: "je travaille comme | je travaille en tant que | mon rôle est | mon rôle, c'est | \
        mon poste est | mon poste, c'est | mon métier, c'est",
    role_noun: &[
        ("je suis un", 3),
        ("je suis une", 3),
        ("je suis", 3),
        ("en tant que", 3),
    ],
    role_verb: "je dirige | je gère | je manage | je pilote | je suis en charge de",
    stops: "et | mais | donc | parce | car | qui | que | où | quand | je | on | nous",
    prepositions: "chez | dans | de | du | des | à | au | pour | en",
};

static SPANISH: Cues = Cues {
    goals: "necesito | necesitamos | quiero | queremos | quisiera | me gustaría | tengo que | tenemos que | \
        mi objetivo | nuestro objetivo | el objetivo es | la meta | es importante | estoy intentando | intento | \
        intentamos | busco | buscamos | estoy buscando | hay que",
    pains: "frustra* | el problema | un problema | problemas | molest* | odio | difícil* | dificil* | me cuesta | \
        cuesta mucho | tarda mucho | una eternidad | lleva mucho tiempo | perder tiempo | pierdo tiempo | \
        perdemos tiempo | pérdida de tiempo | no funciona | no sirve | no puedo | no podemos | imposible | \
        complicado* | lento* | tedioso | un lío | errores | estrés | agobi*",
    behaviors: "normalmente | por lo general | generalmente | en general | suelo | solemos | todos los días | \
        cada día | cada semana | todas las semanas | cada mañana | todas las mañanas | usamos | uso | utilizamos | \
        utilizo | actualmente | ahora mismo | en este momento | hoy en día | hoja de cálculo | hojas de cálculo | \
        excel | manualmente | a mano | termino | terminamos | acabo | acabamos",
    motivations: "me importa | nos importa | me encanta | me gusta | lo que me motiva | me motiva | \
        importante para mí | orgullos*",
    reasons: "porque | para que | así puedo | así podemos | de modo que | de forma que | para poder",
    ideal: "idealmente | lo ideal | ojalá | me encantaría | sería genial | sería ideal | sería perfecto | \
        sería increíble | estaría genial | estaría bien | si pudiera | si pudiéramos | varita mágica | \
        la herramienta perfecta | la solución perfecta | la herramienta ideal | mi sueño",
    background: "vivo en | equipo de | años de experiencia | nuestra empresa | mi empresa | trabajo en | \
        trabajo para | con sede en",
    tenure: "desde hace | hace | llevo | trabajo | experiencia",
    headcount: "empleados | trabajadores | personas",
    organisation: "somos una | somos un | somos unos | somos unas | somos unas",
    role_explicit: "trabajo como | mi rol es | mi puesto es | mi cargo es | mi función es",
    role_noun: &[("soy", 3), ("como", 2)],
    role_verb: "dirijo | gestiono | coordino | lidero | estoy a cargo de | soy responsable de",
    stops: "y | pero | porque | que | donde | cuando | así | entonces | yo | nosotros",
    prepositions: "en | de | del | para | con",
};

static RUSSIAN: Cues = Cues {
    goals: "мне нужно | мне надо | нам нужно | нам надо | мне нужен | мне нужна | нам нужен | нам нужна | я хочу | \
        мы хотим | моя цель | наша цель | я пытаюсь | мы пытаемся | мне важно | нам важно | я должен | я должна | \
        мы должны | я ищу | мы ищем",
    pains: "раздража* | бесит | проблем* | неудобн* | сложно | трудно | тяжело | долго | занимает много времени | \
        теряем время | теряю время | трата времени | ненавижу | не работает | не работают | не могу | не можем | \
        невозможно | мучение | головная боль | медленно | ошибк* | ужасно | кошмар",
    behaviors: "обычно | каждый день | каждую неделю | каждое утро | каждый месяц | ежедневно | еженедельно | \
        мы используем | я использую | пользуюсь | пользуемся | сейчас | на данный момент | в данный момент | \
        пока что | таблиц* | эксель | excel | вручную | руками | в итоге | приходится | я звоню",
    motivations: "для меня важно | для нас важно | мне нравится | нам нравится | люблю | мотивирует | горжусь",
    reasons: "потому что | так как | чтобы | поэтому",
    ideal: "в идеале | идеально | идеальн* | хотелось бы | было бы здорово | было бы круто | было бы отлично | \
        было бы классно | было бы хорошо | если бы я мог | если бы я могла | если бы можно было | волшебн* | \
        мечта* | мечтаю",
    background: "лет опыта | года опыта | год опыта | в команде | наша команда | команда из | наша компания | \
        в компании | работаю в | живу в | находимся в | стартап",
    tenure: "уже | работаю | опыт | стаж",
    headcount: "сотрудник* | человек | людей",
    organisation: "мы — | мы небольш* | мы крупн*",
    role_explicit: "моя роль | моя должность | по должности я | моя позиция",
    role_noun: &[("я работаю", 2), ("работаю", 2), ("в качестве", 2), ("я", 2)],
    role_verb: "я руковожу | я управляю | я отвечаю за | я возглавляю | я веду",
    stops: "и | но | а | потому | который | которая | где | когда | что | я | мы | так",
    prepositions: "в | во | по | на | из | для | с | у",
};

/// Every language's cues, with the language's code.
static LANGUAGES: [(&str, &Cues); 5] = [
    ("en", &ENGLISH),
    ("de", &GERMAN),
    ("fr", &FRENCH),
    ("es", &SPANISH),
    ("ru", &RUSSIAN),
];

/// Nouns of roles (English, German, French, Spanish, Russian), separated by spaces. `word`
/// matches the word or its plural in `s`/`es`; `word*` the start of a word; `*word*` any part of
/// one (German compounds).
const ROLE_NOUNS: &str = "*manager* lead leader head chief director engineer developer dev devops designer \
    dispatcher founder cofounder owner analyst consultant researcher officer coordinator specialist administrator \
    admin accountant bookkeeper controller teacher nurse doctor physician driver planner operator scientist \
    architect marketer salesperson student freelancer contractor entrepreneur ceo cto cfo coo cmo cpo vp president \
    partner associate assistant agent representative rep supervisor technician mechanic writer editor producer \
    recruiter pm intern programmer tester qa strategist executive buyer clerk therapist pharmacist lawyer attorney \
    chef cook cashier courier trainer coach instructor professor lecturer librarian secretary receptionist advisor \
    adviser broker auditor journalist photographer foreman scheduler *leiter* chefin *entwickler* *disponent* \
    *ingenieur* *berater* gründer* inhaber* geschäftsführer* *planer* *fahrer* *lehrer* verkäufer* *buchhalter* \
    *sachbearbeiter* koordinator* referent* assistent* arzt ärztin pfleger* pflegekraft studentin werkstudent* \
    freiberufler* selbstständig* selbständig* informatiker* techniker* kaufmann kauffrau logistiker* cheffe \
    responsable directeur directrice développeur développeuse ingénieure gérant gérante fondateur fondatrice \
    consultante analyste commercial commerciale comptable chargé chargée infirmier infirmière médecin enseignant \
    enseignante étudiant étudiante technicien technicienne conducteur conductrice chauffeur planificateur \
    planificatrice régulateur régulatrice assistante coordinateur coordinatrice stagiaire indépendant indépendante \
    freelance vendeur vendeuse acheteur acheteuse pdg gerente jefe jefa directora desarrollador desarrolladora \
    ingeniero ingeniera diseñador diseñadora analista fundador fundadora dueño dueña consultor consultora \
    coordinador coordinadora encargado encargada contador contadora contable administrador administradora vendedor \
    vendedora médico médica enfermero enfermera profesora estudiante técnico técnica conductora planificador \
    planificadora despachador despachadora asistente autónomo autónoma líder менеджер* руководител* директор* \
    разработчик* инженер* дизайнер* аналитик* основател* владел* консультант* диспетчер* бухгалтер* продакт* \
    тимлид* водител* специалист* начальник* преподавател* учител* студент* врач* координатор* администратор* \
    предпринимател* фрилансер* программист* тестировщик* маркетолог* юрист* логистом";

/// Teams and organisations, in any of the languages (matched as [`ROLE_NOUNS`]).
const ORGANISATION_NOUNS: &str = "team department group company companies business office unit division store shop \
    restaurant agency practice studio fleet warehouse depot operations ops squad crew program programme product \
    desk shift project startup firm organisation organization people employees staff drivers engineers developers \
    dispatchers nonprofit charity school clinic hospital bakery lab branch region site plant factory function \
    logistics dispatch *team* abteilung* firma *unternehmen* gruppe bereich filiale standort *mitarbeiter* leute \
    personen kollegen *spedition* betrieb agentur praxis lager projekt* disposition équipe* service département \
    entreprise société agence boutique magasin personnes salariés employés projet* cabinet equipo departamento \
    empresa compañía área tienda agencia personas empleados proyecto* oficina cadena команд* отдел* компани* фирм* \
    групп* направлени* проект* сотрудник* человек людей склад* офис* стартап*";

/// Numbers spelled out, in any of the languages.
const NUMBER_WORDS: &str = "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty \
    forty fifty hundred dozen couple zwei drei vier fünf sechs sieben acht neun zehn zwölf zwanzig dreißig hundert \
    deux trois quatre cinq sept huit neuf dix douze vingt trente cent dos tres cuatro cinco seis siete ocho nueve \
    diez doce veinte treinta cien два две три четыре пять шесть семь восемь девять десять двадцать тридцать сто";

/// Words for years, in any of the languages.
const YEAR_WORDS: &str = "year years yrs jahr jahre jahren ans année années año años год года лет";

/// Function words a role phrase does not end on.
const TRAILING_WORDS: &str = "a an the to and our my die das dem den ein eine einer einem eines und la le les l un \
    une et el los las y и";

/// Sounds of hesitation a sentence may start with and lose, when a comma or a space follows.
const NOISE: &str = "um umm uh uhm erm hmm äh ähm öhm euh eh";
/// The same, when a comma follows (with a space they may be words: German "er").
const NOISE_BEFORE_COMMA: &str = "er mm mhm";
/// Words a sentence may start with and lose, when a comma or a space follows and what is left
/// starts with a capital letter, as sentences do ("So I need …", "Honestly, it's …").
const FILLERS: &str = "yeah so and well oh honestly basically also naja pues ну";
/// The same, when a comma follows ("Right, …" but not "Right now …").
const FILLERS_BEFORE_COMMA: &str =
    "yes yep yup okay ok right actually ja genau bon ben alors bah bueno este vale вот так да короче";

/// The persona of the record's respondent(s), from what they said (see the module docs).
pub fn offline_persona(record_name: &str, utterances: &[Utterance], language: Option<&str>) -> Persona {
    let sets = cue_sets(language);
    let material = material(utterances);
    let main = main_speaker(&material);
    let name = main
        .or_else(|| utterances.iter().find(|u| u.is_respondent).map(|u| u.speaker.as_str()))
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or(UNNAMED)
        .to_owned();

    let units = units(&material);
    if units.is_empty() {
        let said = if material.iter().any(|u| !u.text.trim().is_empty()) {
            format!("{name} said too little in this interview to describe who they are.")
        } else {
            let record = one_line(record_name, Spaces::Collapsed);
            if record.is_empty() {
                "There is nothing the respondent said in this interview, so there is nothing to describe.".to_owned()
            } else {
                format!("There is nothing the respondent said in \"{record}\", so there is nothing to describe.")
            }
        };
        return Persona {
            name,
            role: None,
            summary: format!("{said} {EXTRACTED_NOTE}"),
            demographics: None,
            goals: Vec::new(),
            pains: Vec::new(),
            behaviors: Vec::new(),
            motivations: Vec::new(),
            quotes: Vec::new(),
            jobs_to_be_done: Vec::new(),
            ideal_solution: None,
        };
    }

    // The main respondent's sentences first: the role is theirs.
    let by_main: Vec<&Unit> = units
        .iter()
        .filter(|unit| Some(unit.speaker) == main)
        .chain(units.iter().filter(|unit| Some(unit.speaker) != main))
        .collect();
    let role = find_role(&by_main, &sets);

    let mut goals = Vec::new();
    let mut pains = Vec::new();
    let mut behaviors = Vec::new();
    let mut motivations = Vec::new();
    let mut ideal = Vec::new();
    let mut background = Vec::new();
    for unit in &units {
        let class = classify(unit, &sets);
        let is_role = role.as_ref().is_some_and(|role| role.order == unit.order);
        let role_place = role.as_ref().is_some_and(|role| role.place);
        if class.background || (is_role && (role_place || has_listed(unit, ORGANISATION_NOUNS))) {
            background.push(unit);
        }
        let Some((kind, hits)) = class.kind else {
            continue;
        };
        let entry = (unit, informative(unit, hits));
        match kind {
            Kind::Goal => goals.push(entry),
            Kind::Pain => pains.push(entry),
            Kind::Behavior => behaviors.push(entry),
            Kind::Motivation => motivations.push(entry),
            Kind::Ideal => ideal.push(entry),
        }
    }
    let goals = rank(goals, MAX_ITEMS);
    let pains = rank(pains, MAX_ITEMS);
    let behaviors = rank(behaviors, MAX_ITEMS);
    let motivations = rank(motivations, MAX_ITEMS);
    let mut ideal = rank(ideal, MAX_IDEAL);
    ideal.sort_by_key(|unit| unit.order);
    let mut kept: Vec<&Unit> = Vec::new();
    for unit in background {
        if kept.len() < MAX_BACKGROUND && !kept.iter().any(|other| similar(other, unit)) {
            kept.push(unit);
        }
    }
    let demographics = join(&kept);
    let ideal_solution = join(&ideal);

    let quotes = choose_quotes(&units, [&pains, &goals, &ideal, &motivations, &behaviors]);
    let mut jobs: Vec<String> = Vec::new();
    for unit in &goals {
        let job = job_statement(unit).unwrap_or_else(|| unit.text.to_owned());
        if !jobs.contains(&job) {
            jobs.push(job);
        }
    }

    let summary = summary(
        &name,
        record_name,
        role.as_ref(),
        goals.first().map(|unit| unit.text),
        pains.first().map(|unit| unit.text),
        behaviors.first().map(|unit| unit.text),
    );
    let texts = |list: &[&Unit]| list.iter().map(|unit| unit.text.to_owned()).collect::<Vec<_>>();
    Persona {
        name,
        role: role.map(|role| role.text),
        summary,
        demographics,
        goals: texts(&goals),
        pains: texts(&pains),
        behaviors: texts(&behaviors),
        motivations: texts(&motivations),
        quotes,
        jobs_to_be_done: jobs,
        ideal_solution,
    }
}

/// The persona as a Markdown document: a `# name` heading, the role, then summary, background,
/// jobs to be done, motivations, pains (with the quotes that show them), behaviours and
/// workarounds, ideal solution and quotes, each section saying so when it is empty.
pub fn render_markdown(persona: &Persona) -> String {
    let name = one_line(&persona.name, Spaces::Collapsed);
    let name = if name.is_empty() { UNNAMED.to_owned() } else { name };
    let role = persona
        .role
        .as_deref()
        .map(|text| one_line(text, Spaces::Collapsed))
        .filter(|role| !role.is_empty());
    let mut md = format!("# {name}\n");
    if let Some(role) = &role {
        md.push_str(&format!("\n**Role:** {role}\n"));
    }

    section(&mut md, "Summary");
    paragraph(&mut md, &one_line(&persona.summary, Spaces::Collapsed));

    section(&mut md, "Background");
    let demographics = persona
        .demographics
        .as_deref()
        .map(|text| one_line(text, Spaces::Collapsed))
        .filter(|text| !text.is_empty());
    let mut background = Vec::new();
    if let Some(role) = &role {
        background.push(format!("**Role:** {role}"));
    }
    if let Some(demographics) = demographics {
        background.push(format!("**About them:** {demographics}"));
    }
    list(&mut md, &background);

    section(&mut md, "Jobs to be done");
    list(&mut md, &persona.jobs_to_be_done);

    section(&mut md, "Motivations");
    list(&mut md, &persona.motivations);

    section(&mut md, "Pains");
    let pains: Vec<String> = persona
        .pains
        .iter()
        .map(|pain| one_line(pain, Spaces::Collapsed))
        .filter(|pain| !pain.is_empty())
        .collect();
    if pains.is_empty() {
        paragraph(&mut md, NOTHING_HERE);
    }
    for pain in &pains {
        let own = normalize(pain);
        md.push('\n');
        // A pain that is itself a quote is shown as the quote, with where it was said.
        if let Some(quote) = persona.quotes.iter().find(|quote| normalize(&quote.text) == own) {
            md.push_str(&quote_block(&quote.text, quote.utterance_id, ""));
            continue;
        }
        md.push_str(&format!("- {pain}\n"));
        for quote in persona.quotes.iter().filter(|quote| supports(&quote.text, pain)) {
            md.push_str(&quote_block(&quote.text, quote.utterance_id, "  "));
        }
    }

    section(&mut md, "Behaviours and workarounds");
    list(&mut md, &persona.behaviors);

    section(&mut md, "Ideal solution");
    let ideal = persona
        .ideal_solution
        .as_deref()
        .map(|text| one_line(text, Spaces::Collapsed))
        .unwrap_or_default();
    paragraph(&mut md, if ideal.is_empty() { NOTHING_HERE } else { &ideal });

    section(&mut md, "Quotes");
    let quotes: Vec<&PersonaQuote> = persona
        .quotes
        .iter()
        .filter(|quote| !quote.text.trim().is_empty())
        .collect();
    if quotes.is_empty() {
        paragraph(&mut md, NOTHING_HERE);
    }
    for quote in quotes {
        md.push('\n');
        md.push_str(&quote_block(&quote.text, quote.utterance_id, ""));
    }
    md
}

fn section(md: &mut String, title: &str) {
    md.push_str(&format!("\n## {title}\n"));
}

fn paragraph(md: &mut String, text: &str) {
    md.push('\n');
    md.push_str(if text.is_empty() { NOTHING_HERE } else { text });
    md.push('\n');
}

/// One item a line, on one line each; an empty list says so.
fn list(md: &mut String, items: &[String]) {
    let items: Vec<String> = items
        .iter()
        .map(|item| one_line(item, Spaces::Collapsed))
        .filter(|item| !item.is_empty())
        .collect();
    if items.is_empty() {
        paragraph(md, NOTHING_HERE);
        return;
    }
    md.push('\n');
    for item in items {
        md.push_str(&format!("- {item}\n"));
    }
}

/// `> "text" (#id)`, every line of a text with line breaks kept inside the blockquote.
fn quote_block(text: &str, utterance_id: i64, indent: &str) -> String {
    let lines: Vec<&str> = text.trim().lines().map(str::trim).collect();
    let last = lines.len().saturating_sub(1);
    let mut out = String::new();
    for (n, line) in lines.iter().enumerate() {
        out.push_str(indent);
        out.push('>');
        if n == 0 {
            out.push_str(" \"");
        } else if !line.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
        if n == last {
            out.push_str(&format!("\" (#{utterance_id})"));
        }
        out.push('\n');
    }
    out
}

/// Whether a quote shows a pain: one contains the other, or they share most of the pain's words.
fn supports(quote: &str, pain: &str) -> bool {
    let (quote_text, pain_text) = (bare(&normalize(quote)), bare(&normalize(pain)));
    if quote_text.is_empty() || pain_text.is_empty() {
        return false;
    }
    if quote_text.contains(&pain_text) || pain_text.contains(&quote_text) {
        return true;
    }
    let quote_words = content_words(quote);
    let pain_words = content_words(pain);
    let shared = pain_words.intersection(&quote_words).count();
    !pain_words.is_empty() && shared * 2 >= pain_words.len() && shared >= 3
}

/// The cue sets for `language`: its own and English when it is one of those covered, all of
/// them otherwise.
fn cue_sets(language: Option<&str>) -> Vec<&'static Cues> {
    let code = Analyzer::new(language).language();
    match code.and_then(|code| LANGUAGES.iter().find(|(known, _)| *known == code)) {
        Some(("en", _)) => vec![&ENGLISH],
        Some((_, cues)) => vec![*cues, &ENGLISH],
        None => LANGUAGES.iter().map(|(_, cues)| *cues).collect(),
    }
}

/// The utterances the persona is made of (see the module docs).
fn material(utterances: &[Utterance]) -> Vec<&Utterance> {
    if utterances.iter().any(|u| u.is_respondent) {
        return utterances.iter().filter(|u| u.is_respondent).collect();
    }
    let interviewer = most_questions(utterances);
    utterances
        .iter()
        .filter(|u| Some(u.speaker.as_str()) != interviewer)
        .collect()
}

/// The speaker whose utterances hold the most questions (ties: who spoke first); `None` when
/// nobody asks.
fn most_questions(utterances: &[Utterance]) -> Option<&str> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for utterance in utterances {
        let asked = usize::from(utterance.text.contains(['?', '？', '¿']));
        match counts.iter_mut().find(|(speaker, _)| *speaker == utterance.speaker) {
            Some((_, count)) => *count += asked,
            None => counts.push((&utterance.speaker, asked)),
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (speaker, count) in counts {
        if count > 0 && best.is_none_or(|(_, most)| count > most) {
            best = Some((speaker, count));
        }
    }
    best.map(|(speaker, _)| speaker)
}

/// The speaker of the material with the most words (ties: who spoke first).
fn main_speaker<'a>(material: &[&'a Utterance]) -> Option<&'a str> {
    let mut words: Vec<(&str, usize)> = Vec::new();
    for utterance in material {
        let count = utterance.text.unicode_words().count();
        match words.iter_mut().find(|(speaker, _)| *speaker == utterance.speaker) {
            Some((_, total)) => *total += count,
            None => words.push((&utterance.speaker, count)),
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (speaker, count) in words {
        if best.is_none_or(|(_, most)| count > most) {
            best = Some((speaker, count));
        }
    }
    best.map(|(speaker, _)| speaker)
}

/// A sentence, or a clause of a long one, that the respondent said: a verbatim slice of the
/// utterance, with its folded form for matching cues.
struct Unit<'a> {
    utterance_id: i64,
    speaker: &'a str,
    text: &'a str,
    /// Lower case, apostrophes straight, runs of whitespace one space.
    folded: String,
    /// For each byte of `folded`, the byte of `text` its character comes from; then `text.len()`.
    offsets: Vec<usize>,
    /// Its words in lower case.
    words: BTreeSet<String>,
    word_count: usize,
    /// Position in the material.
    order: usize,
}

impl<'a> Unit<'a> {
    fn new(utterance: &'a Utterance, text: &'a str, order: usize) -> Self {
        let (folded, offsets) = fold(text);
        let words = folded.unicode_words().map(str::to_owned).collect();
        Self {
            utterance_id: utterance.id,
            speaker: &utterance.speaker,
            text,
            folded,
            offsets,
            words,
            word_count: text.unicode_words().count(),
            order,
        }
    }

    /// The slice of `text` that a range of `folded` comes from.
    fn original(&self, range: Range<usize>) -> &'a str {
        let start = self.offsets.get(range.start).copied().unwrap_or(self.text.len());
        let end = self.offsets.get(range.end).copied().unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or_default().trim()
    }
}

/// `text` in lower case with straight apostrophes and single spaces, and where each of its
/// bytes comes from.
fn fold(text: &str) -> (String, Vec<usize>) {
    let mut folded = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' | '\u{FF07}' | '`' | '\u{00B4}' => '\'',
            c if c.is_whitespace() => ' ',
            c => c.to_lowercase().next().unwrap_or(c),
        };
        if c == ' ' && folded.ends_with(' ') {
            continue;
        }
        offsets.extend(std::iter::repeat_n(at, c.len_utf8()));
        folded.push(c);
    }
    offsets.push(text.len());
    (folded, offsets)
}

/// The sentences of the material, cut and trimmed (see the module docs), in order.
fn units<'a>(material: &[&'a Utterance]) -> Vec<Unit<'a>> {
    let mut units = Vec::new();
    for &utterance in material {
        for (_, sentence) in utterance.text.split_sentence_bound_indices() {
            let sentence = strip_fillers(sentence.trim());
            if sentence.trim_end().ends_with(['?', '？']) || sentence.starts_with('¿') {
                continue;
            }
            for piece in clauses(sentence) {
                if piece.unicode_words().nth(MIN_WORDS - 1).is_some() {
                    units.push(Unit::new(utterance, piece, units.len()));
                }
            }
        }
    }
    units
}

/// `sentence` without the fillers of speech it starts with.
fn strip_fillers(sentence: &str) -> &str {
    let mut rest = sentence.trim();
    loop {
        let end = rest
            .char_indices()
            .find(|&(_, c)| !c.is_alphabetic())
            .map_or(rest.len(), |(at, _)| at);
        let (word, after) = rest.split_at(end);
        let word = word.to_lowercase();
        let listed = |list: &str| list.split_whitespace().any(|filler| filler == word);
        let (space_ok, noise) = match () {
            () if listed(NOISE) => (true, true),
            () if listed(NOISE_BEFORE_COMMA) => (false, true),
            () if listed(FILLERS) => (true, false),
            () if listed(FILLERS_BEFORE_COMMA) => (false, false),
            () => return rest,
        };
        let next = match after.chars().next() {
            Some(',') => after.get(1..).unwrap_or_default(),
            Some(c) if c.is_whitespace() && space_ok => after,
            _ => return rest,
        };
        let next = next.trim_start();
        let capital = next.chars().next().is_some_and(char::is_uppercase);
        if next.unicode_words().nth(MIN_WORDS - 1).is_none() || !(noise || capital) {
            return rest;
        }
        rest = next;
    }
}

/// A sentence, or its clauses when it is too long (see the module docs).
fn clauses(sentence: &str) -> Vec<&str> {
    if sentence.unicode_words().nth(MAX_SENTENCE_WORDS).is_none() {
        return vec![sentence];
    }
    // Cut after clause punctuation followed by a space.
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = sentence.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let spaced = chars.peek().is_some_and(|&(_, next)| next.is_whitespace());
        if matches!(c, ',' | ';' | ':' | '—' | '–') && spaced {
            let end = at + c.len_utf8();
            pieces.push(start..end);
            start = end;
        }
    }
    pieces.push(start..sentence.len());

    // Consecutive pieces joined up to CLAUSE_WORDS words; a piece still too long by words.
    let mut out: Vec<&str> = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let words = |range: &Range<usize>| sentence.get(range.clone()).unwrap_or_default().unicode_words().count();
    for piece in pieces {
        current = match current {
            Some(range) if words(&range) + words(&piece) <= CLAUSE_WORDS => Some(range.start..piece.end),
            Some(range) => {
                flush(sentence, range, &mut out);
                Some(piece)
            }
            None => Some(piece),
        };
    }
    if let Some(range) = current {
        flush(sentence, range, &mut out);
    }
    out.retain(|piece| !piece.is_empty());
    out
}

/// Pushes the clause `range` of `sentence`, cut into windows of words when still too long.
fn flush<'s>(sentence: &'s str, range: Range<usize>, out: &mut Vec<&'s str>) {
    let text = sentence.get(range).unwrap_or_default();
    if text.unicode_words().nth(MAX_SENTENCE_WORDS).is_none() {
        out.push(trim_clause(text));
        return;
    }
    let indices: Vec<Range<usize>> = text
        .unicode_word_indices()
        .map(|(at, word)| at..at + word.len())
        .collect();
    for window in indices.chunks(CLAUSE_WORDS) {
        if let (Some(first), Some(last)) = (window.first(), window.last()) {
            out.push(trim_clause(text.get(first.start..last.end).unwrap_or_default()));
        }
    }
}

fn trim_clause(text: &str) -> &str {
    text.trim()
        .trim_end_matches([',', ';', ':', '—', '–'])
        .trim_start_matches([',', ';', ':', '—', '–'])
        .trim()
}

/// The phrases of a cue list.
fn phrases(list: &'static str) -> impl Iterator<Item = &'static str> {
    list.split('|').map(str::trim).filter(|phrase| !phrase.is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Goal,
    Pain,
    Behavior,
    Motivation,
    Ideal,
}

/// What a unit says: its kind with the number of cues it hits, and whether it is background.
struct Class {
    kind: Option<(Kind, usize)>,
    background: bool,
}

fn classify(unit: &Unit, sets: &[&Cues]) -> Class {
    let hits = |list: fn(&Cues) -> &'static str| -> (Option<usize>, usize) {
        let mut first: Option<usize> = None;
        let mut count = 0;
        for set in sets {
            for cue in phrases(list(set)) {
                if let Some(range) = find_cue(&unit.folded, cue) {
                    count += 1;
                    first = Some(first.map_or(range.start, |at| at.min(range.start)));
                }
            }
        }
        (first, count)
    };
    let ideal = hits(|cues| cues.ideal);
    let kind = if ideal.1 > 0 {
        Some((Kind::Ideal, ideal.1))
    } else {
        // The earliest cue decides; on the same word, pains before goals before behaviours.
        let candidates = [
            (Kind::Pain, hits(|cues| cues.pains)),
            (Kind::Goal, hits(|cues| cues.goals)),
            (Kind::Behavior, hits(|cues| cues.behaviors)),
            (Kind::Motivation, hits(|cues| cues.motivations)),
        ];
        let mut best: Option<(usize, Kind, usize)> = None;
        for (kind, (first, count)) in candidates {
            if let Some(at) = first
                && best.is_none_or(|(best_at, ..)| at < best_at)
            {
                best = Some((at, kind, count));
            }
        }
        match best {
            Some((_, kind, count)) => Some((kind, count)),
            None => {
                let reasons = hits(|cues| cues.reasons);
                (reasons.1 > 0).then_some((Kind::Motivation, reasons.1))
            }
        }
    };
    let background = hits(|cues| cues.background).1 > 0
        || (hits(|cues| cues.tenure).1 > 0 && has_number(unit) && has_listed(unit, YEAR_WORDS))
        || (hits(|cues| cues.headcount).1 > 0 && has_number(unit))
        || (hits(|cues| cues.organisation).1 > 0 && has_listed(unit, ORGANISATION_NOUNS));
    Class { kind, background }
}

/// Where `cue` occurs in `folded` at word boundaries (a trailing `*`: the start of a word).
fn find_cue(folded: &str, cue: &str) -> Option<Range<usize>> {
    find_cue_from(folded, cue, 0)
}

/// Where `cue` occurs in `folded` at word boundaries from byte `from` on.
fn find_cue_from(folded: &str, cue: &str, mut from: usize) -> Option<Range<usize>> {
    let (needle, prefix) = match cue.strip_suffix('*') {
        Some(needle) => (needle, true),
        None => (cue, false),
    };
    let starts_word = needle.chars().next().is_some_and(char::is_alphanumeric);
    let ends_word = needle.chars().next_back().is_some_and(char::is_alphanumeric);
    while let Some(at) = folded.get(from..).and_then(|rest| rest.find(needle)) {
        let start = from + at;
        let end = start + needle.len();
        let before = folded.get(..start).and_then(|text| text.chars().next_back());
        let after = folded.get(end..).and_then(|text| text.chars().next());
        let before_ok = !starts_word || before.is_none_or(|c| !c.is_alphanumeric());
        let after_ok = prefix || !ends_word || after.is_none_or(|c| !c.is_alphanumeric());
        if before_ok && after_ok {
            return Some(start..end);
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Whether `word` (folded) is in the space-separated `list` (see [`ROLE_NOUNS`] for the forms
/// of its entries).
fn matches_listed(word: &str, list: &str) -> bool {
    list.split_whitespace().any(|entry| {
        if let Some(inner) = entry.strip_prefix('*').and_then(|entry| entry.strip_suffix('*')) {
            word.contains(inner)
        } else if let Some(prefix) = entry.strip_suffix('*') {
            word.starts_with(prefix)
        } else {
            word == entry || word.strip_suffix('s') == Some(entry) || word.strip_suffix("es") == Some(entry)
        }
    })
}

fn has_listed(unit: &Unit, list: &str) -> bool {
    unit.words.iter().any(|word| matches_listed(word, list))
}

fn has_number(unit: &Unit) -> bool {
    unit.text.chars().any(|c| c.is_ascii_digit())
        || unit
            .words
            .iter()
            .any(|word| NUMBER_WORDS.split_whitespace().any(|number| number == word))
}

/// How much a unit tells: its distinct longer words, its cues and numbers; very long ones lose.
fn informative(unit: &Unit, hits: usize) -> i64 {
    let long = unit
        .words
        .iter()
        .filter(|word| word.chars().count() >= 4)
        .count()
        .min(25) as i64;
    let mut score = long + 2 * hits.min(3) as i64;
    if unit.text.chars().any(|c| c.is_ascii_digit()) {
        score += 3;
    }
    if unit.word_count > 40 {
        score -= (unit.word_count as i64 - 40) / 2;
    }
    score
}

/// The best `limit` units, without near-duplicates.
fn rank<'u, 'a>(mut items: Vec<(&'u Unit<'a>, i64)>, limit: usize) -> Vec<&'u Unit<'a>> {
    items.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.order.cmp(&b.0.order)));
    let mut kept: Vec<&Unit> = Vec::new();
    for (unit, _) in items {
        if kept.len() == limit {
            break;
        }
        if !kept.iter().any(|other| similar(other, unit)) {
            kept.push(unit);
        }
    }
    kept
}

/// Whether two units say nearly the same: one contains the other, or they share most words.
fn similar(a: &Unit, b: &Unit) -> bool {
    let (left, right) = (normalize(a.text), normalize(b.text));
    let (left, right) = (bare(&left), bare(&right));
    if left.contains(&right) || right.contains(&left) {
        return true;
    }
    let shared = a.words.intersection(&b.words).count();
    let all = a.words.union(&b.words).count();
    all > 0 && shared * 5 >= all * 4
}

/// `text` without leading and trailing punctuation and spaces.
fn bare(text: &str) -> String {
    text.trim_matches(|c: char| !c.is_alphanumeric()).to_owned()
}

fn content_words(text: &str) -> BTreeSet<String> {
    let (folded, _) = fold(text);
    folded
        .unicode_words()
        .filter(|word| word.chars().count() >= 4)
        .map(str::to_owned)
        .collect()
}

/// The units joined by spaces, `None` for none.
fn join(units: &[&Unit]) -> Option<String> {
    let texts: Vec<&str> = units.iter().map(|unit| unit.text).collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// Quotes taken in turn from the lists, then from the other sentences when too few.
fn choose_quotes(units: &[Unit], lists: [&Vec<&Unit>; 5]) -> Vec<PersonaQuote> {
    let mut chosen: Vec<&Unit> = Vec::new();
    let fits = |unit: &Unit, chosen: &[&Unit]| {
        !unit.text.contains('"')
            && !chosen
                .iter()
                .any(|other| other.order == unit.order || similar(other, unit))
    };
    let rounds = lists.iter().map(|list| list.len()).max().unwrap_or_default();
    'rounds: for round in 0..rounds {
        for list in lists {
            if chosen.len() == MAX_QUOTES {
                break 'rounds;
            }
            if let Some(&unit) = list.get(round)
                && fits(unit, &chosen)
            {
                chosen.push(unit);
            }
        }
    }
    if chosen.len() < MIN_QUOTES {
        let mut rest: Vec<(&Unit, i64)> = units.iter().map(|unit| (unit, informative(unit, 0))).collect();
        rest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.order.cmp(&b.0.order)));
        for (unit, _) in rest {
            if chosen.len() == MIN_QUOTES {
                break;
            }
            if fits(unit, &chosen) {
                chosen.push(unit);
            }
        }
    }
    chosen
        .into_iter()
        .map(|unit| PersonaQuote {
            text: unit.text.to_owned(),
            utterance_id: unit.utterance_id,
        })
        .collect()
}

/// "When <situation>, I want to <goal>." from an English goal sentence that names its
/// situation; `None` when it does not.
fn job_statement(unit: &Unit) -> Option<String> {
    const GOALS: [(&str, &str); 15] = [
        ("i need to", "I"),
        ("i really need to", "I"),
        ("i want to", "I"),
        ("i have to", "I"),
        ("i'd like to", "I"),
        ("i would like to", "I"),
        ("i'm trying to", "I"),
        ("i am trying to", "I"),
        ("i try to", "I"),
        ("i've got to", "I"),
        ("we need to", "we"),
        ("we want to", "we"),
        ("we have to", "we"),
        ("we're trying to", "we"),
        ("we'd like to", "we"),
    ];
    const SITUATIONS: [&str; 5] = ["whenever", "when", "every time", "each time", "any time"];
    let len = unit.folded.len();
    for (cue, subject) in GOALS {
        let Some(goal) = find_cue(&unit.folded, cue) else {
            continue;
        };
        for situation in SITUATIONS {
            let Some(at) = find_cue(&unit.folded, situation) else {
                continue;
            };
            let (situation, wanted) = if at.end <= goal.start {
                (at.end..goal.start, goal.end..len)
            } else if at.start >= goal.end {
                (at.end..len, goal.end..at.start)
            } else {
                continue;
            };
            let situation = strip_connective(trim_job(unit.original(situation)));
            let wanted = trim_job(unit.original(wanted));
            let enough = |text: &str| text.unicode_words().nth(1).is_some();
            if !enough(situation) || !enough(wanted) || situation.contains(['.', '!', '?', ';']) {
                continue;
            }
            return Some(format!("When {situation}, {subject} want to {wanted}."));
        }
    }
    None
}

fn trim_job(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '.' | '!' | '…' | '-' | '—' | '–'))
}

/// A situation without the "then" or "so" that leads on to the goal.
fn strip_connective(text: &str) -> &str {
    for word in [" then", " so", " and"] {
        if let Some(cut) = text.len().checked_sub(word.len())
            && text.get(cut..).is_some_and(|end| end.eq_ignore_ascii_case(word))
        {
            return trim_job(text.get(..cut).unwrap_or_default());
        }
    }
    text
}

/// How a role was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoleKind {
    /// A noun phrase: "product manager at Northwind".
    Noun,
    /// A clause: "I manage a team of five dispatchers".
    Clause,
}

struct Role {
    text: String,
    kind: RoleKind,
    /// Whether the phrase says where ("… at Northwind"): its sentence is background too.
    place: bool,
    /// The unit it comes from.
    order: usize,
}

/// The role, from the first unit that states one: explicit statements first, then role nouns,
/// then what the respondent leads.
fn find_role(units: &[&Unit], sets: &[&Cues]) -> Option<Role> {
    let stops: Vec<&str> = sets.iter().flat_map(|set| phrases(set.stops)).collect();
    let prepositions: Vec<&str> = sets.iter().flat_map(|set| phrases(set.prepositions)).collect();
    let occurrences = |unit: &Unit, cue: &str| -> Vec<Range<usize>> {
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(at) = find_cue_from(&unit.folded, cue, from) {
            from = at.end;
            found.push(at);
        }
        found
    };
    let role = |unit: &Unit, words: &[Range<usize>], kind, place| {
        let range = role_range(unit, words, &prepositions)?;
        let text = unit.original(range);
        (!text.is_empty()).then(|| Role {
            text: text.to_owned(),
            kind,
            place,
            order: unit.order,
        })
    };
    let word = |unit: &Unit, range: &Range<usize>| unit.folded.get(range.clone()).unwrap_or_default().to_owned();

    // "My role is …": what follows, to the end of its clause.
    for unit in units {
        for cue in sets.iter().flat_map(|set| phrases(set.role_explicit)) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                if let Some(found) = role(unit, &words, RoleKind::Noun, false) {
                    return Some(found);
                }
            }
        }
    }
    // "I'm a …": up to a role noun, and what follows it when a preposition carries it on.
    for unit in units {
        for &(cue, window) in sets.iter().flat_map(|set| set.role_noun.iter()) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                let is_noun = |range: &Range<usize>| matches_listed(&word(unit, range), ROLE_NOUNS);
                let Some(mut noun) = words.iter().take(window).position(is_noun) else {
                    continue;
                };
                while words.get(noun + 1).is_some_and(is_noun) {
                    noun += 1;
                }
                // "руководитель отдела …": a team or an organisation carries it on too.
                let carried = words.get(noun + 1).is_some_and(|next| {
                    let next = word(unit, next);
                    prepositions.contains(&next.as_str()) || matches_listed(&next, ORGANISATION_NOUNS)
                });
                let end = if carried { words.len() } else { noun + 1 };
                if let Some(found) = role(unit, words.get(..end).unwrap_or_default(), RoleKind::Noun, carried) {
                    return Some(found);
                }
            }
        }
    }
    // "I lead …": the clause, when a team, an organisation or a role follows.
    for unit in units {
        for cue in sets.iter().flat_map(|set| phrases(set.role_verb)) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                let leads = words.iter().take(6).any(|range| {
                    let word = word(unit, range);
                    matches_listed(&word, ORGANISATION_NOUNS) || matches_listed(&word, ROLE_NOUNS)
                });
                if !leads {
                    continue;
                }
                let all: Vec<Range<usize>> = std::iter::once(at.clone()).chain(words).collect();
                if let Some(found) = role(unit, &all, RoleKind::Clause, true) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// The words of `folded` from `start` to the end of their clause: up to punctuation, a spaced
/// dash, a stop word, or `max` words.
fn clause_words(folded: &str, start: usize, max: usize, stops: &[&str]) -> Vec<Range<usize>> {
    let mut words: Vec<Range<usize>> = Vec::new();
    let Some(rest) = folded.get(start..) else {
        return words;
    };
    let mut last = start;
    for (at, word) in rest.unicode_word_indices() {
        let range = start + at..start + at + word.len();
        let gap = folded.get(last..range.start).unwrap_or_default();
        let leading = words.is_empty();
        let gap = if leading {
            gap.trim_start_matches([' ', ':', '-', '—', '–'])
        } else {
            gap
        };
        let dash = gap.contains('-') && gap.contains(' ');
        if words.len() == max || gap.contains(CLAUSE_PUNCTUATION) || dash || stops.contains(&word) {
            break;
        }
        last = range.end;
        words.push(range);
    }
    words
}

/// The range of a role phrase from its words: without trailing function words and prepositions,
/// at most [`MAX_ROLE_CHARS`] characters; `None` when nothing is left.
fn role_range(unit: &Unit, words: &[Range<usize>], prepositions: &[&str]) -> Option<Range<usize>> {
    let mut words = words.to_vec();
    loop {
        while let Some(last) = words.last() {
            let word = unit.folded.get(last.clone()).unwrap_or_default();
            if TRAILING_WORDS.split_whitespace().any(|trailing| trailing == word) || prepositions.contains(&word) {
                words.pop();
            } else {
                break;
            }
        }
        let (first, last) = (words.first()?, words.last()?);
        let range = first.start..last.end;
        if unit.original(range.clone()).chars().count() <= MAX_ROLE_CHARS {
            return Some(range);
        }
        words.pop();
    }
}

/// Two or three sentences: who, what they want and what holds them back, and how this was made.
fn summary(
    name: &str,
    record_name: &str,
    role: Option<&Role>,
    goal: Option<&str>,
    pain: Option<&str>,
    behavior: Option<&str>,
) -> String {
    let mut out = match role {
        Some(Role {
            text,
            kind: RoleKind::Noun,
            ..
        }) => format!(
            "{name}, {}.",
            one_line(text, Spaces::Collapsed).trim_end_matches(['.', ','])
        ),
        Some(Role { text, .. }) => format!("{name}, who says: \"{}\".", one_line(text, Spaces::Collapsed)),
        None => {
            let record = one_line(record_name, Spaces::Collapsed);
            if record.is_empty() {
                format!("{name}, the respondent of this interview.")
            } else {
                format!("{name}, the respondent in \"{record}\".")
            }
        }
    };
    let said = |text: &str| short(one_line(text, Spaces::Collapsed).trim_end_matches(['.', '!', '…', ',', ';', ':']));
    match (goal, pain) {
        (Some(goal), Some(pain)) => out.push_str(&format!(
            " Wants: \"{}\"; held back by: \"{}\".",
            said(goal),
            said(pain)
        )),
        (Some(goal), None) => out.push_str(&format!(" Wants: \"{}\".", said(goal))),
        (None, Some(pain)) => out.push_str(&format!(" Held back by: \"{}\".", said(pain))),
        (None, None) => match behavior {
            Some(behavior) => out.push_str(&format!(" Works like this today: \"{}\".", said(behavior))),
            None => out.push_str(" States no goal or pain in so many words."),
        },
    }
    out.push(' ');
    out.push_str(EXTRACTED_NOTE);
    out
}

/// At most [`SUMMARY_WORDS`] words of `text`, with `…` where it was cut.
fn short(text: &str) -> String {
    match text.unicode_word_indices().nth(SUMMARY_WORDS) {
        Some((at, _)) => format!("{} …", text.get(..at).unwrap_or_default().trim_end()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utterance(id: i64, speaker: &str, is_respondent: bool, text: &str) -> Utterance {
        Utterance {
            id,
            is_respondent,
            speaker: speaker.to_owned(),
            start_ms: Some(id * 15_000),
            end_ms: Some(id * 15_000 + 14_000),
            text: text.to_owned(),
        }
    }

    /// `(speaker, text)` turns, numbered from 1; everyone but `interviewer` is a respondent.
    fn interview(turns: &[(&str, &str)], interviewer: &str) -> Vec<Utterance> {
        turns
            .iter()
            .zip(1..)
            .map(|(&(speaker, text), id)| utterance(id, speaker, speaker != interviewer, text))
            .collect()
    }

    fn dispatch() -> Vec<Utterance> {
        interview(
            &[
                (
                    "Interviewer",
                    "Thanks for joining. Could you tell me a bit about your role?",
                ),
                (
                    "Dana Whitfield",
                    "Sure. I'm a dispatch lead at Northwind Logistics, a regional delivery company. We're a team of \
                     twelve dispatchers based in Leeds, and I've been doing this for 8 years.",
                ),
                (
                    "Interviewer",
                    "What does a typical morning look like? I want to understand your day.",
                ),
                (
                    "Dana Whitfield",
                    "Every morning I export the orders from our ERP into a spreadsheet and build the routes by hand. \
                     It takes forever, usually two hours before the first truck leaves. Honestly the biggest problem \
                     is that the routing tool doesn't know our depots, so I end up fixing every route manually.",
                ),
                (
                    "Interviewer",
                    "That sounds frustrating. Why does that matter so much to you?",
                ),
                (
                    "Dana Whitfield",
                    "Because if the trucks leave late, our customers call me, not the sales team. I care about my \
                     drivers getting home on time.",
                ),
                (
                    "Sam Ortiz",
                    "We use WhatsApp groups to tell the drivers about changes during the day.",
                ),
                (
                    "Interviewer",
                    "What would you like to be different? If you had a magic wand?",
                ),
                (
                    "Dana Whitfield",
                    "When a driver calls in sick, I need to reshuffle all the routes in under ten minutes. I want to \
                     see every truck and every depot on one screen. Ideally the tool would learn our depots once and \
                     never ask again.",
                ),
                ("Dana Whitfield", "Yeah."),
                (
                    "Dana Whitfield",
                    "Honestly, it's frustrating that I can't trust the ETA numbers in the customer portal.",
                ),
            ],
            "Interviewer",
        )
    }

    /// A call transcribed without respondents marked: the researcher asks, Ada answers.
    fn unmarked() -> Vec<Utterance> {
        interview(
            &[
                ("Researcher", "How do you handle invoices today?"),
                (
                    "Ada",
                    "I work as a freelance bookkeeper for about fifteen small shops. Right now I copy every invoice \
                     into Excel by hand on Sunday evenings.",
                ),
                ("Researcher", "What is the hardest part? Where does it go wrong?"),
                (
                    "Ada",
                    "The VAT rates are confusing and I waste half a day each month fixing mistakes. I'd like to \
                     send my clients a clean report every Monday without retyping anything, so I can finally take \
                     weekends off.",
                ),
                ("Researcher", "And if anything were possible?"),
                ("Ada", "I wish the bank feed and the invoices matched themselves."),
            ],
            "nobody",
        )
        .into_iter()
        .map(|mut u| {
            u.is_respondent = false;
            u
        })
        .collect()
    }

    fn german() -> Vec<Utterance> {
        interview(
            &[
                ("Interviewerin", "Erzählen Sie doch kurz, was Sie machen?"),
                (
                    "Jana Krüger",
                    "Ich bin Disponentin bei einer Spedition in Hamburg, wir sind ein Team von zwölf Leuten. Seit \
                     acht Jahren mache ich das jetzt.",
                ),
                ("Interviewerin", "Wie sieht ein normaler Morgen aus?"),
                (
                    "Jana Krüger",
                    "Normalerweise plane ich die Touren in einer Excel-Tabelle, jeden Morgen ab sechs Uhr. Das \
                     Problem ist, dass die Fahrer ständig anrufen und ich alles von Hand umplanen muss. Das ist \
                     wirklich mühsam und dauert ewig.",
                ),
                ("Interviewerin", "Was bräuchten Sie?"),
                (
                    "Jana Krüger",
                    "Ich brauche eine Übersicht über alle Touren auf einem Bildschirm. Mir ist wichtig, dass die \
                     Kunden pünktlich beliefert werden. Idealerweise würde das System Staus selbst erkennen und die \
                     Touren neu planen.",
                ),
            ],
            "Interviewerin",
        )
    }

    fn french() -> Vec<Utterance> {
        interview(
            &[
                ("Enquêteur", "Pouvez-vous vous présenter ?"),
                (
                    "Claire",
                    "Je suis cheffe de projet chez un éditeur de logiciels à Lyon. J’ai besoin de suivre les \
                     demandes des clients sans relancer tout le monde. Le problème, c’est que les tickets se perdent \
                     entre trois outils. D’habitude je note tout dans un tableur. Idéalement, tout serait au même \
                     endroit.",
                ),
            ],
            "Enquêteur",
        )
    }

    fn spanish() -> Vec<Utterance> {
        interview(
            &[
                ("Entrevistador", "¿A qué te dedicas?"),
                (
                    "Lucía",
                    "Soy gerente de operaciones en una cadena de panaderías. Necesito saber cada mañana cuánto pan \
                     sobró en cada tienda. El problema es que los encargados mandan las cifras por WhatsApp y se \
                     pierden. Normalmente lo paso todo a mano a una hoja de cálculo. Sería genial tener un panel \
                     con todas las tiendas.",
                ),
            ],
            "Entrevistador",
        )
    }

    fn russian() -> Vec<Utterance> {
        interview(
            &[
                ("Интервьюер", "Расскажите, чем вы занимаетесь?"),
                (
                    "Ольга",
                    "Я руководитель отдела поддержки в интернет-магазине. Мне нужно видеть все обращения клиентов \
                     в одном месте. Проблема в том, что письма теряются между почтой и чатом. Обычно я вручную \
                     переношу их в таблицу. В идеале система сама бы распределяла обращения по сотрудникам.",
                ),
            ],
            "Интервьюер",
        )
    }

    /// Every fixture with its language.
    fn fixtures() -> Vec<(Vec<Utterance>, Option<&'static str>)> {
        vec![
            (dispatch(), Some("en")),
            (dispatch(), None),
            (unmarked(), None),
            (german(), Some("de")),
            (german(), None),
            (french(), Some("fr-FR")),
            (spanish(), Some("es")),
            (russian(), Some("ru")),
        ]
    }

    /// The utterances a persona may be made of: the respondents', or, with none marked,
    /// everyone's but the one who asks the most.
    fn allowed(utterances: &[Utterance]) -> Vec<&Utterance> {
        material(utterances)
    }

    /// Whether `text` is sentences joined by spaces, each a slice of one of `sources`.
    fn covered(text: &str, sources: &[&Utterance]) -> bool {
        let mut rest = text;
        while !rest.is_empty() {
            let ends = rest
                .char_indices()
                .filter(|&(_, c)| c == ' ')
                .map(|(at, _)| at)
                .chain([rest.len()]);
            let Some(cut) = ends
                .filter(|&at| sources.iter().any(|u| u.text.contains(&rest[..at])))
                .max()
            else {
                return false;
            };
            rest = rest[cut..].trim_start();
        }
        true
    }

    fn items(persona: &Persona) -> Vec<&String> {
        persona
            .goals
            .iter()
            .chain(&persona.pains)
            .chain(&persona.behaviors)
            .chain(&persona.motivations)
            .collect()
    }

    /// The respondent's own words everywhere they should be (see the module docs).
    fn assert_own_words(persona: &Persona, utterances: &[Utterance]) {
        let sources = allowed(utterances);
        for item in items(persona) {
            assert!(
                sources.iter().any(|u| u.text.contains(item.as_str())),
                "not verbatim: {item:?}\n{persona:#?}"
            );
        }
        if let Some(role) = &persona.role {
            assert!(sources.iter().any(|u| u.text.contains(role.as_str())), "{role:?}");
            assert!(role.chars().count() <= MAX_ROLE_CHARS, "{role:?}");
        }
        for text in persona.demographics.iter().chain(&persona.ideal_solution) {
            assert!(covered(text, &sources), "not verbatim: {text:?}\n{persona:#?}");
        }
        for job in &persona.jobs_to_be_done {
            let own = persona.goals.contains(job);
            let template = job.starts_with("When ") && (job.contains(", I want to ") || job.contains(", we want to "));
            assert!(own || template, "{job:?}");
        }
        for quote in &persona.quotes {
            let utterance = sources
                .iter()
                .find(|u| u.id == quote.utterance_id)
                .unwrap_or_else(|| panic!("no such utterance: {quote:?}"));
            assert!(
                utterance.text.contains(&quote.text),
                "{quote:?} not in {:?}",
                utterance.text
            );
        }
        for list in [&persona.goals, &persona.pains, &persona.behaviors, &persona.motivations] {
            assert!(list.len() <= MAX_ITEMS);
        }
        assert!(persona.jobs_to_be_done.len() <= MAX_ITEMS);
        assert!(persona.quotes.len() <= MAX_QUOTES);
        assert!(persona.summary.ends_with(EXTRACTED_NOTE), "{}", persona.summary);
    }

    #[test]
    fn an_english_interview_sorts_the_respondents_sentences() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(persona.name, "Dana Whitfield");
        assert_eq!(persona.role.as_deref(), Some("dispatch lead at Northwind Logistics"));
        assert_eq!(
            persona.goals,
            [
                "When a driver calls in sick, I need to reshuffle all the routes in under ten minutes.",
                "I want to see every truck and every depot on one screen.",
            ]
        );
        assert_eq!(
            persona.pains,
            [
                "Honestly the biggest problem is that the routing tool doesn't know our depots, so I end up fixing \
                 every route manually.",
                "Honestly, it's frustrating that I can't trust the ETA numbers in the customer portal.",
                "It takes forever, usually two hours before the first truck leaves.",
            ]
        );
        assert_eq!(
            persona.behaviors,
            [
                "Every morning I export the orders from our ERP into a spreadsheet and build the routes by hand.",
                // The second respondent's words count too.
                "We use WhatsApp groups to tell the drivers about changes during the day.",
            ]
        );
        assert_eq!(
            persona.motivations,
            [
                "Because if the trucks leave late, our customers call me, not the sales team.",
                "I care about my drivers getting home on time.",
            ]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("Ideally the tool would learn our depots once and never ask again.")
        );
        let demographics = persona.demographics.as_deref().unwrap_or_default();
        assert!(demographics.contains("a regional delivery company"), "{demographics}");
        assert!(
            demographics
                .contains("We're a team of twelve dispatchers based in Leeds, and I've been doing this for 8 years."),
            "{demographics}"
        );
        assert!(
            persona
                .summary
                .starts_with("Dana Whitfield, dispatch lead at Northwind Logistics. Wants: \"When a driver")
        );
        assert!(
            persona
                .summary
                .contains("; held back by: \"Honestly the biggest problem"),
            "{}",
            persona.summary
        );
        assert_own_words(&persona, &dispatch());
    }

    #[test]
    fn jobs_to_be_done_name_the_situation_only_when_the_respondent_does() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(
            persona.jobs_to_be_done,
            [
                "When a driver calls in sick, I want to reshuffle all the routes in under ten minutes.",
                "I want to see every truck and every depot on one screen.",
            ]
        );
        let utterances = interview(
            &[
                ("Ana", "I need to call every driver myself when the ferry is late."),
                (
                    "Ana",
                    "Whenever a new client signs, we need to set up their depots by hand.",
                ),
                ("Ana", "I want a single login for all of it."),
            ],
            "Interviewer",
        );
        let persona = offline_persona("Call", &utterances, Some("en"));
        let mut jobs = persona.jobs_to_be_done.clone();
        jobs.sort();
        assert_eq!(
            jobs,
            [
                "I want a single login for all of it.",
                "When a new client signs, we want to set up their depots by hand.",
                "When the ferry is late, I want to call every driver myself.",
            ]
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn quotes_are_verbatim_slices_of_the_respondents_utterances() {
        for (utterances, language) in fixtures() {
            let persona = offline_persona("Call", &utterances, language);
            assert!(
                (MIN_QUOTES..=MAX_QUOTES).contains(&persona.quotes.len()),
                "{:#?}",
                persona.quotes
            );
            for quote in &persona.quotes {
                let utterance = utterances
                    .iter()
                    .find(|u| u.id == quote.utterance_id)
                    .unwrap_or_else(|| panic!("{quote:?}"));
                assert!(utterance.text.contains(&quote.text), "{quote:?}");
                assert!(
                    utterance.is_respondent || !utterances.iter().any(|u| u.is_respondent),
                    "{quote:?}"
                );
                assert!(!quote.text.trim().is_empty());
            }
        }
        // Pains and goals come first.
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        assert_eq!(persona.quotes.first().map(|q| q.utterance_id), Some(4));
        assert!(
            persona
                .quotes
                .iter()
                .any(|q| q.text.starts_with("When a driver calls in sick"))
        );
    }

    #[test]
    fn nothing_the_interviewer_said_appears_anywhere() {
        for (utterances, language) in fixtures() {
            let persona = offline_persona("Call", &utterances, language);
            let markdown = render_markdown(&persona);
            let interviewer = most_questions(&utterances).unwrap_or_default();
            let mut everything = vec![markdown.clone(), persona.summary.clone()];
            everything.extend(items(&persona).into_iter().cloned());
            everything.extend(persona.jobs_to_be_done.iter().cloned());
            everything.extend(persona.quotes.iter().map(|q| q.text.clone()));
            everything.extend(persona.role.iter().cloned());
            everything.extend(persona.demographics.iter().cloned());
            everything.extend(persona.ideal_solution.iter().cloned());
            for utterance in utterances.iter().filter(|u| u.speaker == interviewer) {
                for (_, sentence) in utterance.text.split_sentence_bound_indices() {
                    let sentence = sentence.trim().trim_end_matches(['?', '.', '!']);
                    if sentence.unicode_words().count() < 3 {
                        continue;
                    }
                    for text in &everything {
                        assert!(!text.contains(sentence), "{sentence:?} in {text:?}");
                    }
                }
            }
            assert!(!markdown.contains(interviewer), "{markdown}");
        }
        // The interviewer's own cue phrases ("frustrating", "I want to", "magic wand") were left alone.
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        let markdown = render_markdown(&persona);
        assert!(!markdown.contains("sounds frustrating"));
        assert!(!markdown.contains("understand your day"));
        assert!(!markdown.contains("magic wand"));
    }

    #[test]
    fn output_is_deterministic() {
        for (utterances, language) in fixtures() {
            let first = offline_persona("Call", &utterances, language);
            let markdown = render_markdown(&first);
            for _ in 0..3 {
                let again = offline_persona("Call", &utterances, language);
                assert_eq!(again, first);
                assert_eq!(render_markdown(&again), markdown);
            }
        }
    }

    #[test]
    fn markdown_has_every_section_in_order() {
        let persona = offline_persona("Northwind dispatch", &dispatch(), Some("en"));
        let markdown = render_markdown(&persona);
        assert!(markdown.starts_with("# Dana Whitfield\n\n**Role:** dispatch lead at Northwind Logistics\n"));
        let headings: Vec<&str> = markdown.lines().filter(|line| line.starts_with('#')).collect();
        assert_eq!(
            headings,
            [
                "# Dana Whitfield",
                "## Summary",
                "## Background",
                "## Jobs to be done",
                "## Motivations",
                "## Pains",
                "## Behaviours and workarounds",
                "## Ideal solution",
                "## Quotes",
            ]
        );
        assert!(!markdown.contains(NOTHING_HERE), "{markdown}");
        let section = |title: &str| -> String {
            let start = markdown
                .find(&format!("## {title}\n"))
                .unwrap_or_else(|| panic!("{title}"));
            let rest = &markdown[start + title.len() + 4..];
            rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
        };
        // Quoted pains show where they were said; the others are list items.
        let pains = section("Pains");
        assert!(
            pains.contains(
                "> \"Honestly the biggest problem is that the routing tool doesn't know our depots, so I end up \
                 fixing every route manually.\" (#4)"
            ),
            "{pains}"
        );
        assert!(
            pains.contains("- It takes forever, usually two hours before the first truck leaves.\n"),
            "{pains}"
        );
        let quotes = section("Quotes");
        let lines: Vec<&str> = quotes.lines().filter(|line| !line.is_empty()).collect();
        assert_eq!(lines.len(), persona.quotes.len());
        for (line, quote) in lines.iter().zip(&persona.quotes) {
            assert_eq!(*line, format!("> \"{}\" (#{})", quote.text, quote.utterance_id));
        }
        assert!(section("Background").contains("- **About them:** I'm a dispatch lead"));
        assert!(section("Jobs to be done").contains("- When a driver calls in sick, I want to reshuffle"));
        assert!(section("Ideal solution").contains("Ideally the tool would learn our depots"));
        assert!(section("Summary").contains(EXTRACTED_NOTE));
    }

    #[test]
    fn empty_sections_say_so_and_line_breaks_stay_in_the_quote() {
        let persona = Persona {
            name: "Speaker 1".to_owned(),
            role: None,
            summary: "Speaker 1. Extracted from the interview's own words; no model was used.".to_owned(),
            demographics: None,
            goals: Vec::new(),
            pains: vec!["The export\nbreaks.".to_owned(), "Nobody answers the phone.".to_owned()],
            behaviors: Vec::new(),
            motivations: Vec::new(),
            quotes: vec![
                PersonaQuote {
                    text: "The export\nbreaks.".to_owned(),
                    utterance_id: 3,
                },
                PersonaQuote {
                    text: "Nobody answers the phone when the export breaks, ever.".to_owned(),
                    utterance_id: 7,
                },
            ],
            jobs_to_be_done: Vec::new(),
            ideal_solution: None,
        };
        let markdown = render_markdown(&persona);
        assert_eq!(markdown.matches(NOTHING_HERE).count(), 5, "{markdown}");
        for title in [
            "Background",
            "Jobs to be done",
            "Motivations",
            "Behaviours and workarounds",
            "Ideal solution",
        ] {
            assert!(
                markdown.contains(&format!("## {title}\n\n{NOTHING_HERE}\n")),
                "{title}\n{markdown}"
            );
        }
        // A line break stays inside the blockquote.
        assert!(markdown.contains("> \"The export\n> breaks.\" (#3)\n"), "{markdown}");
        // A pain that is not itself a quote gets the quotes that show it.
        assert!(
            markdown.contains(
                "- Nobody answers the phone.\n  > \"Nobody answers the phone when the export breaks, ever.\" (#7)\n"
            ),
            "{markdown}"
        );
    }

    #[test]
    fn without_marked_respondents_the_one_asking_is_left_out() {
        let utterances = unmarked();
        let persona = offline_persona("Bookkeeping call", &utterances, None);
        assert_eq!(persona.name, "Ada");
        assert_eq!(
            persona.role.as_deref(),
            Some("freelance bookkeeper for about fifteen small shops")
        );
        assert_eq!(
            persona.pains,
            ["The VAT rates are confusing and I waste half a day each month fixing mistakes."]
        );
        assert_eq!(
            persona.behaviors,
            ["Right now I copy every invoice into Excel by hand on Sunday evenings."]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("I wish the bank feed and the invoices matched themselves.")
        );
        assert!(persona.goals[0].starts_with("I'd like to send my clients a clean report"));
        let markdown = render_markdown(&persona);
        assert!(
            !markdown.contains("Researcher") && !markdown.contains("hardest part"),
            "{markdown}"
        );
        assert!(
            persona.quotes.iter().all(|q| q.utterance_id % 2 == 0),
            "{:?}",
            persona.quotes
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn nothing_said_gives_an_empty_persona_that_says_so() {
        let only_questions = vec![
            utterance(1, "Interviewer", false, "Hello, can you hear me?"),
            utterance(2, "Interviewer", false, "Are you there?"),
        ];
        let blank = vec![
            utterance(1, "Interviewer", false, "What tools do you use?"),
            utterance(2, "Speaker 2", true, "   "),
        ];
        for (utterances, name) in [(Vec::new(), UNNAMED), (only_questions, UNNAMED), (blank, "Speaker 2")] {
            let persona = offline_persona("Silent call", &utterances, Some("en"));
            assert_eq!(persona.name, name);
            assert!(items(&persona).is_empty() && persona.quotes.is_empty() && persona.jobs_to_be_done.is_empty());
            assert_eq!((persona.role, persona.demographics.clone()), (None, None));
            assert_eq!(persona.ideal_solution, None);
            assert_eq!(
                persona.summary,
                format!(
                    "There is nothing the respondent said in \"Silent call\", so there is nothing to describe. \
                     {EXTRACTED_NOTE}"
                )
            );
        }
        // Said something, but too little to use.
        let short = vec![
            utterance(1, "Interviewer", false, "Do you use the export?"),
            utterance(2, "Participant 2", true, "Yes."),
        ];
        let persona = offline_persona("Short call", &short, None);
        assert_eq!(persona.name, "Participant 2");
        assert!(
            persona.summary.starts_with("Participant 2 said too little"),
            "{}",
            persona.summary
        );
        assert!(items(&persona).is_empty() && persona.quotes.is_empty());

        let markdown = render_markdown(&offline_persona("Silent call", &[], None));
        assert!(markdown.starts_with("# Respondent\n"), "{markdown}");
        // Every section but the summary is empty.
        assert_eq!(markdown.matches(NOTHING_HERE).count(), 7, "{markdown}");
    }

    #[test]
    fn a_german_interview_uses_german_cues() {
        let utterances = german();
        let persona = offline_persona("Disposition", &utterances, Some("de-DE"));
        assert_eq!(persona.name, "Jana Krüger");
        assert_eq!(
            persona.role.as_deref(),
            Some("Disponentin bei einer Spedition in Hamburg")
        );
        assert_eq!(
            persona.goals,
            ["Ich brauche eine Übersicht über alle Touren auf einem Bildschirm."]
        );
        assert_eq!(
            persona.pains,
            [
                "Das Problem ist, dass die Fahrer ständig anrufen und ich alles von Hand umplanen muss.",
                "Das ist wirklich mühsam und dauert ewig.",
            ]
        );
        assert_eq!(
            persona.behaviors,
            ["Normalerweise plane ich die Touren in einer Excel-Tabelle, jeden Morgen ab sechs Uhr."]
        );
        assert_eq!(
            persona.motivations,
            ["Mir ist wichtig, dass die Kunden pünktlich beliefert werden."]
        );
        assert_eq!(
            persona.ideal_solution.as_deref(),
            Some("Idealerweise würde das System Staus selbst erkennen und die Touren neu planen.")
        );
        let demographics = persona.demographics.as_deref().unwrap_or_default();
        assert!(
            demographics.contains("wir sind ein Team von zwölf Leuten"),
            "{demographics}"
        );
        assert!(
            demographics.contains("Seit acht Jahren mache ich das jetzt."),
            "{demographics}"
        );
        // Not English: the goal stays as it was said.
        assert_eq!(persona.jobs_to_be_done, persona.goals);
        // Without a language, all cues are tried: the same persona.
        assert_eq!(offline_persona("Disposition", &utterances, None), persona);
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn french_spanish_and_russian_cues_find_role_goal_pain_and_ideal() {
        let cases = [
            (
                french(),
                "fr",
                "cheffe de projet chez un éditeur de logiciels à Lyon",
                "J’ai besoin de suivre les demandes des clients sans relancer tout le monde.",
                "Le problème, c’est que les tickets se perdent entre trois outils.",
                "D’habitude je note tout dans un tableur.",
                "Idéalement, tout serait au même endroit.",
            ),
            (
                spanish(),
                "es",
                "gerente de operaciones en una cadena de panaderías",
                "Necesito saber cada mañana cuánto pan sobró en cada tienda.",
                "El problema es que los encargados mandan las cifras por WhatsApp y se pierden.",
                "Normalmente lo paso todo a mano a una hoja de cálculo.",
                "Sería genial tener un panel con todas las tiendas.",
            ),
            (
                russian(),
                "ru",
                "руководитель отдела поддержки в интернет-магазине",
                "Мне нужно видеть все обращения клиентов в одном месте.",
                "Проблема в том, что письма теряются между почтой и чатом.",
                "Обычно я вручную переношу их в таблицу.",
                "В идеале система сама бы распределяла обращения по сотрудникам.",
            ),
        ];
        for (utterances, language, role, goal, pain, behavior, ideal) in cases {
            for language in [Some(language), None] {
                let persona = offline_persona("Call", &utterances, language);
                assert_eq!(persona.role.as_deref(), Some(role), "{persona:#?}");
                assert_eq!(persona.goals, [goal], "{persona:#?}");
                assert_eq!(persona.pains, [pain], "{persona:#?}");
                assert_eq!(persona.behaviors, [behavior], "{persona:#?}");
                assert_eq!(persona.ideal_solution.as_deref(), Some(ideal), "{persona:#?}");
                assert_own_words(&persona, &utterances);
            }
        }
    }

    #[test]
    fn roles_are_cut_at_the_end_of_their_phrase_or_not_taken() {
        let role = |text: &str| {
            let utterances = [utterance(1, "Kim", true, text)];
            offline_persona("Call", &utterances, None).role
        };
        assert_eq!(
            role("I'm a senior product manager at a logistics startup, and I own the routing roadmap.").as_deref(),
            Some("senior product manager at a logistics startup")
        );
        assert_eq!(
            role("I manage a team of five dispatchers and two drivers.").as_deref(),
            Some("I manage a team of five dispatchers")
        );
        assert_eq!(
            role("My role is head of customer operations.").as_deref(),
            Some("head of customer operations")
        );
        assert_eq!(
            role("As a result we lost the client, and as an engineering manager I felt responsible.").as_deref(),
            Some("engineering manager")
        );
        assert_eq!(role("I'm a bit tired of all these tools, to be honest."), None);
        assert_eq!(role("I'm the one who calls every driver in the morning."), None);
        assert_eq!(role("I manage to get it done somehow, most days."), None);
        let long = role(
            "I work as a regional operations coordinator for the northern distribution centres of a very large \
             national grocery retailer with stores everywhere.",
        )
        .unwrap_or_default();
        assert!(
            long.starts_with("regional operations coordinator for the northern"),
            "{long}"
        );
        assert!(long.chars().count() <= MAX_ROLE_CHARS, "{long}");
        assert!(
            !long.ends_with(" a") && !long.ends_with(" of") && !long.ends_with(" the"),
            "{long}"
        );
    }

    #[test]
    fn run_on_sentences_are_cut_into_clauses() {
        let text = "so yeah we get the orders in the morning and then we look at the trucks and the drivers and \
                    the depots and everything, and honestly the problem is that the planning tool keeps crashing \
                    whenever we load more than two hundred stops, and then somebody has to redo the whole plan in \
                    a spreadsheet by hand which takes the whole morning and the drivers wait and wait and the \
                    customers keep calling us about where their parcels are";
        let utterances = [
            utterance(1, "Interviewer", false, "Walk me through it?"),
            utterance(2, "Lee", true, text),
        ];
        let persona = offline_persona("Call", &utterances, Some("en"));
        assert!(!persona.pains.is_empty(), "{persona:#?}");
        for item in items(&persona) {
            assert!(item.unicode_words().count() <= MAX_SENTENCE_WORDS, "{item}");
        }
        assert!(
            persona
                .pains
                .iter()
                .any(|pain| pain.contains("the problem is that the planning tool keeps crashing")),
            "{persona:#?}"
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn repeated_sentences_are_kept_once() {
        let utterances = interview(
            &[
                ("Interviewer", "What do you need?"),
                ("Mo", "I need to see all the open tickets on one page."),
                ("Interviewer", "Anything else?"),
                ("Mo", "Well, I need to see all the open tickets on one page!"),
                ("Mo", "It's frustrating to click through five tabs every single time."),
            ],
            "Interviewer",
        );
        let persona = offline_persona("Call", &utterances, Some("en"));
        assert_eq!(persona.goals, ["I need to see all the open tickets on one page."]);
        let texts: Vec<&str> = persona.quotes.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(
            texts.iter().filter(|t| t.contains("open tickets")).count(),
            1,
            "{texts:?}"
        );
        assert_own_words(&persona, &utterances);
    }

    #[test]
    fn cues_are_written_as_they_are_matched() {
        for (code, cues) in LANGUAGES {
            let lists = [
                cues.goals,
                cues.pains,
                cues.behaviors,
                cues.motivations,
                cues.reasons,
                cues.ideal,
                cues.background,
                cues.tenure,
                cues.headcount,
                cues.organisation,
                cues.role_explicit,
                cues.role_verb,
                cues.stops,
                cues.prepositions,
            ];
            let nouns: Vec<&str> = cues.role_noun.iter().map(|(cue, _)| *cue).collect();
            for cue in lists.iter().flat_map(|list| phrases(list)).chain(nouns) {
                let (folded, _) = fold(cue);
                assert_eq!(
                    folded, cue,
                    "{code}: {cue:?} is not lower case with straight apostrophes"
                );
                assert_eq!(cue.trim(), cue, "{code}: {cue:?}");
                assert!(!cue.is_empty());
            }
        }
        // A cue matches whole words only, or the start of one with `*`.
        assert_eq!(find_cue("whatever we do", "hate*"), None);
        assert_eq!(find_cue("i hated it", "hate*"), Some(2..6));
        assert_eq!(find_cue("i wanted it", "i want"), None);
        assert_eq!(find_cue("so i want it", "i want"), Some(3..9));
        assert_eq!(cue_sets(Some("de-AT")).len(), 2);
        assert_eq!(cue_sets(Some("en-GB")).len(), 1);
        assert_eq!(cue_sets(Some("pt")).len(), LANGUAGES.len());
        assert_eq!(cue_sets(None).len(), LANGUAGES.len());
    }

    #[test]
    fn generated_transcripts_keep_to_the_respondents_words() {
        let answers = [
            "I need to export the report every Friday.",
            "The problem is that nobody updates the sheet.",
            "We use a shared spreadsheet for the roster, mostly.",
            "Ideally everything would sync by itself!",
            "Because our clients pay late, cash is always tight.",
            "I'm an office manager at a dental practice in Porto.",
            "It's frustrating, really, really frustrating…",
            "Ich brauche einen Überblick über alle Termine.",
            "Das Problem ist die doppelte Eingabe.",
            "Я хочу видеть все заказы сразу.",
            "Uh, yeah.",
            "???",
            "",
            "  \n  ",
            "I care about my team — they deserve better tools.",
            "When the scanner fails, I have to type every code manually.",
            "Mr. Smith said the app \"just works\" but it can't handle returns.",
            "emoji 🚚🚚 and CJK 配送が遅い and tabs\tand\nnew lines that I hate.",
        ];
        let questions = [
            "What do you need?",
            "Why is that hard?",
            "I want to know more, what do you use?",
            "If you had a magic wand, what would you change?",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..40 {
            let mut utterances = Vec::new();
            let marked = round % 4 != 0;
            for id in 1..=(2 + next(14)) as i64 {
                let interviewer = id % 2 == 1;
                let text = if interviewer {
                    questions[next(questions.len())].to_owned()
                } else {
                    (0..1 + next(3))
                        .map(|_| answers[next(answers.len())])
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let speaker = if interviewer {
                    "Interviewer"
                } else if next(4) == 0 {
                    "Speaker 3"
                } else {
                    "Speaker 2"
                };
                utterances.push(utterance(id, speaker, marked && !interviewer, &text));
            }
            let language = [Some("en"), Some("de"), None, Some("xx")][next(4)];
            let persona = offline_persona("Generated", &utterances, language);
            assert_own_words(&persona, &utterances);
            assert_eq!(offline_persona("Generated", &utterances, language), persona);
            let markdown = render_markdown(&persona);
            for question in questions {
                assert!(!markdown.contains(question), "{question}\n{markdown}");
            }
            assert!(markdown.contains("\n## Quotes\n"));
        }
    }
}
