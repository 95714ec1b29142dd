//! The page a respondent opens from an interview link. It shows the room and runs the
//! conversation against the public join API from `assets/interview.js`.
//!
//! The HTML is askama's (`templates/respondent/`), checked at compile time and escaping
//! everything that comes from a room. The page is served under a strict
//! Content-Security-Policy, so it has no inline script or style; the script reads the
//! token and language from `data-*` attributes on `<body>` and its strings from a JSON
//! block.

use askama::Template;
use serde::Serialize;

/// What the page shows of a room.
pub struct PageRoom<'a> {
    /// The access token (URL-safe base64 characters only, but escaped anyway).
    pub token: &'a str,
    pub room_name: &'a str,
    pub project_name: &'a str,
    /// `pending` | `active` | `completed` | `expired` | `cancelled`.
    pub status: &'a str,
    /// A BCP 47 tag; a primary subtag the page has no text for falls back to English.
    pub language: &'a str,
    /// Shown under the header when not empty.
    pub topics_for_respondent: &'a str,
    pub max_duration_minutes: i64,
    /// The workspace's consent text, which the respondent accepts to start; none: the
    /// page only says that answers are recorded.
    pub consent_text: Option<&'a str>,
}

pub const SCRIPT: &str = include_str!("assets/interview.js");
pub const STYLE: &str = include_str!("assets/interview.css");

/// The Content-Security-Policy header value the page is served with.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; media-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const SCRIPT_URL: &str = "/interview/assets/interview.js";
const STYLE_URL: &str = "/interview/assets/interview.css";

/// The full HTML document for a room: the join form while the room can still be
/// joined, otherwise only the message that says why not.
pub fn render(room: &PageRoom<'_>) -> String {
    render_page(room, None)
}

/// The same page as a researcher previews it (`back` is where its banner leads): a
/// banner says so, the join form is switched off and the script is left out, so nothing
/// can be joined or sent from it.
pub fn render_preview(room: &PageRoom<'_>, back: &str) -> String {
    render_page(room, Some(back))
}

/// The respondent's page (`templates/respondent/page.html`); askama escapes every value
/// that comes from a room.
#[derive(Template)]
#[template(path = "respondent/page.html")]
struct Page<'a> {
    lang: &'static str,
    title: String,
    style_url: &'static str,
    script_url: &'static str,
    /// The script's strings as JSON (none in a preview, which runs no script).
    strings: Option<String>,
    state: &'static str,
    token: &'a str,
    status: &'a str,
    speech_lang: String,
    preview_back: Option<&'a str>,
    room_name: &'a str,
    project_name: &'a str,
    duration: String,
    topics: &'a str,
    /// Why the room cannot be joined, when it cannot.
    closed: Option<&'static str>,
    text: &'static Text,
    /// A preview: the form is switched off.
    off: bool,
    /// The workspace's consent text, paragraph by paragraph.
    consent: Option<Vec<&'a str>>,
}

#[derive(Template)]
#[template(path = "respondent/not_found.html")]
struct NotFound {
    lang: &'static str,
    title: &'static str,
    style_url: &'static str,
    message: &'static str,
}

