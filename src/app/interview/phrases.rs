//! What the offline interviewer says, in the languages the respondent page speaks
//! (English for any other).

/// The interviewer's own sentences in one language.
pub struct Phrases {
    /// Greeting; `{minutes}` is the interview's length.
    pub greeting: &'static str,
    /// Introduces the topics; `{topics}` is what the researcher wrote.
    pub about: &'static str,
    pub first_question: &'static str,
    /// Neutral requests for more, used in turn when an answer is short.
    pub follow_ups: [&'static str; 3],
    /// After the last question.
    pub closing: &'static str,
    /// When the time is up.
    pub time_up: &'static str,
    /// When the respondent leaves.
    pub goodbye: &'static str,
    /// Questions for a project with no interview guide.
    pub default_questions: [&'static str; 4],
}

const EN: Phrases = Phrases {
    greeting: "Hello, and thank you for taking part! This interview takes about {minutes} minutes. There are no right or wrong answers: we want to learn from your experience.",
    about: "We would like to talk about: {topics}",
    first_question: "Let's begin.",
    follow_ups: [
        "Could you tell me more about that?",
        "Can you think of a specific time when that happened? What happened then?",
        "Why is that important to you?",
    ],
    closing: "That was my last question. Thank you very much for your time and for sharing your experience!",
    time_up: "We have reached the end of our time. Thank you very much for your answers!",
    goodbye: "Thank you for your time! Your answers have been saved.",
    default_questions: [
        "To start, could you tell me a little about yourself and what you do?",
        "Tell me about the last time you dealt with this topic. What happened?",
        "What was the most difficult or frustrating part of it?",
        "If you could change one thing about it, what would it be, and why?",
    ],
};

const DE: Phrases = Phrases {
    greeting: "Hallo und vielen Dank, dass Sie mitmachen! Dieses Interview dauert etwa {minutes} Minuten. Es gibt keine richtigen oder falschen Antworten: Wir möchten aus Ihren Erfahrungen lernen.",
    about: "Wir möchten über Folgendes sprechen: {topics}",
    first_question: "Fangen wir an.",
    follow_ups: [
        "Könnten Sie mir mehr darüber erzählen?",
        "Fällt Ihnen eine konkrete Situation ein, in der das passiert ist? Was ist da geschehen?",
        "Warum ist Ihnen das wichtig?",
    ],
    closing: "Das war meine letzte Frage. Vielen Dank für Ihre Zeit und dafür, dass Sie Ihre Erfahrungen geteilt haben!",
    time_up: "Unsere Zeit ist um. Vielen Dank für Ihre Antworten!",
    goodbye: "Vielen Dank für Ihre Zeit! Ihre Antworten wurden gespeichert.",
    default_questions: [
        "Zum Einstieg: Könnten Sie kurz etwas über sich und Ihre Tätigkeit erzählen?",
        "Erzählen Sie mir vom letzten Mal, als Sie mit diesem Thema zu tun hatten. Was ist passiert?",
        "Was war dabei am schwierigsten oder ärgerlichsten?",
        "Wenn Sie eine Sache daran ändern könnten, welche wäre das und warum?",
    ],
};

const FR: Phrases = Phrases {
    greeting: "Bonjour et merci de votre participation ! Cet entretien dure environ {minutes} minutes. Il n'y a pas de bonnes ou de mauvaises réponses : nous souhaitons apprendre de votre expérience.",
    about: "Nous aimerions parler de : {topics}",
    first_question: "Commençons.",
    follow_ups: [
        "Pourriez-vous m'en dire plus ?",
        "Pouvez-vous penser à un moment précis où cela s'est produit ? Que s'est-il passé ?",
        "Pourquoi est-ce important pour vous ?",
    ],
    closing: "C'était ma dernière question. Merci beaucoup pour votre temps et pour avoir partagé votre expérience !",
    time_up: "Nous arrivons à la fin du temps prévu. Merci beaucoup pour vos réponses !",
    goodbye: "Merci pour votre temps ! Vos réponses ont été enregistrées.",
    default_questions: [
        "Pour commencer, pourriez-vous vous présenter brièvement et me dire ce que vous faites ?",
        "Racontez-moi la dernière fois que vous avez été confronté à ce sujet. Que s'est-il passé ?",
        "Qu'est-ce qui a été le plus difficile ou le plus frustrant ?",
        "Si vous pouviez changer une chose, laquelle serait-ce, et pourquoi ?",
    ],
};

const ES: Phrases = Phrases {
    greeting: "¡Hola y gracias por participar! Esta entrevista dura unos {minutes} minutos. No hay respuestas correctas ni incorrectas: queremos aprender de su experiencia.",
    about: "Nos gustaría hablar de: {topics}",
    first_question: "Empecemos.",
    follow_ups: [
        "¿Podría contarme más sobre eso?",
        "¿Recuerda alguna ocasión concreta en la que eso ocurriera? ¿Qué pasó?",
        "¿Por qué es eso importante para usted?",
    ],
    closing: "Esa fue mi última pregunta. ¡Muchas gracias por su tiempo y por compartir su experiencia!",
    time_up: "Hemos llegado al final del tiempo. ¡Muchas gracias por sus respuestas!",
    goodbye: "¡Gracias por su tiempo! Sus respuestas se han guardado.",
    default_questions: [
        "Para empezar, ¿podría contarme un poco sobre usted y a qué se dedica?",
        "Cuénteme la última vez que tuvo que ver con este tema. ¿Qué pasó?",
        "¿Qué fue lo más difícil o frustrante?",
        "Si pudiera cambiar una cosa, ¿cuál sería y por qué?",
    ],
};

const RU: Phrases = Phrases {
    greeting: "Здравствуйте и спасибо за участие! Интервью займёт около {minutes} минут. Здесь нет правильных или неправильных ответов: мы хотим узнать о вашем опыте.",
    about: "Мы хотели бы поговорить о следующем: {topics}",
    first_question: "Давайте начнём.",
    follow_ups: [
        "Не могли бы вы рассказать об этом подробнее?",
        "Можете вспомнить конкретный случай, когда это произошло? Что тогда случилось?",
        "Почему это для вас важно?",
    ],
    closing: "Это был мой последний вопрос. Большое спасибо за ваше время и за то, что поделились своим опытом!",
    time_up: "Наше время подошло к концу. Большое спасибо за ваши ответы!",
    goodbye: "Спасибо за ваше время! Ваши ответы сохранены.",
    default_questions: [
        "Для начала расскажите, пожалуйста, немного о себе и о том, чем вы занимаетесь.",
        "Расскажите о последнем случае, когда вы сталкивались с этой темой. Что произошло?",
        "Что было самым сложным или неприятным?",
        "Если бы вы могли изменить одну вещь, что бы это было и почему?",
    ],
};

/// The phrases for a language tag (`de`, `de-AT`, `pt-BR`...): by its primary subtag,
/// English when there are none for it.
pub fn phrases(language: &str) -> &'static Phrases {
    match primary(language).as_str() {
        "de" => &DE,
        "fr" => &FR,
        "es" => &ES,
        "ru" => &RU,
        _ => &EN,
    }
}

/// The language's name in English, for the model's instructions.
pub fn language_name(language: &str) -> String {
    crate::engines::ai::text::language_name(&primary(language))
        .map_or_else(|| format!("the language with the tag {language}"), str::to_owned)
}

fn primary(language: &str) -> String {
    language.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_picks_its_language_and_anything_else_english() {
        assert!(phrases("de-AT").greeting.starts_with("Hallo"));
        assert!(phrases("RU").greeting.starts_with("Здравствуйте"));
        assert!(phrases("pt-BR").greeting.starts_with("Hello"));
        assert_eq!(language_name("fr-CA"), "French");
        for language in ["en", "de", "fr", "es", "ru"] {
            let phrases = phrases(language);
            assert!(phrases.greeting.contains("{minutes}"), "{language}");
            assert!(phrases.about.contains("{topics}"), "{language}");
        }
    }
}
