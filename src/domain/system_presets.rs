//! The prompts and presets that ship with Insight. They are written into the database
//! at every start (insert or update by a stable id derived from the slug), so an
//! upgrade improves them in place and users' clones stay untouched.

use uuid::Uuid;

pub struct SystemPrompt {
    pub slug: &'static str,
    pub title: &'static str,
    pub category: &'static str,
    pub text: &'static str,
}

pub struct SystemPreset {
    pub slug: &'static str,
    pub title: &'static str,
    pub icon: &'static str,
    pub category: &'static str,
    pub prompts: &'static [SystemPrompt],
}

/// The stable id of a system prompt or preset.
pub fn system_id(kind: &str, slug: &str) -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, format!("insight:system:{kind}:{slug}").as_bytes())
}

macro_rules! prompt {
    ($slug:literal, $title:literal, $category:literal, $text:expr) => {
        SystemPrompt {
            slug: $slug,
            title: $title,
            category: $category,
            text: $text,
        }
    };
}

pub static SYSTEM_PRESETS: &[SystemPreset] = &[
    SystemPreset {
        slug: "general-synthesis",
        title: "General synthesis",
        icon: "sparkles",
        category: "synthesis",
        prompts: &[
            prompt!(
                "executive-summary",
                "Executive summary",
                "synthesis",
                "Write a short executive summary of what the interviews tell us. Lead with the three to five most important findings, each in one sentence, then one paragraph per finding with the evidence behind it. Say how many respondents each finding rests on, quote them verbatim, and name where respondents disagree."
            ),
            prompt!(
                "key-insights",
                "Key insights",
                "synthesis",
                "List the key insights: things the team did not know before or that change a decision. For each insight give the observation, why it matters for the research goals, the supporting quotes with their sources, and how confident we can be (how many respondents, how consistent)."
            ),
            prompt!(
                "surprises-and-open-questions",
                "Surprises and open questions",
                "synthesis",
                "Point out what was surprising or contradicted the team's assumptions, and what remains unclear. For each open question, suggest what to ask or observe in the next round of interviews."
            ),
        ],
    },
    SystemPreset {
        slug: "questions-and-answers",
        title: "Q&A by interview guide",
        icon: "message-circle-question",
        category: "synthesis",
        prompts: &[
            prompt!(
                "answers-per-question",
                "Answers per guide question",
                "qa",
                "Go through the interview guide question by question. For each question, summarise how respondents answered, group similar answers, note the range of answers, and quote the clearest answer for each group. Say plainly when a question was not covered."
            ),
            prompt!(
                "unprompted-topics",
                "Topics raised unprompted",
                "qa",
                "List topics respondents raised on their own, outside the interview guide. For each, say who raised it, in what context, and quote them."
            ),
        ],
    },
    SystemPreset {
        slug: "jobs-to-be-done",
        title: "Jobs to be done",
        icon: "target",
        category: "strategy",
        prompts: &[
            prompt!(
                "jtbd-jobs",
                "Jobs and job statements",
                "jtbd",
                "Identify the jobs respondents are trying to get done. Write each as a job statement: 'When <situation>, I want to <motivation>, so I can <expected outcome>.' Separate functional, emotional and social jobs, and support each with quotes."
            ),
            prompt!(
                "jtbd-forces",
                "Forces of progress",
                "jtbd",
                "Describe the forces acting on respondents when they switch or consider switching solutions: the push of the current situation, the pull of a new solution, the anxieties about the new one and the habits that hold them in place. Quote the moments that show each force."
            ),
            prompt!(
                "jtbd-hiring-criteria",
                "Hiring and firing criteria",
                "jtbd",
                "What makes respondents hire a product or workaround for their job, and what made them fire a previous one? List the criteria in order of importance with the evidence for each."
            ),
        ],
    },
    SystemPreset {
        slug: "persona",
        title: "Persona",
        icon: "user-round",
        category: "people",
        prompts: &[
            prompt!(
                "persona-profile",
                "Persona profile",
                "persona",
                "Describe the respondents as one or more personas: role, context, experience, and the tools they use today. Only state what respondents said about themselves; quote them for each trait."
            ),
            prompt!(
                "persona-goals-pains",
                "Goals, pains and motivations",
                "persona",
                "For each persona, list goals, pains and motivations in the respondents' own words, with the quotes that show them. Separate what they say they want from what they actually do."
            ),
            prompt!(
                "persona-behaviours",
                "Behaviours and workarounds",
                "persona",
                "Describe how respondents currently behave: their routines, the workarounds they have built, and the moments they give up. Quote the concrete stories they told."
            ),
        ],
    },
    SystemPreset {
        slug: "themes",
        title: "Themes",
        icon: "layers",
        category: "synthesis",
        prompts: &[
            prompt!(
                "thematic-analysis",
                "Thematic analysis",
                "themes",
                "Group what respondents said into themes. For each theme give a short name, a one-sentence description, how many respondents mentioned it, and two or three representative quotes. Order themes by how often and how strongly they came up."
            ),
            prompt!(
                "theme-contrasts",
                "Contrasts between respondents",
                "themes",
                "Where do respondents differ? Compare groups of respondents (by role, experience or situation) and show which themes matter to whom, with quotes from each side."
            ),
        ],
    },
    SystemPreset {
        slug: "pain-points",
        title: "Pain points",
        icon: "flame",
        category: "problems",
        prompts: &[
            prompt!(
                "pain-points-list",
                "Pain points",
                "pains",
                "List the problems and frustrations respondents described. For each pain point: what happens, when it happens, what it costs them (time, money, stress), how often it was mentioned, and verbatim quotes. Order by severity."
            ),
            prompt!(
                "pain-root-causes",
                "Root causes",
                "pains",
                "For the most severe pain points, work out the likely root causes from what respondents said, and separate causes they stated from ones we infer. Quote the evidence for each."
            ),
            prompt!(
                "current-workarounds",
                "Current workarounds",
                "pains",
                "Describe how respondents cope with their problems today: workarounds, tools, people they ask. Note what each workaround costs them and quote them."
            ),
        ],
    },
    SystemPreset {
        slug: "usability-issues",
        title: "Usability issues",
        icon: "mouse-pointer-click",
        category: "product",
        prompts: &[
            prompt!(
                "usability-findings",
                "Usability findings",
                "usability",
                "List the usability issues respondents ran into or described. For each: where in the product it happens, what the respondent expected, what actually happened, and its severity (critical, serious, minor). Quote the moment."
            ),
            prompt!(
                "usability-positives",
                "What works well",
                "usability",
                "List what respondents found easy, fast or pleasant to use, so that it is kept in future changes. Say who said so and quote them."
            ),
            prompt!(
                "usability-recommendations",
                "Recommendations",
                "usability",
                "Turn the usability findings into concrete, prioritised recommendations. Tie each recommendation to the issues and quotes it addresses."
            ),
        ],
    },
    SystemPreset {
        slug: "feature-requests",
        title: "Feature requests",
        icon: "lightbulb",
        category: "product",
        prompts: &[
            prompt!(
                "feature-requests-list",
                "Requested features",
                "features",
                "List the features and changes respondents asked for, explicitly or implicitly. For each: the request in a sentence, who asked, the underlying need (why they want it), and quotes. Merge duplicates and count them."
            ),
            prompt!(
                "feature-priorities",
                "Priorities",
                "features",
                "Rank the requested features by how strongly the underlying need came through (frequency, pain, willingness to pay or switch). Explain each rank with evidence and say what would change the ranking."
            ),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn slugs_and_ids_are_unique_and_presets_have_two_to_five_prompts() {
        let mut ids = HashSet::new();
        for preset in SYSTEM_PRESETS {
            assert!(ids.insert(system_id("preset", preset.slug)));
            assert!((2..=5).contains(&preset.prompts.len()), "{}", preset.slug);
            for prompt in preset.prompts {
                assert!(ids.insert(system_id("prompt", prompt.slug)), "{}", prompt.slug);
                assert!(prompt.text.len() > 80);
            }
        }
        assert_eq!(system_id("preset", "themes"), system_id("preset", "themes"));
    }
}