fn render_page(room: &PageRoom<'_>, preview: Option<&str>) -> String {
    let known = supported(room.language);
    let text = known.unwrap_or(&EN);
    let room_name = if room.room_name.trim().is_empty() {
        text.interview
    } else {
        room.room_name
    };
    let project_name = room.project_name.trim();
    let title = if project_name.is_empty() {
        room_name.to_owned()
    } else {
        format!("{room_name} – {}", room.project_name)
    };
    let (state, closed) = match room.status {
        "pending" | "active" => ("join", None),
        "completed" => ("completed", Some(text.script.completed)),
        "expired" => ("expired", Some(text.expired)),
        "cancelled" => ("cancelled", Some(text.cancelled)),
        _ => ("unavailable", Some(text.unavailable)),
    };
    let state = if preview.is_some() { "preview" } else { state };
    // Speech engines do better with the room's region ("de-AT") than with the bare
    // language the page text is in; a language without page text is spoken as English.
    let speech_lang = match known {
        Some(_) => room.language.trim().replace('_', "-"),
        None => "en".to_owned(),
    };
    let consent = room
        .consent_text
        .map(str::trim)
        .filter(|consent| !consent.is_empty())
        .map(|consent| consent.split("\n\n").map(str::trim).collect());
    let page = Page {
        lang: text.lang,
        title,
        style_url: STYLE_URL,
        script_url: SCRIPT_URL,
        strings: preview.is_none().then(|| script_json(&text.script)),
        state,
        token: room.token,
        status: room.status,
        speech_lang,
        // The banner speaks to the researcher, in the console's language, whatever the
        // room's.
        preview_back: preview,
        room_name,
        project_name: if project_name.is_empty() { "" } else { room.project_name },
        duration: (text.about_minutes)(room.max_duration_minutes),
        topics: room.topics_for_respondent.trim(),
        closed,
        text,
        off: preview.is_some(),
        consent,
    };
    page.render().expect("the respondent's page renders")
}

/// The page for a token that names no room, in the first language of `accept_language`
/// (an `Accept-Language` header value) the page has text for, else in English.
pub fn render_not_found(accept_language: Option<&str>) -> String {
    let text = accept_language.and_then(preferred).unwrap_or(&EN);
    NotFound {
        lang: text.lang,
        title: text.not_found_title,
        style_url: STYLE_URL,
        message: text.not_found_body,
    }
    .render()
    .expect("the not-found page renders")
}

/// JSON for a `<script type="application/json">` block. The HTML parser ends the block
/// at the first `</script` whatever the JSON means, so no `<` may appear literally.
fn script_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .expect("the page strings serialize")
        .replace('<', "\\u003c")
}

/// The page text for `tag`'s primary subtag, if the page has it.
fn supported(tag: &str) -> Option<&'static Text> {
    let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
    LANGUAGES
        .iter()
        .copied()
        .find(|text| text.lang.eq_ignore_ascii_case(primary))
}

/// The first language of an `Accept-Language` value the page has text for, taking the
/// `q` weights into account (ties keep the header's order; `q=0` means "not this one").
fn preferred(accept_language: &str) -> Option<&'static Text> {
    let mut tags: Vec<(f32, &str)> = accept_language
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let tag = parts.next()?.trim();
            let weight = match parts.find_map(|p| p.trim().strip_prefix("q=")) {
                Some(q) => q.trim().parse::<f32>().ok()?,
                None => 1.0,
            };
            (weight > 0.0).then_some((weight, tag))
        })
        .collect();
    tags.sort_by(|a, b| b.0.total_cmp(&a.0));
    tags.into_iter().find_map(|(_, tag)| supported(tag))
}

/// Everything the page says in one language.
struct Text {
    lang: &'static str,
    about_minutes: fn(i64) -> String,
    interview: &'static str,
    topics: &'static str,
    join_heading: &'static str,
    join_intro: &'static str,
    email_label: &'static str,
    join: &'static str,
    consent: &'static str,
    consent_heading: &'static str,
    consent_accept: &'static str,
    conversation: &'static str,
    time_left: &'static str,
    message_label: &'static str,
    message_hint: &'static str,
    send: &'static str,
    mic: &'static str,
    speak: &'static str,
    expired: &'static str,
    cancelled: &'static str,
    unavailable: &'static str,
    noscript: &'static str,
    not_found_title: &'static str,
    not_found_body: &'static str,
    script: ScriptText,
}

/// The part of `Text` the script shows; the page renders some of it too.
#[derive(Serialize)]
struct ScriptText {
    typing: &'static str,
    connection_lost: &'static str,
    error: &'static str,
    confirm_leave: &'static str,
    leave: &'static str,
    completed: &'static str,
    interviewer: &'static str,
    you: &'static str,
    mic_error: &'static str,
}

