//! Durations as a user writes them, everywhere one is written: on the command line
//! (`--timeout`, `certify --rule-timeout`, `serve --dialogue-idle`), in config.toml
//! (`timeout`) and in scenario files (a retry's `delay`). One reader, one wording of what is
//! wrong, one way of showing a duration back.
//!
//! The form is humantime's ("90s", "5m", "1h 30m", "500ms"); a plain number is seconds (what
//! the options took before, so scripts and files written then still read the same).

use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::time::Duration;

/// How to write one, for the errors (and kept the same as the `--help` texts say it).
pub const FORM: &str = "e.g. 30s, 2m, 500ms; plain numbers are seconds";

/// The longest duration taken: past it a deadline would overflow the clock (a panic), and
/// no wait a person means is longer.
const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);

/// A duration, zero included (a retry's delay may be none).
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let d = if let Ok(secs) = t.parse::<u64>() {
        Duration::from_secs(secs)
    } else if let Ok(secs) = t.parse::<f64>() {
        seconds(secs).ok_or_else(|| format!("'{s}' is not a duration: write {FORM}"))?
    } else {
        humantime::parse_duration(t)
            .map_err(|e| format!("'{s}' is not a duration ({e}): write {FORM}"))?
    };
    if d > LONGEST {
        return Err(format!("'{s}' is longer than a year: write at most 365d"));
    }
    Ok(d)
}

/// A duration that is more than zero: a timeout, a deadline, how long to keep something.
/// The clap value parser of every such option.
pub fn positive(s: &str) -> Result<Duration, String> {
    let d = parse(s)?;
    if d.is_zero() {
        return Err(format!(
            "'{s}' is no time at all: write more than 0 (e.g. 500ms)"
        ));
    }
    Ok(d)
}

/// A plain number of seconds with a fraction (a file's `timeout = 1.5`).
fn seconds(secs: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(secs).ok()
}

/// A duration shown back as people read it: "2 s", "500 ms", "5 min".
pub fn show(d: Duration) -> String {
    let s = d.as_secs();
    if d.subsec_nanos() != 0 {
        format!("{} ms", d.as_millis())
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// Reads a duration from a file (TOML, YAML, JSON): a string in the form above, or a plain
/// number of seconds. The file's reader puts the place (file, line) in front of the error.
struct DurationVisitor {
    zero_allowed: bool,
}

impl DurationVisitor {
    fn check<E: de::Error>(&self, written: &str, d: Duration) -> Result<Duration, E> {
        if d > LONGEST {
            return Err(E::custom(format!(
                "'{written}' is longer than a year: write at most 365d"
            )));
        }
        if d.is_zero() && !self.zero_allowed {
            return positive(written).map_err(E::custom);
        }
        Ok(d)
    }
}

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a duration ({FORM})")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        self.check(&v.to_string(), Duration::from_secs(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!("'{v}' is not a duration: write {FORM}"))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        match seconds(v) {
            Some(d) => self.check(&v.to_string(), d),
            None => Err(E::custom(format!("'{v}' is not a duration: write {FORM}"))),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        let d = parse(v).map_err(E::custom)?;
        self.check(v, d)
    }
}

/// `#[serde(deserialize_with = "crate::duration::positive_in_file")]`: a timeout in a file.
pub fn positive_in_file<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    d.deserialize_any(DurationVisitor {
        zero_allowed: false,
    })
}

/// The same for an optional field (with `#[serde(default)]`).
pub fn optional_positive_in_file<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    positive_in_file(d).map(Some)
}

/// A duration in a file that may be zero (a delay).
pub fn optional_in_file<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    d.deserialize_any(DurationVisitor { zero_allowed: true })
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them_and_plain_numbers_are_seconds() {
        assert_eq!(parse("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse(" 90s "), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(positive("500ms"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn what_is_no_duration_is_refused_saying_how_to_write_one() {
        for wrong in ["soon", "-5", "5 parsecs", "", "NaN", "inf"] {
            let e = parse(wrong).unwrap_err();
            assert!(
                e.contains(&format!("'{wrong}' is not a duration")) && e.contains(FORM),
                "{wrong}: {e}"
            );
        }
        for zero in ["0", "0s", "0ms"] {
            let e = positive(zero).unwrap_err();
            assert!(e.contains("more than 0"), "{zero}: {e}");
        }
        // A deadline this far would overflow the clock: refused, never a panic later.
        let e = parse("18446744073709551615").unwrap_err();
        assert!(e.contains("longer than a year"), "{e}");
        assert!(parse("400d").unwrap_err().contains("at most 365d"));
    }

    #[test]
    fn a_duration_is_shown_in_the_unit_it_was_likely_written_in() {
        assert_eq!(show(Duration::from_secs(2)), "2 s");
        assert_eq!(show(Duration::from_millis(500)), "500 ms");
        assert_eq!(show(Duration::from_secs(300)), "5 min");
        assert_eq!(show(Duration::from_secs(90)), "90 s");
    }

    #[derive(serde::Deserialize, Debug)]
    struct InFile {
        #[serde(default, deserialize_with = "optional_positive_in_file")]
        timeout: Option<Duration>,
    }

    #[test]
    fn a_file_takes_a_string_or_a_number_of_seconds_and_says_where_a_wrong_one_is() {
        let read = |t: &str| toml::from_str::<InFile>(t).map(|f| f.timeout);
        assert_eq!(read("timeout = 60").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(
            read("timeout = 0.5").unwrap(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            read("timeout = \"2m\"").unwrap(),
            Some(Duration::from_secs(120))
        );
        assert_eq!(read("").unwrap(), None);
        let e = read("\ntimeout = \"soon\"").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("'soon' is not a duration"),
            "{e}"
        );
        let e = read("timeout = 0").unwrap_err().to_string();
        assert!(e.contains("more than 0"), "{e}");
        let e = read("timeout = -3").unwrap_err().to_string();
        assert!(e.contains("'-3' is not a duration"), "{e}");
    }
}
