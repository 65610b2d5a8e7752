//! A server's resources as people read them: the list (`Listed`), and a read resource's
//! content shown (JSON pretty-printed, text as it is, a binary content described) with what a
//! copy takes. `bkn-explorer read` and the explorer's Resources overlay show the same.

use base64::Engine;
use rmcp::model::{Resource, ResourceContents};
use serde_json::{Value, json};

/// One resource of a server's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

impl From<&Resource> for Listed {
    fn from(r: &Resource) -> Listed {
        Listed {
            uri: r.uri.to_string(),
            name: r.name.clone(),
            title: r.title.clone(),
            description: r.description.clone(),
            mime_type: r.mime_type.clone(),
        }
    }
}

/// A resource read: what is shown, and what a copy takes (the text as the server sent it;
/// JSON pretty-printed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    pub uri: String,
    pub mime_type: Option<String>,
    pub shown: String,
    /// Whether every text content was JSON (shown pretty).
    pub json: bool,
}

impl Read {
    pub fn of(uri: &str, contents: &[ResourceContents]) -> Read {
        let mime_type = contents.iter().find_map(|c| match c {
            ResourceContents::TextResourceContents { mime_type, .. }
            | ResourceContents::BlobResourceContents { mime_type, .. } => mime_type.clone(),
            _ => None,
        });
        let json = !contents.is_empty()
            && contents.iter().all(|c| match c {
                ResourceContents::TextResourceContents { text, .. } => {
                    serde_json::from_str::<Value>(text).is_ok()
                }
                _ => false,
            });
        Read {
            uri: uri.to_owned(),
            mime_type,
            shown: shown(contents),
            json,
        }
    }
}

/// The content as a person reads it: JSON pretty-printed, text as it is, a binary content
/// described (its bytes go to a file with `read -o`).
pub fn shown(contents: &[ResourceContents]) -> String {
    let mut out = String::new();
    for c in contents {
        match c {
            ResourceContents::TextResourceContents { text, .. } => {
                match serde_json::from_str::<Value>(text) {
                    Ok(v) => out.push_str(&pretty(&v)),
                    Err(_) => out.push_str(text.trim_end()),
                }
            }
            ResourceContents::BlobResourceContents {
                mime_type, blob, ..
            } => {
                let size = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_or_else(
                        |_| "not valid base64".to_owned(),
                        |b| format!("{} bytes", b.len()),
                    );
                out.push_str(&format!(
                    "(binary content, {}, {size}: write it to a file with `bkn-explorer read URI -o FILE`)",
                    mime_type.as_deref().unwrap_or("no MIME type")
                ));
            }
            // A content of a kind rmcp adds later: shown as the JSON it came as.
            other => out.push_str(&pretty(&json!(other))),
        }
        out.push('\n');
    }
    out
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_pretty_and_text_stays_text() {
        let json = ResourceContents::text(r#"{"a":[1,2]}"#, "dac://domain");
        let read = Read::of("dac://domain", &[json]);
        assert!(read.json);
        assert_eq!(read.shown, "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n");
        let text = ResourceContents::text("plain words", "x://notes");
        let read = Read::of("x://notes", &[text]);
        assert!(!read.json);
        assert_eq!(read.shown, "plain words\n");
    }
}
