//! `render` and `CitationIndex` on Markdown as the engines write it (`crate::engines::ai::citation`).

use super::*;

const ANNA: Uuid = Uuid::from_bytes([1; 16]);
const PRIYA: Uuid = Uuid::from_bytes([2; 16]);

fn index() -> CitationIndex {
    let anna: &[(i64, Option<i64>)] = &[
        (1, Some(10_920)),
        (2, Some(53_400)),
        (3, Some(53_900)),
        (4, Some(3_723_000)),
    ];
    let priya: &[(i64, Option<i64>)] = &[(1, None), (2, None)];
    CitationIndex::new(&[(ANNA, "Interview – Anna", anna), (PRIYA, "Priya, 00:33; B", priya)])
}

fn html(markdown: &str) -> String {
    render(markdown, &index())
}

fn link(record: Uuid, utterance: i64, text: &str) -> String {
    format!("<a class=\"citation\" href=\"/r/{record}#u{utterance}\" rel=\"noopener noreferrer\">{text}</a>")
}

#[test]
fn markdown_renders() {
    let out = html("## Findings\n\n- *one* and **two**\n- ~~three~~\n\n1. first\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n");
    let expected = "<h2>Findings</h2>\n<ul>\n<li><em>one</em> and <strong>two</strong></li>\n<li><del>three</del></li>\n</ul>\n\
        <ol>\n<li>first</li>\n</ol>\n<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>\n<tr><td>1</td><td>2</td></tr>\n\
        </tbody></table>\n";
    assert_eq!(out, expected);
    assert_eq!(
        html("[site](https://example.com/a?b=1)"),
        "<p><a href=\"https://example.com/a?b=1\" rel=\"noopener noreferrer\">site</a></p>\n"
    );
}

#[test]
fn html_scripts_and_unsafe_urls_are_neutralised() {
    // The author's HTML, inline or a block, is shown as text.
    let out =
        html("Hi <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div onclick=\"x()\">\n<b>b</b>\n</div>\n");
    let expected = "<p>Hi &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;</p>\n\
        <p>&lt;div onclick=\"x()\"&gt;\n&lt;b&gt;b&lt;/b&gt;\n&lt;/div&gt;\n</p>\n";
    assert_eq!(out, expected);
    for markdown in [
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x]: vbscript:x\n\n[x]",
    ] {
        assert_eq!(
            html(markdown),
            "<p><a rel=\"noopener noreferrer\">x</a></p>\n",
            "{markdown}"
        );
    }
    // Images are refused, whatever their address: only their alt text is shown.
    assert_eq!(html("![a pixel](https://tracker.example/p.gif)"), "<p>a pixel</p>\n");
    assert_eq!(html("![me](/api/logout \"t\")"), "<p>me</p>\n");
}

#[test]
fn the_sanitiser_stops_what_the_renderer_would_let_through() {
    let hostile = "<p onclick=\"x\" style=\"color:red\">a<script>alert(1)</script><img src=x onerror=y>\
        <a href=\"javascript:x\" class=\"citation evil\" target=\"_blank\">b</a><iframe src=\"/\"></iframe></p>";
    let expected = "<p>a<a class=\"citation\" rel=\"noopener noreferrer\">b</a></p>";
    assert_eq!(SANITIZER.clean(hostile).to_string(), expected);
}

#[test]
fn citations_link_to_the_moment() {
    let out = html("Slow \"We export the tickets from Jira every Friday\" [Interview – Anna, 00:53].");
    let quoted = "<p>Slow \"We export the tickets from Jira every Friday\" ";
    assert_eq!(
        out,
        format!("{quoted}{}.</p>\n", link(ANNA, 2, "[Interview – Anna, 00:53]"))
    );
    // Names as the quote checker compares them; a later time is the utterance before it.
    assert!(html("[interview - anna, 00:59]").contains(&link(ANNA, 3, "[interview - anna, 00:59]")));
    assert!(html("[Interview – Anna, 1:02:03]").contains(&link(ANNA, 4, "[Interview – Anna, 1:02:03]")));
    assert!(html("[Interview – Anna, 00:10–00:53]").contains(&link(ANNA, 1, "[Interview – Anna, 00:10–00:53]")));
    assert!(html("[Priya, 00:33; B, #2]").contains(&link(PRIYA, 2, "[Priya, 00:33; B, #2]")));
    // A group: each record's citation, or each of its times, is a link; the unknown stays.
    let out = html("[Interview – Anna, 00:10, 00:53; Zed, 00:01; Interview – Anna, 1:02:03]");
    let expected = format!(
        "[Interview – Anna, {}, {}; Zed, 00:01; {}]",
        link(ANNA, 1, "00:10"),
        link(ANNA, 2, "00:53"),
        link(ANNA, 4, "Interview – Anna, 1:02:03")
    );
    assert_eq!(out, format!("<p>{expected}</p>\n"));
    // Brackets left open before a citation, or around it.
    let out = html("see [1 and [also [Interview – Anna, 00:10]]");
    assert!(
        out.contains(&format!("[also {}]", link(ANNA, 1, "[Interview – Anna, 00:10]"))),
        "{out}"
    );
    let out = html("> \"In a quote\" — Anna\n> [Interview – Anna, 00:10] [Zed, 00:10]");
    assert!(
        out.contains(&format!("{} [Zed, 00:10]", link(ANNA, 1, "[Interview – Anna, 00:10]"))),
        "{out}"
    );
}

