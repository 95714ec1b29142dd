//! Timestamps as transcript formats write them, shared by the WebVTT, SubRip and plain-text
//! parsers.
//!
//! Accepted: `hh:mm:ss`, `mm:ss`, `h:mm:ss.mmm`, `mm:ss,mmm` and the unpadded forms some tools
//! write (`0:0:5.0` in a Teams `.docx` download, `0:03` in an Otter export). The first field
//! (hours, or minutes when there are only two fields) has 1 to 4 digits and no upper bound; the
//! later fields have 1 or 2 digits and are below 60. The fraction after `.` or `,` has 1 to 9
//! digits and is read as a decimal fraction of a second, so `.5` is 500 ms and digits past
//! milliseconds are dropped. Video editors' `hh:mm:ss:ff` (a frame number after the seconds) is
//! read to the second. Only ASCII digits count.
//!
//! Cue timings of WebVTT and SubRip files are read a little more strictly
//! ([`parse_cue_timing`]): the fields after the first have exactly two digits and the fraction is
//! required, so that a line cut short (`00:00:01.000 --> 00:00`) is reported, not read as 0 ms.

/// Milliseconds of a whole timestamp such as `01:02:03.450`, or `None` if `text` is not one.
/// Surrounding whitespace is not allowed: trim first.
pub fn parse(text: &str) -> Option<u64> {
    parse_with(text, false)
}

/// Start and end of a cue timing line such as `00:00:01.000 --> 00:00:04.000 align:start`:
/// the text before `-->` is the start, the first word after it the end, and whatever follows
/// (WebVTT cue settings, SubRip `X1:` coordinates) is ignored. Both times need their fraction
/// (`.000` or `,000`) and two-digit minutes and seconds. `None` if either time is not such a
/// timestamp or there is no `-->`.
pub fn parse_cue_timing(line: &str) -> Option<(u64, u64)> {
    let (start, rest) = line.split_once("-->")?;
    let start = parse_with(start.trim(), true)?;
    let end = parse_with(rest.split_whitespace().next()?, true)?;
    Some((start, end))
}

/// A line that looks like the start of a cue timing cut off by the end of the file
/// (`00:00:0`, `00:00:03,000 --`): digits first, a colon, and only characters of a timing.
pub fn is_cut_timing(line: &str) -> bool {
    let line = line.trim();
    line.starts_with(|c: char| c.is_ascii_digit())
        && line.contains(':')
        && line
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ':' | ',' | '.' | ' ' | '-' | '>'))
}

fn parse_with(text: &str, strict: bool) -> Option<u64> {
    let (clock, fraction) = match text.split_once(['.', ',']) {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None if strict => return None,
        None => (text, None),
    };
    let mut fields = clock.split(':');
    let first = number(fields.next()?, 4)?;
    let second = sexagesimal(fields.next()?, strict)?;
    let (hours, minutes, seconds) = match (fields.next(), fields.next(), fields.next()) {
        (None, _, _) => (0, first, second),
        (Some(third), None, None) => (first, second, sexagesimal(third, strict)?),
        // SMPTE `hh:mm:ss:ff` (DaVinci Resolve, Premiere): the frame number is dropped, since the
        // frame rate is not known.
        (Some(third), Some(frames), None) if !strict && fraction.is_none() => {
            sexagesimal(frames, false)?;
            (first, second, sexagesimal(third, false)?)
        }
        _ => return None,
    };
    let millis = match fraction {
        None => 0,
        Some(digits) => fraction_millis(digits)?,
    };
    Some(((hours * 60 + minutes) * 60 + seconds) * 1000 + millis)
}

/// An unsigned number of 1 to `max_digits` ASCII digits.
fn number(digits: &str, max_digits: usize) -> Option<u64> {
    if digits.is_empty() || digits.len() > max_digits || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Minutes or seconds after a colon: 1 or 2 digits (exactly 2 when strict), below 60.
fn sexagesimal(digits: &str, strict: bool) -> Option<u64> {
    if strict && digits.len() != 2 {
        return None;
    }
    number(digits, 2).filter(|value| *value < 60)
}

fn fraction_millis(digits: &str) -> Option<u64> {
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut millis = 0;
    let mut scale = 100;
    for byte in digits.bytes().take(3) {
        millis += u64::from(byte - b'0') * scale;
        scale /= 10;
    }
    Some(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_usual_forms() {
        assert_eq!(parse("00:00:01.000"), Some(1_000));
        assert_eq!(parse("01:02:03.450"), Some(3_723_450));
        assert_eq!(parse("01:02:03,450"), Some(3_723_450));
        assert_eq!(parse("1:02:03.4"), Some(3_723_400));
        assert_eq!(parse("02:03.045"), Some(123_045));
        assert_eq!(parse("00:05:12"), Some(312_000));
        assert_eq!(parse("0:03"), Some(3_000));
        assert_eq!(parse("75:30"), Some(4_530_000));
        assert_eq!(parse("0:0:9.480"), Some(9_480));
        assert_eq!(parse("0:0:5.0"), Some(5_000));
        assert_eq!(parse("00:00:01.123456"), Some(1_123));
        assert_eq!(parse("120:00:00"), Some(432_000_000));
        assert_eq!(parse("00:00:03:18"), Some(3_000));
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        for text in [
            "",
            ":",
            "1",
            "12",
            "1.5",
            "00:60",
            "00:00:60",
            "00:61:00",
            "00:00:01.",
            "00:00:01.12a",
            "a:00",
            "00::00",
            " 00:01",
            "00:01 ",
            "12345:00",
            "00:123",
            "0:00:01.1234567890",
            "１:２３",
            "-1:00",
            "+1:00",
            "00:00,",
            "1:2:3:4:5",
            "00:00:01:02.000",
            "00:00:01:60",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn recognises_cut_timings() {
        for line in ["00:00:0", "00:00:03,000 --", "00:00:03,000 -->", "1:2"] {
            assert!(is_cut_timing(line), "{line:?}");
        }
        for line in ["", "12", "10:30 am", "Hi 00:00", "a:b"] {
            assert!(!is_cut_timing(line), "{line:?}");
        }
    }

    #[test]
    fn reads_cue_timings() {
        assert_eq!(parse_cue_timing("00:00:01.000 --> 00:00:04.000"), Some((1_000, 4_000)));
        assert_eq!(
            parse_cue_timing("00:01.000 --> 00:04.500 align:start position:0%"),
            Some((1_000, 4_500))
        );
        assert_eq!(
            parse_cue_timing("00:00:01,000 --> 00:00:04,000 X1:100 X2:600 Y1:20 Y2:50"),
            Some((1_000, 4_000))
        );
        assert_eq!(parse_cue_timing("00:00:01,000-->00:00:04,000"), Some((1_000, 4_000)));
        assert_eq!(
            parse_cue_timing("1:02:03.000 --> 1:02:04.000"),
            Some((3_723_000, 3_724_000))
        );
        for line in [
            "00:00:01,000 --> ",
            "00:00:01,000 --> 00:00",
            "00:00:01.000 --> 00:00:0",
            "00:00:01 --> 00:00:02",
            "0:0:1.0 --> 0:0:2.0",
            "00:00:01:00 --> 00:00:02:00",
            "00:00:01,000 -> 00:00:02,000",
            "a --> b",
            "-->",
        ] {
            assert_eq!(parse_cue_timing(line), None, "{line:?}");
        }
    }
}
