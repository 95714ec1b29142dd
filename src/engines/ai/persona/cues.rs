//! The cue phrases a respondent's sentences are matched against, per language, and the
//! word lists that go with them (role nouns, numbers, fillers of speech).

use crate::engines::search::bm25::Analyzer;

/// The cue phrases of one language, in lower case with straight apostrophes, separated by `|`
/// ([`phrases`]). A phrase matches at word boundaries; a trailing `*` lets it match the start of a
/// longer word (`frustrat*`).
pub(super) struct Cues {
    /// What the respondent wants to get done.
    pub(super) goals: &'static str,
    /// What gets in the way.
    pub(super) pains: &'static str,
    /// How the respondent works today, workarounds included.
    pub(super) behaviors: &'static str,
    /// Why it matters, said outright.
    pub(super) motivations: &'static str,
    /// A reason given in passing ("because"): a motivation when nothing else is said.
    pub(super) reasons: &'static str,
    /// The ideal solution.
    pub(super) ideal: &'static str,
    /// Background: team, company, experience, location.
    pub(super) background: &'static str,
    /// Experience: background when the sentence also has a number and a year word.
    pub(super) tenure: &'static str,
    /// Head count ("employees"): background when the sentence also has a number.
    pub(super) headcount: &'static str,
    /// "We're a …": background when the sentence also names an organisation.
    pub(super) organisation: &'static str,
    /// The role follows as it stands ("my role is").
    pub(super) role_explicit: &'static str,
    /// A role noun must follow within so many words ("I'm a", 4).
    pub(super) role_noun: &'static [(&'static str, usize)],
    /// "I lead": the clause is the role when a team or an organisation follows.
    pub(super) role_verb: &'static str,
    /// Words that end a role phrase.
    pub(super) stops: &'static str,
    /// Words after a role noun that carry the phrase on ("manager at …").
    pub(super) prepositions: &'static str,
}

pub(super) static ENGLISH: Cues = Cues {
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

pub(super) static GERMAN: Cues = Cues {
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

pub(super) static FRENCH: Cues = Cues {
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

pub(super) static SPANISH: Cues = Cues {
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

pub(super) static RUSSIAN: Cues = Cues {
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
pub(super) static LANGUAGES: [(&str, &Cues); 5] = [
    ("en", &ENGLISH),
    ("de", &GERMAN),
    ("fr", &FRENCH),
    ("es", &SPANISH),
    ("ru", &RUSSIAN),
];

/// Nouns of roles (English, German, French, Spanish, Russian), separated by spaces. `word`
/// matches the word or its plural in `s`/`es`; `word*` the start of a word; `*word*` any part of
/// one (German compounds).
pub(super) const ROLE_NOUNS: &str = "*manager* lead leader head chief director engineer developer dev devops designer \
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
pub(super) const ORGANISATION_NOUNS: &str = "team department group company companies business office unit division store shop \
    restaurant agency practice studio fleet warehouse depot operations ops squad crew program programme product \
    desk shift project startup firm organisation organization people employees staff drivers engineers developers \
    dispatchers nonprofit charity school clinic hospital bakery lab branch region site plant factory function \
    logistics dispatch *team* abteilung* firma *unternehmen* gruppe bereich filiale standort *mitarbeiter* leute \
    personen kollegen *spedition* betrieb agentur praxis lager projekt* disposition équipe* service département \
    entreprise société agence boutique magasin personnes salariés employés projet* cabinet equipo departamento \
    empresa compañía área tienda agencia personas empleados proyecto* oficina cadena команд* отдел* компани* фирм* \
    групп* направлени* проект* сотрудник* человек людей склад* офис* стартап*";

/// Numbers spelled out, in any of the languages.
pub(super) const NUMBER_WORDS: &str = "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty \
    forty fifty hundred dozen couple zwei drei vier fünf sechs sieben acht neun zehn zwölf zwanzig dreißig hundert \
    deux trois quatre cinq sept huit neuf dix douze vingt trente cent dos tres cuatro cinco seis siete ocho nueve \
    diez doce veinte treinta cien два две три четыре пять шесть семь восемь девять десять двадцать тридцать сто";

/// Words for years, in any of the languages.
pub(super) const YEAR_WORDS: &str = "year years yrs jahr jahre jahren ans année années año años год года лет";

/// Function words a role phrase does not end on.
pub(super) const TRAILING_WORDS: &str = "a an the to and our my die das dem den ein eine einer einem eines und la le les l un \
    une et el los las y и";

/// Sounds of hesitation a sentence may start with and lose, when a comma or a space follows.
pub(super) const NOISE: &str = "um umm uh uhm erm hmm äh ähm öhm euh eh";
/// The same, when a comma follows (with a space they may be words: German "er").
pub(super) const NOISE_BEFORE_COMMA: &str = "er mm mhm";
/// Words a sentence may start with and lose, when a comma or a space follows and what is left
/// starts with a capital letter, as sentences do ("So I need …", "Honestly, it's …").
pub(super) const FILLERS: &str = "yeah so and well oh honestly basically also naja pues ну";
/// The same, when a comma follows ("Right, …" but not "Right now …").
pub(super) const FILLERS_BEFORE_COMMA: &str =
    "yes yep yup okay ok right actually ja genau bon ben alors bah bueno este vale вот так да короче";

/// The cue sets for `language`: its own and English when it is one of those covered, all of
/// them otherwise.
pub(super) fn cue_sets(language: Option<&str>) -> Vec<&'static Cues> {
    let code = Analyzer::new(language).language();
    match code.and_then(|code| LANGUAGES.iter().find(|(known, _)| *known == code)) {
        Some(("en", _)) => vec![&ENGLISH],
        Some((_, cues)) => vec![*cues, &ENGLISH],
        None => LANGUAGES.iter().map(|(_, cues)| *cues).collect(),
    }
}

/// The phrases of a cue list.
pub(super) fn phrases(list: &'static str) -> impl Iterator<Item = &'static str> {
    list.split('|').map(str::trim).filter(|phrase| !phrase.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ai::persona::classify::find_cue;
    use crate::engines::ai::persona::units::fold;

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
}
