//! JSON transcript exports: AssemblyAI, Deepgram, OpenAI `verbose_json`, and our own shape.
//!
//! - AssemblyAI (`GET /v2/transcript/{id}`): `utterances` with `speaker` ("A"), `start`/`end` in
//!   milliseconds and `text`; `language_code` ("en_us"). Without speaker labels `utterances` is
//!   null and the whole `text` becomes one utterance.
//! - Deepgram (`POST /v1/listen`): `results.utterances` with `speaker` (0), `start`/`end` in
//!   seconds and `transcript`; without `utterances=true`, the paragraphs or the transcript of
//!   `results.channels[0].alternatives[0]`. Language from `results.channels[0].detected_language`.
//! - OpenAI `/audio/transcriptions` with `response_format=verbose_json`: `segments` with
//!   `start`/`end` in seconds, `text` and (diarized models) `speaker`; `language` as a name.
//! - Ours (the API's record output): `utterances` with `speaker` (nullable), `start_ms`/`end_ms`
//!   (nullable) and `text`; optional `language`.

use serde_json::{Map, Value};

use super::{IngestError, ParsedUtterance, Transcript};

const ACCEPTED: &str = "We read AssemblyAI transcripts (with \"utterances\"), Deepgram responses (with \"results\"), OpenAI transcription answers in verbose_json (with \"segments\") and Insight's own export ({\"utterances\": [{\"speaker\", \"start_ms\", \"end_ms\", \"text\"}]}).";

/// The longest time we accept, in seconds (a year); anything beyond is a broken file.
const MAX_SECONDS: f64 = 366.0 * 24.0 * 3600.0;

/// A JSON transcript export of any of the shapes above.
pub fn parse(bytes: &[u8]) -> Result<Transcript, IngestError> {
    let root = parse_object(bytes)?;
    if let Some(results) = root.get("results").and_then(Value::as_object) {
        return deepgram(&root, results);
    }
    if root.get("segments").is_some_and(Value::is_array) {
        return openai_verbose(&root);
    }
    if let Some(utterances) = root.get("utterances") {
        if let Some(utterances) = utterances.as_array() {
            if is_own_shape(&root, utterances) {
                return own(&root, utterances);
            }
            return assemblyai(&root, Some(utterances));
        }
        if utterances.is_null() && root.get("text").is_some() {
            return assemblyai(&root, None);
        }
    }
    if root.contains_key("language_code") && root.get("text").is_some_and(Value::is_string) {
        return assemblyai(&root, None);
    }
    Err(IngestError::Unsupported(format!(
        "The JSON file is not a transcript export we know. {ACCEPTED}"
    )))
}

/// The answer of OpenAI's `/audio/transcriptions` with `response_format=verbose_json`.
pub fn parse_openai_verbose(bytes: &[u8]) -> Result<Transcript, IngestError> {
    let root = parse_object(bytes)?;
    if !root.get("segments").is_some_and(Value::is_array) {
        return Err(IngestError::Invalid(
            "The OpenAI transcription has no \"segments\" list. Expected the answer of /audio/transcriptions with response_format=verbose_json."
                .to_owned(),
        ));
    }
    openai_verbose(&root)
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, IngestError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(IngestError::Invalid(
            "The JSON file is empty. Expected a transcript export.".to_owned(),
        ));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|error| {
        let reason = error.to_string();
        // serde_json appends " at line L column C"; we say where ourselves.
        let reason = reason.split(" at line ").next().unwrap_or(&reason).to_owned();
        IngestError::Invalid(format!(
            "The file is not valid JSON: {reason} at line {}, column {}.",
            error.line(),
            error.column()
        ))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(IngestError::Unsupported(format!(
            "The JSON file holds a {} where a transcript export holds an object. {ACCEPTED}",
            type_name(&value)
        ))),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true/false value",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// Ours has `start_ms`/`end_ms` (or no times at all); AssemblyAI always has `start`/`end`.
fn is_own_shape(root: &Map<String, Value>, utterances: &[Value]) -> bool {
    let has = |key: &str| utterances.iter().any(|u| u.get(key).is_some());
    if has("start_ms") || has("end_ms") {
        return true;
    }
    if has("start") || has("end") || root.contains_key("language_code") {
        return false;
    }
    true
}

/// The fields of one utterance-like item, checked to be an object.
fn item<'a>(value: &'a Value, what: &str, index: usize) -> Result<&'a Map<String, Value>, IngestError> {
    value.as_object().ok_or_else(|| {
        IngestError::Invalid(format!(
            "{what} {} is a {}, not an object with text and times.",
            index + 1,
            type_name(value)
        ))
    })
}

