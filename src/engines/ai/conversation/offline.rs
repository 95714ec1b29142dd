//! The offline engine's answer: the passages that match quoted verbatim with their
//! citations, report excerpts and web results; or a template draft of research goals
//! and a guide when asked.

use super::{Answer, DraftRequest, ProjectBrief, Question, Subject, draft_request, link_text};
use crate::engines::ai::text::{Spaces, one_line};
use crate::engines::ai::{Usage, citation};

/// Shown with every offline answer.
pub const OFFLINE_NOTE: &str = "*Extractive answer: the passages that best match your question, quoted as they were \
     said. No language model was used; configure one (`INSIGHT_LLM_BASE_URL`) for written answers.*";

/// Most passages an offline answer quotes.
const OFFLINE_PASSAGES: usize = 5;
/// Longest passage an offline answer quotes whole, in characters.
const OFFLINE_QUOTE_CHARS: usize = 600;

/// The offline engine's answer: the passages quoted verbatim with their citations, then
/// report excerpts and web results; or drafts of research goals and a guide when asked.
pub fn offline_answer(question: &Question) -> Answer {
    let mut parts: Vec<String> = Vec::new();
    let mut passages = Vec::new();
    let mut web = Vec::new();
    if let (Subject::Project(project), Some(draft)) = (&question.subject, draft_request(&question.message)) {
        parts.push(offline_draft(project.as_ref(), draft));
    } else {
        parts.push(OFFLINE_NOTE.to_owned());
        if let Subject::Project(None) = question.subject {
            parts.push(
                "No project is chosen for this conversation: send `project_id` to ask about a project's interviews \
                 and reports."
                    .to_owned(),
            );
        } else if question.passages.is_empty() && question.reports.is_empty() {
            parts.push(
                "Nothing in the material matches your question. Try other words, for example the ones the \
                 respondent would use."
                    .to_owned(),
            );
        }
    }
    // The respondents' words answer; the interviewer's only when nothing else matches.
    let respondents: Vec<usize> = (0..question.passages.len())
        .filter(|&n| question.passages[n].is_respondent)
        .collect();
    let shown: Vec<usize> = if respondents.is_empty() {
        (0..question.passages.len()).collect()
    } else {
        respondents
    };
    if !shown.is_empty() {
        let mut part = "**What was said**\n".to_owned();
        for index in shown.into_iter().take(OFFLINE_PASSAGES) {
            let source = &question.passages[index];
            let speaker = one_line(&source.speaker, Spaces::Kept);
            let text = one_line(&source.text, Spaces::Kept);
            let text = if text.chars().count() > OFFLINE_QUOTE_CHARS {
                let cut: String = text.chars().take(OFFLINE_QUOTE_CHARS).collect();
                let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head).to_owned();
                format!("{cut} …")
            } else {
                text
            };
            part.push_str(&format!("\n- **{speaker}**: \"{text}\" {}", citation(source)));
            passages.push(index);
        }
        parts.push(part);
    }
    // Report excerpts that only quote what is listed above would say it twice.
    let said: Vec<String> = passages
        .iter()
        .filter_map(|&n| question.passages.get(n))
        .map(|source| one_line(&source.text, Spaces::Collapsed))
        .collect();
    let excerpts: Vec<_> = question
        .reports
        .iter()
        .filter(|excerpt| {
            let text = one_line(&excerpt.text, Spaces::Collapsed);
            !said.iter().any(|passage| text.contains(&format!("\"{passage}\"")))
        })
        .collect();
    if !excerpts.is_empty() {
        let mut part = "**From the reports**".to_owned();
        for excerpt in excerpts {
            part.push_str(&format!("\n\n*{}*\n", one_line(&excerpt.report_title, Spaces::Kept)));
            for line in excerpt.text.trim().lines() {
                part.push_str("\n> ");
                part.push_str(line);
            }
        }
        parts.push(part);
    }
    if !question.web.is_empty() {
        let mut part = "**From the web**\n".to_owned();
        for (index, result) in question.web.iter().enumerate() {
            part.push_str(&format!(
                "\n- [{}]({}): {}",
                link_text(&result.title),
                result.url,
                one_line(&result.snippet, Spaces::Kept)
            ));
            web.push(index);
        }
        parts.push(part);
    }
    Answer {
        content: parts.join("\n\n"),
        passages,
        web,
        usage: Usage::default(),
    }
}

