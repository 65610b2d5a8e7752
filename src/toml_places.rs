//! The program's own TOML files (config.toml, a theme, keys.toml) read so that every mistake is found in
//! one go and named with its line: the text is parsed with its places kept (toml_edit's
//! `Document`), each entry is checked on its own, and each mistake is a `Problem` at the line
//! of what is wrong (a name not known says the closest known one).

use std::fmt;
use std::ops::Range;

/// One mistake of a file, and its line when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<usize>,
    pub what: String,
}

impl Problem {
    /// A mistake at a place of `text` (a span toml_edit kept).
    pub fn at(text: &str, span: Option<Range<usize>>, what: impl Into<String>) -> Problem {
        Problem {
            line: span.map(|s| line_of(text, s.start)),
            what: what.into(),
        }
    }

    /// A mistake of the whole file (a binding that conflicts with a default).
    pub fn whole(what: impl Into<String>) -> Problem {
        Problem {
            line: None,
            what: what.into(),
        }
    }

    /// As said of a file: `FILE:LINE: what`.
    pub fn in_file(&self, origin: &str) -> String {
        match self.line {
            Some(line) => format!("{origin}:{line}: {}", self.what),
            None => format!("{origin}: {}", self.what),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

/// The line (from 1) of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The text parsed with its places, or the syntax error at its line (a file that does not
/// parse has no entries to check).
pub fn parse(text: &str) -> Result<toml_edit::Document<&str>, Problem> {
    toml_edit::Document::parse(text)
        .map_err(|e| Problem::at(text, e.span(), e.message().trim().replace('\n', " ")))
}

/// Where a table's entry is named (its key's place).
pub fn key_span(table: &dyn toml_edit::TableLike, name: &str) -> Option<Range<usize>> {
    table.get_key_value(name).and_then(|(k, _)| k.span())
}

/// " (did you mean X?)" when a known name is close to `word`, else nothing.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    crate::protocol::spelling::closest(word, known)
        .map(|k| format!(" (did you mean {k}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_names_its_line() {
        let text = "a = 1\n[t]\nb = \"x\n";
        let p = parse(text).unwrap_err();
        assert_eq!(p.line, Some(3), "{p}");
        assert!(p.in_file("f.toml").starts_with("f.toml:3: "), "{p}");
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(
            did_you_mean("qiut", ["quit", "help"]),
            " (did you mean quit?)"
        );
        assert_eq!(did_you_mean("zzzz", ["quit"]), "");
    }
}