/// A text field: a string (trimmed, line breaks as `\n`) or null/absent.
fn text_field(fields: &Map<String, Value>, key: &str, what: &str, index: usize) -> Result<Option<String>, IngestError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => {
            // No database stores a NUL character in text (PostgreSQL refuses it).
            let text = text.replace("\r\n", "\n").replace('\r', "\n").replace('\0', "");
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_owned()))
        }
        Some(other) => Err(IngestError::Invalid(format!(
            "{what} {} has a {} as \"{key}\" where text was expected.",
            index + 1,
            type_name(other)
        ))),
    }
}

/// A time field in the given unit (1000 for seconds, 1 for milliseconds), as milliseconds.
fn time_field(
    fields: &Map<String, Value>,
    key: &str,
    ms_per_unit: f64,
    what: &str,
    index: usize,
) -> Result<Option<u64>, IngestError> {
    let value = match fields.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let unit = if ms_per_unit == 1.0 { "milliseconds" } else { "seconds" };
    let number = value.as_f64().ok_or_else(|| {
        IngestError::Invalid(format!(
            "{what} {} has a {} as \"{key}\" where a time in {unit} was expected.",
            index + 1,
            type_name(value)
        ))
    })?;
    let seconds = number * ms_per_unit / 1000.0;
    if !seconds.is_finite() || !(0.0..=MAX_SECONDS).contains(&seconds) {
        return Err(IngestError::Invalid(format!(
            "{what} {} has \"{key}\": {value}, which is not a time in {unit} from the start of a recording.",
            index + 1
        )));
    }
    // In range: at most about 3.2e10 ms, exact in f64 and u64.
    Ok(Some((number * ms_per_unit).round() as u64))
}

fn utterance(
    speaker: Option<String>,
    start_ms: Option<u64>,
    end_ms: Option<u64>,
    text: Option<String>,
    what: &str,
    index: usize,
) -> Result<Option<ParsedUtterance>, IngestError> {
    if let (Some(start), Some(end)) = (start_ms, end_ms)
        && end < start
    {
        return Err(IngestError::Invalid(format!(
            "{what} {} ends ({}) before it starts ({}).",
            index + 1,
            format_ms(end),
            format_ms(start)
        )));
    }
    Ok(text.map(|text| ParsedUtterance {
        speaker,
        start_ms,
        end_ms,
        text,
    }))
}

fn format_ms(ms: u64) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

fn finish(utterances: Vec<ParsedUtterance>, language: Option<String>, source: &str) -> Result<Transcript, IngestError> {
    if utterances.is_empty() {
        return Err(IngestError::Invalid(format!(
            "The {source} has no utterances with text."
        )));
    }
    Ok(Transcript { utterances, language })
}

/// A speaker label as the services give it: a name, a letter or a number.
fn speaker_label(value: Option<&Value>, prefix: &str) -> Option<String> {
    match value? {
        Value::String(name) => {
            let name = name.replace('\0', "");
            let name = name.trim();
            (!name.is_empty()).then(|| {
                if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}{name}")
                }
            })
        }
        Value::Number(n) => Some(format!("{prefix}{n}")),
        _ => None,
    }
}

