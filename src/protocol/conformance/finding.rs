//! A finding: one way in which a message, an exchange or a dialogue breaks the specification.

use crate::protocol::requirement::Requirement;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which of the three checks found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// One message on its own: schema and mode rule.
    Message,
    /// A Response against the Request it answers.
    Exchange,
    /// A message against the dialogue so far.
    Dialogue,
    /// How the message travelled over MCP (MCP-BINDING section 1).
    Binding,
}

/// The specific rule a finding breaks. Its stable name (`as_str`) is what tests, scripts and
/// `--format json` rely on; the requirement it belongs to is on the finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Check {
    #[serde(rename = "message.not-object")]
    NotAnObject,
    #[serde(rename = "header.value")]
    HeaderValue,
    #[serde(rename = "header.interface")]
    HeaderInterface,
    #[serde(rename = "mode.value")]
    ModeValue,
    #[serde(rename = "mode.foreign-property")]
    ForeignProperty,
    #[serde(rename = "schema.required")]
    Required,
    #[serde(rename = "schema.type")]
    Type,
    #[serde(rename = "schema.enum")]
    Enum,
    #[serde(rename = "schema.range")]
    Range,
    #[serde(rename = "schema.format")]
    Format,
    #[serde(rename = "schema.length")]
    Length,
    #[serde(rename = "schema.unknown-property")]
    UnknownProperty,
    #[serde(rename = "schema.items")]
    Items,
    #[serde(rename = "schema.pattern")]
    Pattern,
    #[serde(rename = "schema.shape")]
    Shape,
    #[serde(rename = "exchange.request-id")]
    ExchangeRequestId,
    #[serde(rename = "exchange.query-id")]
    ExchangeQueryId,
    #[serde(rename = "exchange.dialog-id")]
    ExchangeDialogId,
    #[serde(rename = "exchange.turn-index")]
    ExchangeTurnIndex,
    #[serde(rename = "exchange.identification")]
    ExchangeIdentification,
    #[serde(rename = "exchange.interface")]
    ExchangeInterface,
    #[serde(rename = "exchange.mode")]
    ExchangeMode,
    #[serde(rename = "dialogue.turn-order")]
    TurnOrder,
    #[serde(rename = "dialogue.query-id-unique")]
    QueryIdUnique,
    #[serde(rename = "dialogue.dialog-id")]
    DialogId,
    #[serde(rename = "dialogue.unmatched-response")]
    UnmatchedResponse,
    #[serde(rename = "dialogue.duplicate-response")]
    DuplicateResponse,
    /// MCP-BINDING section 1: a successful call returns the Response as structuredContent.
    #[serde(rename = "binding.structured-content")]
    StructuredContent,
    /// MCP-BINDING section 1: the text block carries the same JSON as structuredContent.
    #[serde(rename = "binding.text-block")]
    TextBlock,
}

impl Check {
    /// The stable name, e.g. `exchange.request-id`.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::NotAnObject => "message.not-object",
            Check::HeaderValue => "header.value",
            Check::HeaderInterface => "header.interface",
            Check::ModeValue => "mode.value",
            Check::ForeignProperty => "mode.foreign-property",
            Check::Required => "schema.required",
            Check::Type => "schema.type",
            Check::Enum => "schema.enum",
            Check::Range => "schema.range",
            Check::Format => "schema.format",
            Check::Length => "schema.length",
            Check::UnknownProperty => "schema.unknown-property",
            Check::Items => "schema.items",
            Check::Pattern => "schema.pattern",
            Check::Shape => "schema.shape",
            Check::ExchangeRequestId => "exchange.request-id",
            Check::ExchangeQueryId => "exchange.query-id",
            Check::ExchangeDialogId => "exchange.dialog-id",
            Check::ExchangeTurnIndex => "exchange.turn-index",
            Check::ExchangeIdentification => "exchange.identification",
            Check::ExchangeInterface => "exchange.interface",
            Check::ExchangeMode => "exchange.mode",
            Check::TurnOrder => "dialogue.turn-order",
            Check::QueryIdUnique => "dialogue.query-id-unique",
            Check::DialogId => "dialogue.dialog-id",
            Check::UnmatchedResponse => "dialogue.unmatched-response",
            Check::DuplicateResponse => "dialogue.duplicate-response",
            Check::StructuredContent => "binding.structured-content",
            Check::TextBlock => "binding.text-block",
        }
    }

    pub fn level(self) -> Level {
        let name = self.as_str();
        if name.starts_with("exchange.") {
            Level::Exchange
        } else if name.starts_with("dialogue.") {
            Level::Dialogue
        } else if name.starts_with("binding.") {
            Level::Binding
        } else {
            Level::Message
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// JSON pointer into the message concerned ("" is the whole message). For a missing
    /// property it points where the property should be.
    pub pointer: String,
    pub requirement: Requirement,
    pub check: Check,
    /// What is wrong, in a sentence a person understands.
    pub message: String,
}

impl Finding {
    pub fn new(
        pointer: impl Into<String>,
        requirement: Requirement,
        check: Check,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            pointer: pointer.into(),
            requirement,
            check,
            message: message.into(),
        }
    }

    pub fn level(&self) -> Level {
        self.check.level()
    }

    /// `FR3 Correlation, exchange.request-id`: what the text output shows in brackets.
    pub fn rule(&self) -> String {
        format!("{}, {}", self.requirement, self.check)
    }

    /// The pointer as shown to people: the root is `/`.
    pub fn display_pointer(&self) -> &str {
        if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}]",
            self.display_pointer(),
            self.message,
            self.rule()
        )
    }
}