#[test]
fn what_is_not_a_known_citation_stays_text() {
    for markdown in [
        "[Zed, 00:53]",
        "[Interview – Anna, 00:09]",
        "[Interview – Anna, #9]",
        "[Priya, 00:33; B, 00:01]",
        "[quote removed: not found in the transcript]",
        "[Interview – Anna]",
        "[Interview – Anna, 0:5]",
        "`[Interview – Anna, 00:53]`",
        "```\n[Interview – Anna, 00:53]\n```",
        "[[Interview – Anna, 00:53]](https://example.com)",
    ] {
        let out = html(markdown);
        assert!(!out.contains("citation"), "{markdown}: {out}");
    }
    assert_eq!(
        render("[Interview – Anna, 00:53]", &CitationIndex::default()),
        "<p>[Interview – Anna, 00:53]</p>\n"
    );
}

#[test]
fn hostile_brackets_take_linear_time() {
    let started = std::time::Instant::now();
    let long = format!("[Interview – Anna{}]", ", 00:10".repeat(20_000));
    assert!(!html(&long).contains("citation"), "too long to be a citation");
    let nested = format!("{}{}", "[Interview – Anna, 00:10, ".repeat(20_000), "]".repeat(20_000));
    assert!(!html(&nested).contains("citation"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn every_quote_of_an_offline_report_links_to_its_utterance() {
    use crate::domain::report::ReasoningMode;
    use crate::engines::ai::{SectionBrief, Source, report::offline::write_section};
    let lines = [
        "The price is far too high for a team of our size.",
        "We pay for every seat and the price hurts us.",
        "Pricing per seat makes us share a single account.",
        "Honestly the price was why we nearly left.",
    ];
    let sources: Vec<Source> = lines
        .iter()
        .enumerate()
        .map(|(n, text)| Source {
            record_id: if n % 2 == 0 { ANNA } else { PRIYA },
            record_name: if n % 2 == 0 {
                "Interview – Anna"
            } else {
                "Priya, 00:33; B"
            }
            .to_owned(),
            utterance_id: n as i64 + 1,
            speaker: "R".to_owned(),
            is_respondent: true,
            start_ms: (n % 2 == 0).then_some(n as i64 * 61_700),
            text: (*text).to_owned(),
        })
        .collect();
    let brief = SectionBrief {
        title: "Pricing".into(),
        prompt: "What do they say about the price?".into(),
        research_goals: String::new(),
        interview_guide: String::new(),
        context: None,
        context_expand: None,
        language: Some("en".into()),
        mode: ReasoningMode::Fast,
        quoted_before: Vec::new(),
    };
    let markdown = write_section(&brief, &sources).markdown;
    let index = CitationIndex::new(&[
        (ANNA, "Interview – Anna", &[(1, Some(0)), (3, Some(123_400))]),
        (PRIYA, "Priya, 00:33; B", &[(2, None), (4, None)]),
    ]);
    let out = render(&markdown, &index);
    for source in &sources {
        let cited = crate::engines::ai::citation(source);
        assert!(
            out.contains(&link(source.record_id, source.utterance_id, &cited)),
            "{cited}\n{markdown}\n{out}"
        );
    }
}

#[test]
fn a_first_heading_that_repeats_the_title_is_left_to_the_page() {
    assert_eq!(
        without_title("# Pricing findings\n\n## What we heard\nText", "Pricing findings"),
        "\n## What we heard\nText"
    );
    assert_eq!(
        without_title("\n#  pricing Findings \nText", "Pricing findings"),
        "Text"
    );
    let other = "# Another heading\nText";
    assert_eq!(without_title(other, "Pricing findings"), other);
    let second_level = "## Pricing findings\nText";
    assert_eq!(without_title(second_level, "Pricing findings"), second_level);
    assert_eq!(without_title("", "Pricing findings"), "");
}