fn own(root: &Map<String, Value>, items: &[Value]) -> Result<Transcript, IngestError> {
    const WHAT: &str = "Utterance";
    let mut utterances = Vec::new();
    for (index, value) in items.iter().enumerate() {
        let fields = item(value, WHAT, index)?;
        let speaker = match fields.get("speaker") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.trim().to_owned()).filter(|name| !name.is_empty()),
            Some(other) => {
                return Err(IngestError::Invalid(format!(
                    "{WHAT} {} has a {} as \"speaker\" where a name or null was expected.",
                    index + 1,
                    type_name(other)
                )));
            }
        };
        let start = time_field(fields, "start_ms", 1.0, WHAT, index)?;
        let end = time_field(fields, "end_ms", 1.0, WHAT, index)?;
        let text = text_field(fields, "text", WHAT, index)?;
        utterances.extend(utterance(speaker, start, end, text, WHAT, index)?);
    }
    finish(
        utterances,
        root.get("language").and_then(Value::as_str).and_then(language_tag),
        "transcript",
    )
}

fn assemblyai(root: &Map<String, Value>, items: Option<&Vec<Value>>) -> Result<Transcript, IngestError> {
    const WHAT: &str = "AssemblyAI utterance";
    if let Some(status) = root.get("status").and_then(Value::as_str)
        && status != "completed"
    {
        return Err(IngestError::Invalid(format!(
            "The AssemblyAI transcript has status \"{status}\", not \"completed\": export it again once it has finished."
        )));
    }
    let language = root.get("language_code").and_then(Value::as_str).and_then(language_tag);
    let mut utterances = Vec::new();
    match items {
        Some(items) => {
            for (index, value) in items.iter().enumerate() {
                let fields = item(value, WHAT, index)?;
                let speaker = speaker_label(fields.get("speaker"), "Speaker ");
                let start = time_field(fields, "start", 1.0, WHAT, index)?;
                let end = time_field(fields, "end", 1.0, WHAT, index)?;
                let text = text_field(fields, "text", WHAT, index)?;
                utterances.extend(utterance(speaker, start, end, text, WHAT, index)?);
            }
        }
        None => {
            // No speaker labels: the whole text, timed by its first and last word.
            let text = text_field(root, "text", "The AssemblyAI transcript", 0)?;
            let words = root.get("words").and_then(Value::as_array);
            let word_time = |word: Option<&Value>, key: &str| -> Result<Option<u64>, IngestError> {
                match word.and_then(Value::as_object) {
                    Some(fields) => time_field(fields, key, 1.0, "AssemblyAI word", 0),
                    None => Ok(None),
                }
            };
            let start = word_time(words.and_then(|w| w.first()), "start")?;
            let end = word_time(words.and_then(|w| w.last()), "end")?;
            utterances.extend(utterance(None, start, end, text, WHAT, 0)?);
        }
    }
    finish(utterances, language, "AssemblyAI transcript")
}

