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
    /// How the message travelled over MCP, or how the server declares its tool (MCP-BINDING
    /// section 1).
    Binding,
}

/// Declares every rule once: its variant, its stable name (what tests, scripts and
/// `--format json` rely on) and the level of check that finds it.
macro_rules! checks {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal @ $level:ident,)*) => {
        /// The specific rule a finding breaks. The requirement it belongs to is on the finding.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Check {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)*
        }

        impl Check {
            /// Every rule, in the order of the table.
            pub const ALL: &'static [Check] = &[$(Check::$variant),*];

            /// The stable name, e.g. `exchange.request-id`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Check::$variant => $name,)*
                }
            }

            pub fn level(self) -> Level {
                match self {
                    $(Check::$variant => Level::$level,)*
                }
            }

            pub fn from_name(name: &str) -> Option<Check> {
                match name {
                    $($name => Some(Check::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

checks! {
    NotAnObject = "message.not-object" @ Message,
    HeaderValue = "header.value" @ Message,
    HeaderInterface = "header.interface" @ Message,
    ModeValue = "mode.value" @ Message,
    ForeignProperty = "mode.foreign-property" @ Message,
    Required = "schema.required" @ Message,
    Type = "schema.type" @ Message,
    Enum = "schema.enum" @ Message,
    Range = "schema.range" @ Message,
    Format = "schema.format" @ Message,
    Length = "schema.length" @ Message,
    UnknownProperty = "schema.unknown-property" @ Message,
    Items = "schema.items" @ Message,
    Pattern = "schema.pattern" @ Message,
    Shape = "schema.shape" @ Message,
    /// MCP-BINDING section 5: Overall is feasible when every step is Ack, infeasible when
    /// none is, partially_feasible otherwise.
    FeasibilityOverall = "feasibility.overall" @ Message,
    /// MCP-BINDING section 5: each non-Ack step has a Reason in plain words.
    FeasibilityReason = "feasibility.reason" @ Message,
    /// MCP-BINDING section 5: a Response never carries Feasibility with an empty Steps.
    FeasibilityEmpty = "feasibility.empty-steps" @ Message,
    /// MCP-BINDING section 4: no Response lists a CommitmentID twice.
    CommitmentListedTwice = "commitment.listed-twice" @ Message,
    /// RFC 7493 (MCP-BINDING section 6): a member name is given once in an object.
    DuplicateMember = "ijson.duplicate-member" @ Message,
    /// RFC 7493 (MCP-BINDING section 6): a number lies within the range of an IEEE double.
    NumberRange = "ijson.number-range" @ Message,
    ExchangeRequestId = "exchange.request-id" @ Exchange,
    ExchangeQueryId = "exchange.query-id" @ Exchange,
    ExchangeDialogId = "exchange.dialog-id" @ Exchange,
    ExchangeTurnIndex = "exchange.turn-index" @ Exchange,
    ExchangeIdentification = "exchange.identification" @ Exchange,
    ExchangeInterface = "exchange.interface" @ Exchange,
    ExchangeMode = "exchange.mode" @ Exchange,
    /// MCP-BINDING section 5: exactly one step for each Process Action of the Request, with
    /// the same Step numbers.
    FeasibilitySteps = "exchange.feasibility-steps" @ Exchange,
    /// MCP-BINDING section 5: a feasibility Request answered (or partially) carries
    /// Feasibility.
    FeasibilityMissing = "exchange.feasibility-missing" @ Exchange,
    /// MCP-BINDING section 5: a Response carries Feasibility only for a Request with at least
    /// one Process Action.
    FeasibilityUnasked = "exchange.feasibility-unasked" @ Exchange,
    TurnOrder = "dialogue.turn-order" @ Dialogue,
    QueryIdUnique = "dialogue.query-id-unique" @ Dialogue,
    DialogId = "dialogue.dialog-id" @ Dialogue,
    UnmatchedResponse = "dialogue.unmatched-response" @ Dialogue,
    DuplicateResponse = "dialogue.duplicate-response" @ Dialogue,
    /// MCP-BINDING section 4: CommitmentStatus lists every commitment the dialogue has seen.
    CommitmentMissing = "dialogue.commitment-missing" @ Dialogue,
    /// MCP-BINDING section 4: no Response lists a CommitmentID the dialogue never saw.
    CommitmentUnknown = "dialogue.commitment-unknown" @ Dialogue,
    /// MCP-BINDING section 4: a commitment released by a Request is `released` in its Response.
    CommitmentReleased = "dialogue.commitment-released" @ Dialogue,
    /// MCP-BINDING section 4: a retained commitment stays retained until released or restated.
    CommitmentRetained = "dialogue.commitment-retained" @ Dialogue,
    /// MCP-BINDING section 4: `S P O` and `S not P O` are never both retained in one Response.
    CommitmentContradiction = "dialogue.commitment-contradiction" @ Dialogue,
    /// MCP-BINDING section 4: an opaque statement (not a triple) is never conflicting.
    CommitmentOpaqueConflicting = "dialogue.commitment-opaque-conflicting" @ Dialogue,
    /// MCP-BINDING section 1: a successful call returns the Response as structuredContent.
    StructuredContent = "binding.structured-content" @ Binding,
    /// MCP-BINDING section 1: the text block carries the same JSON as structuredContent.
    TextBlock = "binding.text-block" @ Binding,
    /// MCP-BINDING section 1: the tool of an interface declares an outputSchema.
    OutputSchema = "binding.output-schema" @ Binding,
    /// MCP-BINDING section 1: the tool's inputSchema carries the interface's Header as a const.
    InputHeader = "binding.input-header" @ Binding,
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