/// Drafts of research goals and an interview guide from a template, in the project's
/// own words where it has them (its description).
fn offline_draft(project: Option<&ProjectBrief>, draft: DraftRequest) -> String {
    let description = project
        .map(|p| one_line(&p.description, Spaces::Kept))
        .unwrap_or_default();
    let (topic, source) = if description.is_empty() {
        (
            "the subject of this study".to_owned(),
            "; give the project a description to have it filled in".to_owned(),
        )
    } else {
        (description, ", filled in with the project's description".to_owned())
    };
    let mut out =
        format!("*A starting draft from a template{source}; no language model was used. Edit it to fit the study.*\n");
    if let Some(project) = project {
        let goals = project.research_goals.trim();
        if !goals.is_empty() && draft.goals {
            out.push_str(&format!(
                "\nThe project's research goals so far: {}\n",
                one_line(goals, Spaces::Kept)
            ));
        }
    }
    if draft.goals || !draft.guide {
        out.push_str(&format!(
            "\n## Research goals\n\n\
             1. Understand who deals with {topic}: their role, their context, and what they are trying to get done.\n\
             2. Learn how they handle it today: the steps, tools and workarounds, and what each costs them.\n\
             3. Find the moments that hurt most, how often they happen, and what they lead to.\n\
             4. Learn what a better way would have to do for them, and how they would judge it.\n\
             5. Understand how they decide to adopt or pay for a solution, and who else is involved.\n"
        ));
    }
    if draft.guide {
        out.push_str(&format!(
            "\n## Interview guide\n\n\
             **Warm-up (5 min)**\n\
             1. Tell me a little about your role and what a typical week looks like.\n\n\
             **Context (10 min)**\n\
             2. Think of the last time you dealt with {topic}. Walk me through what happened.\n\
             3. Who else was involved, and what did each of you do?\n\n\
             **Today's way (15 min)**\n\
             4. How do you handle it today, step by step? What tools do you use?\n\
             5. What do you do when that does not work? Can you show me or describe an example?\n\n\
             **Pains (10 min)**\n\
             6. What is the hardest or most annoying part? Tell me about the last time it happened.\n\
             7. What did it cost you (time, money, stress)?\n\n\
             **Ideal (5 min)**\n\
             8. If you could change one thing about how this works, what would it be and why?\n\n\
             **Wrap-up (5 min)**\n\
             9. Is there anything I should have asked but did not?\n\n\
             *Probes for any answer:* \"Can you tell me more about that?\", \"Why was that important?\", \"What \
             happened next?\", \"Can you give me a recent example?\"\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{question, source};
    use super::*;

    #[test]
    fn offline_answer_quotes_passages_verbatim_with_citations() {
        let q = question(vec![
            source(3, Some(62_000), "Anna", true, "The price is too high for us."),
            source(4, Some(70_000), "Interviewer", false, "Why is that?"),
        ]);
        let answer = offline_answer(&q);
        assert!(
            answer
                .content
                .contains("\"The price is too high for us.\" [Interview Anna, 01:02]")
        );
        assert!(answer.content.contains("No language model was used"));
        assert_eq!(answer.passages, vec![0], "the respondent answers, not the interviewer");
        assert!(!answer.content.contains("Why is that?"));
        assert!(!answer.content.contains("\n\n\n"), "{}", answer.content);
        let checked = crate::engines::ai::quotes::check_quotes(&answer.content, &q.passages);
        assert_eq!(checked.removed, 0, "{}", answer.content);
        // With only the interviewer's words matching, those are shown.
        let only = question(vec![source(
            4,
            Some(70_000),
            "Interviewer",
            false,
            "Why is the price high?",
        )]);
        assert_eq!(offline_answer(&only).passages, vec![0]);
    }

    #[test]
    fn report_excerpts_that_repeat_a_listed_passage_are_left_out() {
        let mut q = question(vec![source(
            3,
            Some(62_000),
            "Anna",
            true,
            "The price is too high for us.",
        )]);
        let excerpt = |text: &str| crate::engines::ai::conversation::ReportExcerpt {
            report_title: "Pricing".into(),
            text: text.into(),
        };
        q.reports = vec![
            excerpt("> \"The price is too high for us.\" — Anna [Interview Anna, 01:02]"),
            excerpt("Most respondents find the plans expensive."),
        ];
        let answer = offline_answer(&q);
        assert_eq!(
            answer.content.matches("The price is too high for us.").count(),
            1,
            "{}",
            answer.content
        );
        assert!(answer.content.contains("**From the reports**"), "{}", answer.content);
        assert!(answer.content.contains("Most respondents find the plans expensive."));
        q.reports.truncate(1);
        assert!(!offline_answer(&q).content.contains("From the reports"));
    }

    #[test]
    fn offline_answer_says_when_nothing_matches() {
        let answer = offline_answer(&question(Vec::new()));
        assert!(answer.content.contains("Nothing in the material matches"));
        assert!(answer.passages.is_empty());
    }

    #[test]
    fn drafts_are_recognised_and_written() {
        assert_eq!(
            draft_request("Draft research goals and an interview guide please"),
            Some(DraftRequest {
                goals: true,
                guide: true
            })
        );
        assert_eq!(draft_request("What did people say about onboarding?"), None);
        let mut q = question(Vec::new());
        q.message = "Draft an interview guide".into();
        q.subject = Subject::Project(Some(ProjectBrief {
            name: "Checkout".into(),
            description: "paying for groceries online".into(),
            ..ProjectBrief::default()
        }));
        let answer = offline_answer(&q);
        assert!(answer.content.contains("## Interview guide"));
        assert!(answer.content.contains("paying for groceries online"));
        assert!(!answer.content.contains("## Research goals"));
    }
}