fn deepgram(root: &Map<String, Value>, results: &Map<String, Value>) -> Result<Transcript, IngestError> {
    const WHAT: &str = "Deepgram utterance";
    let channels = results.get("channels").and_then(Value::as_array);
    let first_channel = channels
        .and_then(|channels| channels.first())
        .and_then(Value::as_object);
    let language = first_channel
        .and_then(|channel| channel.get("detected_language"))
        .and_then(Value::as_str)
        .and_then(language_tag);
    let multichannel = channels.is_some_and(|channels| channels.len() > 1)
        || root
            .get("metadata")
            .and_then(|m| m.get("channels"))
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1);

    let mut utterances = Vec::new();
    if let Some(items) = results
        .get("utterances")
        .and_then(Value::as_array)
        .filter(|items| !items.is_empty())
    {
        for (index, value) in items.iter().enumerate() {
            let fields = item(value, WHAT, index)?;
            let speaker = speaker_label(fields.get("speaker"), "Speaker ").or_else(|| {
                multichannel
                    .then(|| speaker_label(fields.get("channel"), "Channel "))
                    .flatten()
            });
            let start = time_field(fields, "start", 1000.0, WHAT, index)?;
            let end = time_field(fields, "end", 1000.0, WHAT, index)?;
            let text = text_field(fields, "transcript", WHAT, index)?;
            utterances.extend(utterance(speaker, start, end, text, WHAT, index)?);
        }
        return finish(utterances, language, "Deepgram response");
    }

    // Without `utterances=true`: the first alternative of each channel, by paragraph if
    // `paragraphs=true` (or `smart_format`) gave paragraphs, else as a whole.
    for (channel_index, channel) in channels.map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        let Some(alternative) = channel
            .get("alternatives")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        else {
            continue;
        };
        let Some(alternative) = alternative.as_object() else {
            continue;
        };
        let channel_speaker = multichannel.then(|| format!("Channel {channel_index}"));
        let paragraphs = alternative
            .get("paragraphs")
            .and_then(|p| p.get("paragraphs"))
            .and_then(Value::as_array)
            .filter(|p| !p.is_empty());
        if let Some(paragraphs) = paragraphs {
            const PARAGRAPH: &str = "Deepgram paragraph";
            for (index, value) in paragraphs.iter().enumerate() {
                let fields = item(value, PARAGRAPH, index)?;
                let mut sentences = Vec::new();
                for sentence in fields
                    .get("sentences")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    if let Some(text) = sentence.get("text").and_then(Value::as_str).map(str::trim)
                        && !text.is_empty()
                    {
                        sentences.push(text);
                    }
                }
                let text = Some(sentences.join(" ")).filter(|text| !text.is_empty());
                let speaker = speaker_label(fields.get("speaker"), "Speaker ").or_else(|| channel_speaker.clone());
                let start = time_field(fields, "start", 1000.0, PARAGRAPH, index)?;
                let end = time_field(fields, "end", 1000.0, PARAGRAPH, index)?;
                utterances.extend(utterance(speaker, start, end, text, PARAGRAPH, index)?);
            }
        } else {
            const ALTERNATIVE: &str = "Deepgram channel";
            let text = text_field(alternative, "transcript", ALTERNATIVE, channel_index)?;
            let words = alternative.get("words").and_then(Value::as_array);
            let word_time = |word: Option<&Value>, key: &str| -> Result<Option<u64>, IngestError> {
                match word.and_then(Value::as_object) {
                    Some(fields) => time_field(fields, key, 1000.0, "Deepgram word", 0),
                    None => Ok(None),
                }
            };
            let start = word_time(words.and_then(|w| w.first()), "start")?;
            let end = word_time(words.and_then(|w| w.last()), "end")?;
            utterances.extend(utterance(
                channel_speaker,
                start,
                end,
                text,
                ALTERNATIVE,
                channel_index,
            )?);
        }
    }
    finish(utterances, language, "Deepgram response")
}

fn openai_verbose(root: &Map<String, Value>) -> Result<Transcript, IngestError> {
    const WHAT: &str = "Segment";
    let segments = root
        .get("segments")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut utterances = Vec::new();
    for (index, value) in segments.iter().enumerate() {
        let fields = item(value, WHAT, index)?;
        let speaker = speaker_label(fields.get("speaker"), "");
        let start = time_field(fields, "start", 1000.0, WHAT, index)?;
        let end = time_field(fields, "end", 1000.0, WHAT, index)?;
        let text = text_field(fields, "text", WHAT, index)?;
        utterances.extend(utterance(speaker, start, end, text, WHAT, index)?);
    }
    let language = root
        .get("language")
        .and_then(Value::as_str)
        .and_then(language_from_name);
    finish(utterances, language, "OpenAI transcription")
}