static LANGUAGES: [&Text; 5] = [&EN, &DE, &FR, &ES, &RU];

static EN: Text = Text {
    lang: "en",
    about_minutes: |n| match n {
        1 => "About 1 minute".to_owned(),
        _ => format!("About {n} minutes"),
    },
    interview: "Interview",
    topics: "Topics",
    join_heading: "Join the interview",
    join_intro: "Enter your email address to begin. If you have already started, the same address takes you back to where you left off.",
    email_label: "Email address",
    join: "Start interview",
    consent: "Your answers are recorded for research by the project team.",
    consent_heading: "Consent",
    consent_accept: "I have read this and I agree.",
    conversation: "Conversation",
    time_left: "Time left",
    message_label: "Your answer",
    message_hint: "Enter sends, Shift+Enter starts a new line.",
    send: "Send",
    mic: "Dictate",
    speak: "Read questions aloud",
    expired: "This interview link has expired.",
    cancelled: "This interview was cancelled.",
    unavailable: "This interview is not available.",
    noscript: "This page needs JavaScript to run the interview. Please turn it on and reload the page.",
    not_found_title: "This link is not valid",
    not_found_body: "Please check that you opened the whole link you received, or ask the person who sent it for a new one.",
    script: ScriptText {
        typing: "The interviewer is typing…",
        connection_lost: "The connection was lost. Please try again.",
        error: "Something went wrong. Please try again.",
        confirm_leave: "Really end?",
        leave: "End interview",
        completed: "This interview is complete. Thank you!",
        interviewer: "Interviewer",
        you: "You",
        mic_error: "Dictation is not available. Please type your answer.",
    },
};

static DE: Text = Text {
    lang: "de",
    about_minutes: |n| match n {
        1 => "Etwa 1 Minute".to_owned(),
        _ => format!("Etwa {n} Minuten"),
    },
    interview: "Interview",
    topics: "Themen",
    join_heading: "Am Interview teilnehmen",
    join_intro: "Geben Sie Ihre E-Mail-Adresse ein, um zu beginnen. Wenn Sie schon begonnen haben, geht es mit derselben Adresse dort weiter, wo Sie aufgehört haben.",
    email_label: "E-Mail-Adresse",
    join: "Interview starten",
    consent: "Ihre Antworten werden vom Projektteam für Forschungszwecke aufgezeichnet.",
    consent_heading: "Einwilligung",
    consent_accept: "Ich habe das gelesen und bin einverstanden.",
    conversation: "Gespräch",
    time_left: "Verbleibende Zeit",
    message_label: "Ihre Antwort",
    message_hint: "Eingabe sendet, Umschalt+Eingabe beginnt eine neue Zeile.",
    send: "Senden",
    mic: "Diktieren",
    speak: "Fragen vorlesen",
    expired: "Dieser Interview-Link ist abgelaufen.",
    cancelled: "Dieses Interview wurde abgesagt.",
    unavailable: "Dieses Interview ist nicht verfügbar.",
    noscript: "Diese Seite braucht JavaScript, um das Interview zu führen. Bitte aktivieren Sie es und laden Sie die Seite neu.",
    not_found_title: "Dieser Link ist ungültig",
    not_found_body: "Bitte prüfen Sie, ob Sie den vollständigen Link geöffnet haben, oder bitten Sie die Person, die ihn Ihnen geschickt hat, um einen neuen.",
    script: ScriptText {
        typing: "Der Interviewer schreibt…",
        connection_lost: "Die Verbindung wurde unterbrochen. Bitte versuchen Sie es noch einmal.",
        error: "Etwas ist schiefgelaufen. Bitte versuchen Sie es noch einmal.",
        confirm_leave: "Wirklich beenden?",
        leave: "Interview beenden",
        completed: "Das Interview ist abgeschlossen. Vielen Dank!",
        interviewer: "Interviewer",
        you: "Sie",
        mic_error: "Diktieren ist nicht verfügbar. Bitte tippen Sie Ihre Antwort.",
    },
};

