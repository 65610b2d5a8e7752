//! `${…}` in a server's definition, read when connecting so that files name secrets without
//! holding them. The forms other MCP tools write:
//!
//! | form | value |
//! |---|---|
//! | `${VAR}`, `${env:VAR}` | the environment variable (an error when unset) |
//! | `${VAR:-default}`, `${env:VAR:-default}` | the variable, or `default` when unset or empty |
//! | `${workspaceFolder}` | the folder the file belongs to (the one holding `.vscode/`, `.cursor/`, or the file) |
//! | `${workspaceFolderBasename}` | that folder's name |
//! | `${userHome}` | the user's home directory |
//! | `${pathSeparator}`, `${/}` | `/` |
//! | `${input:ID}` | a value the user gives: the explorer asks; headless, `BKN_INPUT_<ID>` |

use super::Origin;
use std::collections::BTreeMap;
use std::fmt;

/// What `${…}` is read against for one server.
pub struct Scope<'a> {
    /// The server's name, for messages.
    pub server: &'a str,
    /// The file it was read from (workspace folder, declared inputs), if any.
    pub origin: Option<&'a Origin>,
    /// The process's environment (a function, so that tests give their own).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Inputs the user already gave, by ID.
    pub answers: &'a BTreeMap<String, String>,
}

/// Why a value cannot be expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarError {
    /// `${VAR}` or `${env:VAR}` without a default, and the variable is not set.
    Unset { variable: String },
    /// `${input:ID}` and no value was given.
    NeedsInput(InputRequest),
    /// A `${` without its `}`.
    Unclosed { value: String },
    /// A form no tool defines here (`${command:…}`, `${config:…}`).
    Unknown { variable: String },
}

/// An input the user must give before the server can be reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRequest {
    pub id: String,
    /// What the file says it is for.
    pub description: Option<String>,
    /// Typed without showing it.
    pub password: bool,
}

impl InputRequest {
    /// The environment variable that gives it headless: `BKN_INPUT_<ID>`.
    pub fn variable(&self) -> String {
        input_variable(&self.id)
    }
}

/// `BKN_INPUT_` and the ID in upper case, other characters as `_`.
pub fn input_variable(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("BKN_INPUT_{clean}")
}

impl Scope<'_> {
    /// `value` with every `${…}` replaced.
    pub fn expand(&self, value: &str) -> Result<String, VarError> {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| VarError::Unclosed {
                value: value.to_owned(),
            })?;
            out.push_str(&self.variable(&after[..end])?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn variable(&self, inner: &str) -> Result<String, VarError> {
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let from_env = |var: &str| -> Result<String, VarError> {
            match ((self.env)(var).filter(|v| !v.is_empty()), default) {
                (Some(v), _) => Ok(v),
                (None, Some(d)) => Ok(d.to_owned()),
                // Set but empty, without a default: empty is what the user set.
                (None, None) if (self.env)(var).is_some() => Ok(String::new()),
                (None, None) => Err(VarError::Unset {
                    variable: var.to_owned(),
                }),
            }
        };
        if let Some(var) = name.strip_prefix("env:") {
            return from_env(var);
        }
        if let Some(id) = name.strip_prefix("input:") {
            return self.input(id);
        }
        match name {
            "workspaceFolder" => return Ok(self.workspace()),
            "workspaceFolderBasename" => {
                let w = self.workspace();
                return Ok(std::path::Path::new(&w)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(w));
            }
            "userHome" => {
                return dirs::home_dir()
                    .map(|h| h.to_string_lossy().into_owned())
                    .ok_or(VarError::Unset {
                        variable: "userHome".into(),
                    });
            }
            "pathSeparator" | "/" => return Ok(std::path::MAIN_SEPARATOR.to_string()),
            _ => {}
        }
        if name.contains(':') || name.is_empty() {
            return Err(VarError::Unknown {
                variable: inner.to_owned(),
            });
        }
        from_env(name)
    }

    fn workspace(&self) -> String {
        self.origin
            .map(|o| o.workspace.clone())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    }

    fn input(&self, id: &str) -> Result<String, VarError> {
        if let Some(v) = self.answers.get(id) {
            return Ok(v.clone());
        }
        let declared = self
            .origin
            .and_then(|o| o.inputs.iter().find(|i| i.id == id));
        let request = InputRequest {
            id: id.to_owned(),
            description: declared.and_then(|d| d.description.clone()),
            password: declared.is_some_and(|d| d.password),
        };
        if let Some(v) = (self.env)(&request.variable()) {
            return Ok(v);
        }
        if let Some(d) = declared.and_then(|d| d.default.clone()) {
            return Ok(d);
        }
        Err(VarError::NeedsInput(request))
    }

    /// The error for people: the file, the server and the variable, and what to do.
    pub fn describe(&self, e: &VarError) -> String {
        let place = match self.origin {
            Some(o) => format!("{}: server \"{}\"", o.file.display(), self.server),
            None => format!("server \"{}\"", self.server),
        };
        format!("{place}: {e}")
    }
}

