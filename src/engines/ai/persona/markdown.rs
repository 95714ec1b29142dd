//! The persona as a Markdown document: a fixed set of sections, empty ones saying so.

use super::rank::{bare, content_words};
use super::{NOTHING_HERE, UNNAMED};
use crate::domain::persona::{Persona, PersonaQuote};
use crate::engines::ai::text::{Spaces, normalize, one_line};

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

pub(super) fn section(md: &mut String, title: &str) {
    md.push_str(&format!("\n## {title}\n"));
}

pub(super) fn paragraph(md: &mut String, text: &str) {
    md.push('\n');
    md.push_str(if text.is_empty() { NOTHING_HERE } else { text });
    md.push('\n');
}

/// One item a line, on one line each; an empty list says so.
pub(super) fn list(md: &mut String, items: &[String]) {
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
pub(super) fn quote_block(text: &str, utterance_id: i64, indent: &str) -> String {
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
pub(super) fn supports(quote: &str, pain: &str) -> bool {
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