// French puts a narrow no-break space (U+202F) before "?" and "!".
static FR: Text = Text {
    lang: "fr",
    about_minutes: |n| match n {
        0 | 1 => format!("Environ {n} minute"),
        _ => format!("Environ {n} minutes"),
    },
    interview: "Entretien",
    topics: "Thèmes",
    join_heading: "Rejoindre l’entretien",
    join_intro: "Saisissez votre adresse e-mail pour commencer. Si vous avez déjà commencé, la même adresse vous permet de reprendre là où vous en étiez.",
    email_label: "Adresse e-mail",
    join: "Commencer l’entretien",
    consent: "Vos réponses sont enregistrées par l’équipe du projet à des fins de recherche.",
    consent_heading: "Consentement",
    consent_accept: "J’ai lu ce texte et je l’accepte.",
    conversation: "Conversation",
    time_left: "Temps restant",
    message_label: "Votre réponse",
    message_hint: "Entrée pour envoyer, Maj+Entrée pour aller à la ligne.",
    send: "Envoyer",
    mic: "Dicter",
    speak: "Lire les questions à voix haute",
    expired: "Ce lien d’entretien a expiré.",
    cancelled: "Cet entretien a été annulé.",
    unavailable: "Cet entretien n’est pas disponible.",
    noscript: "Cette page a besoin de JavaScript pour mener l’entretien. Veuillez l’activer, puis recharger la page.",
    not_found_title: "Ce lien n’est pas valide",
    not_found_body: "Vérifiez que vous avez ouvert le lien complet que vous avez reçu, ou demandez-en un nouveau à la personne qui vous l’a envoyé.",
    script: ScriptText {
        typing: "L’intervieweur écrit…",
        connection_lost: "La connexion a été perdue. Veuillez réessayer.",
        error: "Une erreur s’est produite. Veuillez réessayer.",
        confirm_leave: "Vraiment terminer\u{202f}?",
        leave: "Terminer l’entretien",
        completed: "Cet entretien est terminé. Merci\u{202f}!",
        interviewer: "Intervieweur",
        you: "Vous",
        mic_error: "La dictée n’est pas disponible. Veuillez saisir votre réponse.",
    },
};

static ES: Text = Text {
    lang: "es",
    about_minutes: |n| match n {
        1 => "Aproximadamente 1 minuto".to_owned(),
        _ => format!("Aproximadamente {n} minutos"),
    },
    interview: "Entrevista",
    topics: "Temas",
    join_heading: "Unirse a la entrevista",
    join_intro: "Introduzca su dirección de correo electrónico para empezar. Si ya había empezado, con la misma dirección continuará donde lo dejó.",
    email_label: "Correo electrónico",
    join: "Empezar la entrevista",
    consent: "El equipo del proyecto registra sus respuestas con fines de investigación.",
    consent_heading: "Consentimiento",
    consent_accept: "He leído este texto y estoy de acuerdo.",
    conversation: "Conversación",
    time_left: "Tiempo restante",
    message_label: "Su respuesta",
    message_hint: "Intro envía, Mayús+Intro inserta un salto de línea.",
    send: "Enviar",
    mic: "Dictar",
    speak: "Leer las preguntas en voz alta",
    expired: "Este enlace de entrevista ha caducado.",
    cancelled: "Esta entrevista se ha cancelado.",
    unavailable: "Esta entrevista no está disponible.",
    noscript: "Esta página necesita JavaScript para realizar la entrevista. Actívelo y vuelva a cargar la página.",
    not_found_title: "Este enlace no es válido",
    not_found_body: "Compruebe que ha abierto el enlace completo que recibió o pida uno nuevo a la persona que se lo envió.",
    script: ScriptText {
        typing: "El entrevistador está escribiendo…",
        connection_lost: "Se ha perdido la conexión. Inténtelo de nuevo.",
        error: "Algo ha salido mal. Inténtelo de nuevo.",
        confirm_leave: "¿Seguro que quiere terminar?",
        leave: "Terminar la entrevista",
        completed: "La entrevista ha terminado. ¡Gracias!",
        interviewer: "Entrevistador",
        you: "Usted",
        mic_error: "El dictado no está disponible. Escriba su respuesta.",
    },
};