impl fmt::Display for VarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarError::Unset { variable } => write!(
                f,
                "${{{variable}}} is not set and has no default (set it, or write ${{{variable}:-default}})"
            ),
            VarError::NeedsInput(r) => {
                write!(f, "${{input:{}}}", r.id)?;
                if let Some(d) = &r.description {
                    write!(f, " ({d})")?;
                }
                write!(
                    f,
                    " needs a value: the explorer asks for it; headless, set {}",
                    r.variable()
                )
            }
            VarError::Unclosed { value } => write!(f, "\"{value}\" has a ${{ without its }}"),
            VarError::Unknown { variable } => write!(
                f,
                "${{{variable}}} is not a variable this program knows (it reads ${{VAR}}, ${{VAR:-default}}, ${{env:VAR}}, ${{input:ID}}, ${{workspaceFolder}}, ${{userHome}})"
            ),
        }
    }
}

/// `value` with the variables that name places (`${workspaceFolder}`, its basename,
/// `${userHome}`, `${/}`) replaced and every other `${…}` kept: what a session file records,
/// so that it still finds the server's files when read elsewhere, and holds no secrets.
pub fn fix_places(value: &str, origin: Option<&Origin>) -> String {
    let env = |_: &str| None;
    let answers = BTreeMap::new();
    let scope = Scope {
        server: "",
        origin,
        env: &env,
        answers: &answers,
    };
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        match inner {
            "workspaceFolder" | "workspaceFolderBasename" | "userHome" | "pathSeparator" | "/" => {
                match scope.variable(inner) {
                    Ok(v) => out.push_str(&v),
                    Err(_) => out.push_str(&rest[start..start + 3 + end]),
                }
            }
            _ => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::spec::{Input, Origin};
    use std::path::PathBuf;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("abc".into()),
            "EMPTY" => Some(String::new()),
            "BKN_INPUT_API_KEY" => Some("from-env".into()),
            _ => None,
        }
    }

    fn origin() -> Origin {
        Origin {
            file: PathBuf::from("/w/.vscode/mcp.json"),
            workspace: PathBuf::from("/w"),
            inputs: vec![
                Input {
                    id: "pat".into(),
                    description: Some("GitHub token".into()),
                    password: true,
                    default: None,
                },
                Input {
                    id: "region".into(),
                    description: None,
                    password: false,
                    default: Some("eu".into()),
                },
            ],
        }
    }

    #[test]
    fn every_form() {
        let origin = origin();
        let answers = BTreeMap::new();
        let s = Scope {
            server: "gh",
            origin: Some(&origin),
            env: &env,
            answers: &answers,
        };
        let ok = |v: &str| s.expand(v).unwrap();
        assert_eq!(ok("Bearer ${TOKEN}"), "Bearer abc");
        assert_eq!(ok("${env:TOKEN}"), "abc");
        assert_eq!(ok("${NOPE:-x y}"), "x y");
        assert_eq!(ok("${env:NOPE:-d}"), "d");
        assert_eq!(ok("${TOKEN:-d}"), "abc");
        assert_eq!(ok("${EMPTY:-d}"), "d", "empty takes the default, as in sh");
        assert_eq!(ok("[${EMPTY}]"), "[]");
        assert_eq!(ok("${workspaceFolder}/srv.py"), "/w/srv.py");
        assert_eq!(ok("${workspaceFolderBasename}"), "w");
        assert_eq!(ok("a${/}b${pathSeparator}c"), "a/b/c");
        assert_eq!(ok("${input:api-key}"), "from-env");
        assert_eq!(ok("${input:region}"), "eu");
        assert!(!ok("${userHome}").is_empty());
        assert_eq!(ok("no variables"), "no variables");
    }

    #[test]
    fn each_mistake_says_what_and_where() {
        let origin = origin();
        let answers = BTreeMap::new();
        let s = Scope {
            server: "gh",
            origin: Some(&origin),
            env: &env,
            answers: &answers,
        };
        let e = s.expand("${NOPE}").unwrap_err();
        assert_eq!(
            s.describe(&e),
            "/w/.vscode/mcp.json: server \"gh\": ${NOPE} is not set and has no default (set it, or write ${NOPE:-default})"
        );
        let e = s.expand("x ${input:pat}").unwrap_err();
        assert_eq!(
            e,
            VarError::NeedsInput(InputRequest {
                id: "pat".into(),
                description: Some("GitHub token".into()),
                password: true
            })
        );
        assert!(
            s.describe(&e).contains("set BKN_INPUT_PAT"),
            "{}",
            s.describe(&e)
        );
        assert!(matches!(
            s.expand("${TOKEN").unwrap_err(),
            VarError::Unclosed { .. }
        ));
        assert!(matches!(
            s.expand("${command:pick}").unwrap_err(),
            VarError::Unknown { .. }
        ));
        assert!(matches!(
            s.expand("${}").unwrap_err(),
            VarError::Unknown { .. }
        ));
        // Given answers win over everything.
        let answers = BTreeMap::from([("pat".to_owned(), "typed".to_owned())]);
        let s = Scope {
            answers: &answers,
            ..s
        };
        assert_eq!(s.expand("${input:pat}").unwrap(), "typed");
    }
}
