//! Loading the JSON model files of the reference servers (the domain, the users): every
//! mistake is reported with where it is, first the JSON syntax, then the file's schema, then
//! what the caller checks across references.

use crate::protocol::document::SyntaxError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;

/// Every mistake found in a model file, each with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// What the file is (usually its path).
    pub origin: String,
    /// What kind of file it is, e.g. "domain file".
    pub kind: &'static str,
    pub problems: Vec<Problem>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// A JSON pointer into the file, or `line L, column C` for a syntax error.
    pub at: String,
    pub message: String,
}

impl FileError {
    pub fn new(origin: &str, kind: &'static str, problems: Vec<Problem>) -> FileError {
        FileError {
            origin: origin.to_owned(),
            kind,
            problems,
        }
    }
}

impl Problem {
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            at: at.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "{}: {n} mistake{} in the {}:",
            self.origin,
            if n == 1 { "" } else { "s" },
            self.kind
        )?;
        for p in &self.problems {
            writeln!(f, "  {}: {}", p.at, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for FileError {}

/// Compiles the schema of a model file (embedded, so a failure is a build defect).
pub fn compile_schema(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema).expect("a model file schema is JSON");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .expect("a model file schema compiles")
}

/// Parses `text` as a model file of type `T` that `schema` describes. The caller checks the
/// references between its parts next, which the schema cannot see.
pub fn load<T: DeserializeOwned>(
    text: &str,
    origin: &str,
    kind: &'static str,
    schema: &jsonschema::Validator,
) -> Result<T, FileError> {
    let failed = |problems: Vec<Problem>| FileError::new(origin, kind, problems);
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let e = SyntaxError::from(e);
        failed(vec![Problem::new(
            format!("line {}, column {}", e.line, e.column),
            e.message,
        )])
    })?;
    let problems: Vec<Problem> = schema
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path().as_str();
            Problem::new(if at.is_empty() { "/" } else { at }, e.to_string())
        })
        .collect();
    if !problems.is_empty() {
        return Err(failed(problems));
    }
    serde_json::from_value(value).map_err(|e| failed(vec![Problem::new("/", e.to_string())]))
}