static RU: Text = Text {
    lang: "ru",
    // "Около" takes the genitive: "минуты" after 1, 21, 31… (but not 11), else "минут".
    about_minutes: |n| {
        let unit = if n % 10 == 1 && n % 100 != 11 {
            "минуты"
        } else {
            "минут"
        };
        format!("Около {n} {unit}")
    },
    interview: "Интервью",
    topics: "Темы",
    join_heading: "Присоединиться к интервью",
    join_intro: "Введите адрес электронной почты, чтобы начать. Если вы уже начали, с тем же адресом вы продолжите с того места, где остановились.",
    email_label: "Адрес электронной почты",
    join: "Начать интервью",
    consent: "Команда проекта записывает ваши ответы для исследования.",
    consent_heading: "Согласие",
    consent_accept: "Я прочитал(а) этот текст и согласен(на).",
    conversation: "Беседа",
    time_left: "Осталось",
    message_label: "Ваш ответ",
    message_hint: "Enter — отправить, Shift+Enter — новая строка.",
    send: "Отправить",
    mic: "Голосовой ввод",
    speak: "Читать вопросы вслух",
    expired: "Срок действия этой ссылки на интервью истёк.",
    cancelled: "Это интервью отменено.",
    unavailable: "Это интервью недоступно.",
    noscript: "Для интервью на этой странице нужен JavaScript. Включите его и перезагрузите страницу.",
    not_found_title: "Эта ссылка недействительна",
    not_found_body: "Проверьте, что вы открыли ссылку полностью, или попросите у отправителя новую.",
    script: ScriptText {
        typing: "Интервьюер печатает…",
        connection_lost: "Соединение потеряно. Попробуйте ещё раз.",
        error: "Что-то пошло не так. Попробуйте ещё раз.",
        confirm_leave: "Точно завершить?",
        leave: "Завершить интервью",
        completed: "Интервью завершено. Спасибо!",
        interviewer: "Интервьюер",
        you: "Вы",
        mic_error: "Голосовой ввод недоступен. Пожалуйста, напечатайте ответ.",
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn room<'a>(status: &'a str, language: &'a str) -> PageRoom<'a> {
        PageRoom {
            token: "tok_EN-123",
            room_name: "Checkout study",
            project_name: "Shop",
            status,
            language,
            topics_for_respondent: "Shipping, returns",
            max_duration_minutes: 30,
            consent_text: None,
        }
    }

    /// The contents of the strings block, as the script's `JSON.parse` sees them.
    fn strings_block(html: &str) -> &str {
        let open = "<script type=\"application/json\" id=\"strings\">";
        let start = html.find(open).expect("a strings block") + open.len();
        let end = start + html[start..].find("</script>").expect("the block closes");
        &html[start..end]
    }

    #[test]
    fn room_fields_are_escaped() {
        let html = render(&PageRoom {
            token: "a\"b<c>",
            room_name: "<script>alert('room')</script>",
            project_name: "\"Quoted\" & <b>bold</b>",
            status: "active",
            language: "en",
            topics_for_respondent: "<img src=x onerror=alert(1)> 'topics'",
            max_duration_minutes: 30,
            consent_text: Some("<b>I agree</b>\n\nto be recorded."),
        });
        assert!(html.contains(
            "<div class=\"agreement-text\"><p>&#60;b&#62;I agree&#60;/b&#62;</p><p>to be recorded.</p></div>"
        ));
        assert!(html.contains(r#"<input id="consent" name="consent" type="checkbox" required>"#));
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("<b>bold"));
        assert!(!html.contains("<img"));
        assert!(html.contains("<h1>&#60;script&#62;alert(&#39;room&#39;)&#60;/script&#62;</h1>"));
        assert!(html.contains("&#34;Quoted&#34; &#38; &#60;b&#62;bold&#60;/b&#62;"));
        assert!(html.contains("&#60;img src=x onerror=alert(1)&#62; &#39;topics&#39;"));
        assert!(html.contains(r#"data-token="a&#34;b&#60;c&#62;""#));
    }

    #[test]
    fn each_language_renders_its_own_text() {
        for (language, label) in [
            ("en", "Email address"),
            ("de", "E-Mail-Adresse"),
            ("fr", "Adresse e-mail"),
            ("es", "Correo electrónico"),
            ("ru", "Адрес электронной почты"),
        ] {
            let html = render(&room("pending", language));
            assert!(html.contains(&format!("<html lang=\"{language}\">")), "{language}");
            assert!(
                html.contains(&format!("<label for=\"email\">{label}</label>")),
                "{language}"
            );
            assert!(html.contains(&format!("data-lang=\"{language}\"")), "{language}");
        }
    }

    #[test]
    fn a_regional_tag_uses_its_language_and_keeps_the_region_for_speech() {
        let html = render(&room("active", "de-AT"));
        assert!(html.contains("<html lang=\"de\">"));
        assert!(html.contains("data-lang=\"de-AT\""));
        assert!(html.contains("Etwa 30 Minuten"));
    }

    #[test]
    fn an_unknown_language_falls_back_to_english() {
        for language in ["pt", "", "zz-ZZ"] {
            let html = render(&room("active", language));
            assert!(html.contains("<html lang=\"en\">"), "{language:?}");
            assert!(html.contains("data-lang=\"en\""), "{language:?}");
            assert!(
                html.contains("<label for=\"email\">Email address</label>"),
                "{language:?}"
            );
        }
    }

    #[test]
    fn joinable_rooms_show_the_form_and_consent() {
        for status in ["pending", "active"] {
            let html = render(&room(status, "en"));
            assert!(html.contains("data-state=\"join\""));
            assert!(html.contains(r#"<input id="email" name="email" type="email" autocomplete="email" required"#));
            assert!(html.contains("<button id=\"join\""));
            assert!(html.contains("Your answers are recorded for research by the project team."));
        }
    }

    #[test]
    fn closed_rooms_show_only_their_message() {
        for (status, message) in [
            ("completed", "This interview is complete. Thank you!"),
            ("expired", "This interview link has expired."),
            ("cancelled", "This interview was cancelled."),
            ("archived", "This interview is not available."),
        ] {
            let html = render(&room(status, "en"));
            assert!(html.contains(message), "{status}");
            assert!(!html.contains("id=\"email\""), "{status}");
            assert!(!html.contains("<form"), "{status}");
        }
        assert!(render(&room("expired", "ru")).contains("data-state=\"expired\""));
        assert!(render(&room("cancelled", "es")).contains("Esta entrevista se ha cancelado."));
    }

    #[test]
    fn the_strings_block_cannot_end_the_script_element() {
        for text in LANGUAGES {
            let html = render(&room("active", text.lang));
            let block = strings_block(&html);
            assert!(!block.contains('<'), "{}", text.lang);
            let strings: serde_json::Value = serde_json::from_str(block).unwrap();
            assert_eq!(strings["leave"], text.script.leave);
        }
        let json = script_json(&"</script><script>alert(1)</script>");
        assert!(!json.to_ascii_lowercase().contains("</script"));
        assert_eq!(
            serde_json::from_str::<String>(&json).unwrap(),
            "</script><script>alert(1)</script>"
        );
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        let html = render(&room("active", "fr"));
        assert!(!html.contains("style="));
        assert!(!html.contains("<style"));
        let handler = html.split(" on").skip(1).find(|rest| {
            let name_end = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
            name_end > 0 && rest[name_end..].starts_with('=')
        });
        assert_eq!(handler, None, "no inline event handlers");
        assert_eq!(html.matches("<script").count(), 2);
        assert!(html.contains(&format!("<script src=\"{SCRIPT_URL}\" defer></script>")));
        assert!(html.contains(&format!("<link rel=\"stylesheet\" href=\"{STYLE_URL}\">")));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    #[test]
    fn every_element_the_script_looks_up_is_on_the_page() {
        // With a consent text, so that its box is there too.
        let html = render(&PageRoom {
            consent_text: Some("I agree."),
            ..room("active", "en")
        });
        let ids: Vec<&str> = SCRIPT
            .split("$(\"")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect();
        assert!(ids.len() > 10, "{ids:?}");
        for id in ids {
            assert!(html.contains(&format!(" id=\"{id}\"")), "#{id} is missing");
        }
    }

    #[test]
    fn script_strings_are_all_used_by_the_script() {
        let strings: serde_json::Value = serde_json::from_str(&script_json(&EN.script)).unwrap();
        for key in strings.as_object().unwrap().keys() {
            assert!(SCRIPT.contains(&format!("S.{key}")), "S.{key} is never used");
        }
    }

    #[test]
    fn minutes_agree_with_their_number() {
        assert_eq!((EN.about_minutes)(1), "About 1 minute");
        assert_eq!((EN.about_minutes)(45), "About 45 minutes");
        assert_eq!((FR.about_minutes)(1), "Environ 1 minute");
        assert_eq!((RU.about_minutes)(1), "Около 1 минуты");
        assert_eq!((RU.about_minutes)(11), "Около 11 минут");
        assert_eq!((RU.about_minutes)(21), "Около 21 минуты");
        assert_eq!((RU.about_minutes)(30), "Около 30 минут");
    }

    #[test]
    fn empty_topics_and_project_are_left_out() {
        let html = render(&PageRoom {
            topics_for_respondent: "  ",
            project_name: "",
            room_name: "",
            ..room("active", "es")
        });
        assert!(!html.contains("topics-heading"));
        assert!(!html.contains("class=\"project\""));
        assert!(html.contains("<h1>Entrevista</h1>"));
        assert!(html.contains("<title>Entrevista</title>"));
    }

    #[test]
    fn not_found_follows_accept_language() {
        let html = render_not_found(Some("de-DE,de;q=0.9,en;q=0.8"));
        assert!(html.contains("<html lang=\"de\">"));
        assert!(html.contains("Dieser Link ist ungültig"));
        assert!(!html.contains("<script"));

        let cases = [
            (None, "en"),
            (Some(""), "en"),
            (Some("pt-BR,pt;q=0.9"), "en"),
            (Some("pt-BR, ru;q=0.5, fr;q=0.7"), "fr"),
            (Some("fr;q=0, es"), "es"),
            (Some("*;q=0.1, RU"), "ru"),
        ];
        for (header, lang) in cases {
            assert!(
                render_not_found(header).contains(&format!("<html lang=\"{lang}\">")),
                "{header:?}"
            );
        }
    }

    #[test]
    fn a_preview_says_so_and_cannot_join() {
        let html = render_preview(&room("pending", "de"), "/p/1/interviews");
        assert!(html.contains("class=\"preview-banner\""), "{html}");
        assert!(html.contains("href=\"/p/1/interviews\""), "{html}");
        assert!(html.contains("data-state=\"preview\""), "{html}");
        assert!(html.contains("Interview starten"), "in the room's language: {html}");
        assert!(!html.contains(SCRIPT_URL), "no script: nothing can be sent");
        assert!(
            html.contains("id=\"join\" type=\"submit\" class=\"primary\" disabled"),
            "{html}"
        );
        assert!(!render(&room("pending", "de")).contains("preview-banner"));
    }
}