/// A language as a BCP 47 tag: `en`, `en_us` and `EN-us` become `en` / `en-US`; anything that
/// does not look like a tag is dropped.
fn language_tag(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > 35 || !raw.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    let mut parts = raw.split(['-', '_']);
    let primary = parts.next()?.to_ascii_lowercase();
    if !(2..=3).contains(&primary.len()) || !primary.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut tag = primary;
    for part in parts {
        if part.is_empty() || part.len() > 8 {
            return None;
        }
        tag.push('-');
        match part.len() {
            2 if part.chars().all(|c| c.is_ascii_alphabetic()) => tag.push_str(&part.to_ascii_uppercase()),
            4 if part.chars().all(|c| c.is_ascii_alphabetic()) => {
                let lower = part.to_ascii_lowercase();
                let mut chars = lower.chars();
                tag.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                tag.extend(chars);
            }
            _ => tag.push_str(&part.to_ascii_lowercase()),
        }
    }
    Some(tag)
}

/// Whisper names languages in English ("english"); newer models may give codes.
fn language_from_name(raw: &str) -> Option<String> {
    const NAMES: &[(&str, &str)] = &[
        ("afrikaans", "af"),
        ("arabic", "ar"),
        ("bulgarian", "bg"),
        ("catalan", "ca"),
        ("chinese", "zh"),
        ("croatian", "hr"),
        ("czech", "cs"),
        ("danish", "da"),
        ("dutch", "nl"),
        ("english", "en"),
        ("estonian", "et"),
        ("finnish", "fi"),
        ("french", "fr"),
        ("german", "de"),
        ("greek", "el"),
        ("hebrew", "he"),
        ("hindi", "hi"),
        ("hungarian", "hu"),
        ("icelandic", "is"),
        ("indonesian", "id"),
        ("italian", "it"),
        ("japanese", "ja"),
        ("korean", "ko"),
        ("latvian", "lv"),
        ("lithuanian", "lt"),
        ("malay", "ms"),
        ("norwegian", "no"),
        ("persian", "fa"),
        ("polish", "pl"),
        ("portuguese", "pt"),
        ("romanian", "ro"),
        ("russian", "ru"),
        ("serbian", "sr"),
        ("slovak", "sk"),
        ("slovenian", "sl"),
        ("spanish", "es"),
        ("swahili", "sw"),
        ("swedish", "sv"),
        ("tagalog", "tl"),
        ("thai", "th"),
        ("turkish", "tr"),
        ("ukrainian", "uk"),
        ("urdu", "ur"),
        ("vietnamese", "vi"),
        ("welsh", "cy"),
    ];
    let lower = raw.trim().to_ascii_lowercase();
    if let Some((_, code)) = NAMES.iter().find(|(name, _)| *name == lower) {
        return Some((*code).to_owned());
    }
    if lower.len() <= 3 || lower.contains(['-', '_']) {
        language_tag(raw)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name)).as_slice()
        };
    }

    fn u(speaker: Option<&str>, start_ms: Option<u64>, end_ms: Option<u64>, text: &str) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms,
            end_ms,
            text: text.to_owned(),
        }
    }

    /// The dialogue of the fixtures, with the given speaker names for A and B.
    fn dialogue(a: &str, b: &str) -> Vec<ParsedUtterance> {
        vec![
            u(
                Some(a),
                Some(240),
                Some(3520),
                "Thanks for joining. How do you plan a release today?",
            ),
            u(
                Some(b),
                Some(4100),
                Some(9860),
                "Mostly in spreadsheets. We export tickets every Friday.",
            ),
            u(Some(a), Some(10300), Some(11900), "And then?"),
            u(
                Some(b),
                Some(12420),
                Some(17050),
                "Then we argue about priorities,\nusually for an hour.",
            ),
        ]
    }

    fn invalid(result: Result<Transcript, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    fn unsupported(result: Result<Transcript, IngestError>) -> String {
        match result {
            Err(IngestError::Unsupported(message)) => message,
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }

    #[test]
    fn assemblyai_with_speaker_labels() {
        let transcript = parse(fixture!("json_assemblyai.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: dialogue("Speaker A", "Speaker B"),
                language: Some("en-US".to_owned())
            }
        );
    }

    #[test]
    fn assemblyai_without_speaker_labels_is_one_utterance_timed_by_its_words() {
        let transcript = parse(fixture!("json_assemblyai_no_speakers.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: vec![u(
                    None,
                    Some(500),
                    Some(3180),
                    "Wir exportieren jeden Freitag die Tickets."
                )],
                language: Some("de".to_owned()),
            }
        );
    }

    #[test]
    fn nul_characters_are_dropped_from_text_and_speakers() {
        let transcript = parse(
            br#"{"status": "completed", "language_code": "en", "utterances": [{"speaker": "A\u0000", "start": 0, "end": 900, "text": "Hel\u0000lo"}]}"#,
        )
        .unwrap();
        assert_eq!(transcript.utterances[0].text, "Hello");
        assert_eq!(transcript.utterances[0].speaker.as_deref(), Some("Speaker A"));
    }

    #[test]
    fn assemblyai_that_has_not_finished() {
        let message = invalid(parse(
            br#"{"id": "x", "status": "processing", "text": null, "utterances": null, "language_code": "en_us"}"#,
        ));
        assert!(message.contains("\"processing\""), "{message}");
        let message = invalid(parse(
            br#"{"id": "x", "status": "error", "error": "Download failed", "utterances": null, "text": null}"#,
        ));
        assert!(message.contains("\"error\""), "{message}");
    }

    #[test]
    fn deepgram_utterances() {
        let transcript = parse(fixture!("json_deepgram.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: dialogue("Speaker 0", "Speaker 1"),
                language: Some("en".to_owned())
            }
        );
    }

    #[test]
    fn deepgram_paragraphs_without_utterances() {
        let transcript = parse(fixture!("json_deepgram_paragraphs.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: dialogue("Speaker 0", "Speaker 1")[..2].to_vec(),
                language: None
            }
        );
    }

    #[test]
    fn deepgram_plain_transcript_and_multichannel() {
        let plain = br#"{"metadata": {"channels": 1}, "results": {"channels": [{"alternatives": [{"transcript": "Hello there.", "words": [{"word": "hello", "start": 0.5, "end": 0.9}, {"word": "there", "start": 1.0, "end": 1.25}]}]}]}}"#;
        assert_eq!(
            parse(plain).unwrap(),
            Transcript {
                utterances: vec![u(None, Some(500), Some(1250), "Hello there.")],
                language: None
            }
        );
        let stereo = br#"{"metadata": {"channels": 2}, "results": {"channels": [
            {"alternatives": [{"transcript": "Left side.", "words": []}]},
            {"alternatives": [{"transcript": "Right side.", "words": []}]}],
            "utterances": [{"start": 0.1, "end": 1.0, "channel": 0, "transcript": "Left side."},
                           {"start": 1.2, "end": 2.0, "channel": 1, "transcript": "Right side."}]}}"#;
        assert_eq!(
            parse(stereo).unwrap().utterances,
            vec![
                u(Some("Channel 0"), Some(100), Some(1000), "Left side."),
                u(Some("Channel 1"), Some(1200), Some(2000), "Right side.")
            ]
        );
        assert_eq!(
            invalid(parse(br#"{"metadata": {}, "results": {"channels": []}}"#)),
            "The Deepgram response has no utterances with text."
        );
    }

    #[test]
    fn own_shape_with_null_speaker_and_times() {
        let transcript = parse(fixture!("json_insight_own.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: vec![
                    u(
                        Some("Interviewer"),
                        Some(0),
                        Some(3520),
                        "Thanks for joining. How do you plan a release today?"
                    ),
                    u(
                        Some("Anna"),
                        Some(4100),
                        Some(9860),
                        "Mostly in spreadsheets. We export tickets every Friday."
                    ),
                    u(None, None, None, "(Both laugh.)"),
                    u(
                        Some("Anna"),
                        Some(12420),
                        None,
                        "Then we argue about priorities,\nusually for an hour."
                    ),
                ],
                language: Some("en".to_owned()),
            }
        );
        // No times at all, no language, blank entries skipped.
        let bare = br#"{"utterances": [{"speaker": "Anna", "text": "  Hi.\r\nBye.  "}, {"speaker": " ", "text": "Hm."}, {"speaker": "Ben", "text": "   "}]}"#;
        assert_eq!(
            parse(bare).unwrap(),
            Transcript {
                utterances: vec![u(Some("Anna"), None, None, "Hi.\nBye."), u(None, None, None, "Hm.")],
                language: None
            }
        );
    }

    #[test]
    fn openai_verbose_json() {
        let expected = Transcript {
            utterances: dialogue("", "")
                .into_iter()
                .map(|utterance| ParsedUtterance {
                    speaker: None,
                    text: utterance.text.replace('\n', " "),
                    ..utterance
                })
                .collect(),
            language: Some("en".to_owned()),
        };
        assert_eq!(
            parse_openai_verbose(fixture!("json_openai_verbose.json")).unwrap(),
            expected
        );
        // The generic entry point recognises it too.
        assert_eq!(parse(fixture!("json_openai_verbose.json")).unwrap(), expected);
    }

    #[test]
    fn openai_segments_with_speakers() {
        let transcript = parse_openai_verbose(fixture!("json_openai_diarized.json")).unwrap();
        assert_eq!(
            transcript,
            Transcript {
                utterances: dialogue("A", "B")[..2].to_vec(),
                language: None
            }
        );
    }

    #[test]
    fn openai_language_names() {
        let with = |language: &str| {
            let json = format!(
                r#"{{"task": "transcribe", "language": "{language}", "duration": 1.0, "text": "Hi", "segments": [{{"id": 0, "start": 0.0, "end": 1.0, "text": "Hi"}}]}}"#
            );
            parse_openai_verbose(json.as_bytes()).unwrap().language
        };
        assert_eq!(with("english"), Some("en".to_owned()));
        assert_eq!(with("German"), Some("de".to_owned()));
        assert_eq!(with("japanese"), Some("ja".to_owned()));
        assert_eq!(with("de"), Some("de".to_owned()));
        assert_eq!(with("pt-br"), Some("pt-BR".to_owned()));
        assert_eq!(with("klingon"), None);
        assert_eq!(with(""), None);
        let message = invalid(parse_openai_verbose(br#"{"text": "Hi"}"#));
        assert!(message.contains("\"segments\""), "{message}");
    }

    #[test]
    fn language_tags() {
        assert_eq!(language_tag("en_us").as_deref(), Some("en-US"));
        assert_eq!(language_tag("EN").as_deref(), Some("en"));
        assert_eq!(language_tag("zh-hant-tw").as_deref(), Some("zh-Hant-TW"));
        assert_eq!(language_tag("es-419").as_deref(), Some("es-419"));
        assert_eq!(language_tag("english"), None);
        assert_eq!(language_tag("e"), None);
        assert_eq!(language_tag("en--us"), None);
        assert_eq!(language_tag("en us"), None);
    }

    #[test]
    fn invalid_json_says_where() {
        assert_eq!(
            invalid(parse(b"{\n  \"utterances\": [\n    {\"text\": \"hi\",}\n  ]\n}")),
            "The file is not valid JSON: trailing comma at line 3, column 19."
        );
        assert_eq!(
            invalid(parse(b"{\"utterances\": [")),
            "The file is not valid JSON: EOF while parsing a list at line 1, column 16."
        );
        assert!(invalid(parse(b"\xFF\xFE{}")).starts_with("The file is not valid JSON"));
        assert_eq!(
            invalid(parse(b"")),
            "The JSON file is empty. Expected a transcript export."
        );
        assert_eq!(
            invalid(parse(b" \n ")),
            "The JSON file is empty. Expected a transcript export."
        );
        // Nesting deeper than serde_json's limit is an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert!(invalid(parse(deep.as_bytes())).contains("recursion limit"));
    }

    #[test]
    fn utf8_bom_is_accepted() {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(fixture!("json_insight_own.json"));
        assert_eq!(parse(&bytes).unwrap().utterances.len(), 4);
    }

    #[test]
    fn unknown_shapes_list_what_we_accept() {
        for json in [
            &br#"{"title": "Interview", "entries": []}"#[..],
            b"[]",
            b"42",
            b"\"text\"",
            b"null",
            b"{}",
        ] {
            let message = unsupported(parse(json));
            assert!(
                message.contains("AssemblyAI") && message.contains("Deepgram") && message.contains("verbose_json"),
                "{message}"
            );
        }
        assert!(unsupported(parse(b"[{\"text\": \"hi\"}]")).starts_with("The JSON file holds a list"));
    }

    #[test]
    fn wrong_types_and_bad_times() {
        assert_eq!(
            invalid(parse(br#"{"utterances": [{"speaker": "A", "text": 5}]}"#)),
            "Utterance 1 has a number as \"text\" where text was expected."
        );
        assert_eq!(
            invalid(parse(br#"{"utterances": [{"text": "a"}, "b"]}"#)),
            "Utterance 2 is a string, not an object with text and times."
        );
        assert_eq!(
            invalid(parse(br#"{"utterances": [{"speaker": ["A"], "text": "a"}]}"#)),
            "Utterance 1 has a list as \"speaker\" where a name or null was expected."
        );
        assert_eq!(
            invalid(parse(br#"{"utterances": [{"text": "a", "start_ms": "0:01"}]}"#)),
            "Utterance 1 has a string as \"start_ms\" where a time in milliseconds was expected."
        );
        assert_eq!(
            invalid(parse(
                br#"{"utterances": [{"speaker": "A", "start": -5, "end": 10, "text": "a"}], "language_code": "en"}"#
            )),
            "AssemblyAI utterance 1 has \"start\": -5, which is not a time in milliseconds from the start of a recording."
        );
        assert_eq!(
            invalid(parse(
                br#"{"results": {"utterances": [{"start": 1e300, "end": 2, "transcript": "a"}]}}"#
            )),
            "Deepgram utterance 1 has \"start\": 1e+300, which is not a time in seconds from the start of a recording."
        );
        assert_eq!(
            invalid(parse(
                br#"{"utterances": [{"text": "a", "start_ms": 2000, "end_ms": 1500}]}"#
            )),
            "Utterance 1 ends (1.500 s) before it starts (2.000 s)."
        );
        assert_eq!(
            invalid(parse(br#"{"utterances": []}"#)),
            "The transcript has no utterances with text."
        );
        assert_eq!(
            invalid(parse(br#"{"segments": [{"start": 0, "end": 1, "text": " "}]}"#)),
            "The OpenAI transcription has no utterances with text."
        );
    }

    #[test]
    fn times_round_to_milliseconds() {
        let json =
            br#"{"results": {"utterances": [{"start": 0.0004, "end": 1.2345, "speaker": 2, "transcript": "a"}]}}"#;
        assert_eq!(
            parse(json).unwrap().utterances,
            vec![u(Some("Speaker 2"), Some(0), Some(1235), "a")]
        );
        let json =
            br#"{"utterances": [{"speaker": "C", "start": 10.6, "end": 20, "text": "a"}], "language_code": "fr"}"#;
        assert_eq!(
            parse(json).unwrap().utterances,
            vec![u(Some("Speaker C"), Some(11), Some(20), "a")]
        );
    }
}
