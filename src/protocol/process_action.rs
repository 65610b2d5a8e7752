//! The Process Action statement grammar of MCP-BINDING section 5 (MMM-TEC V2.2 form):
//!
//! ```text
//! statement  = action complement *( [","] complement ) [ "If" event ]
//! complement = prep target
//! prep       = "Nil" / "At" / "From" / "To" / "Of" / "With"
//! target     = id [ "=" value ] / id "(" param *( "," param ) ")"
//! event      = free text to the end of the statement
//! ```
//!
//! Keywords (Actions, prepositions, `If`) match without regard to case, as ABNF strings do.
//! Errors carry the character position where the statement stops making sense and what
//! would have been accepted there, so that an editor can put the cursor on it and offer
//! completions.

use std::fmt;

/// The Actions of MMM-TEC V2.2 (the AnyAction enumeration). Two-word Actions are written
/// with their space.
pub const ACTIONS: [&str; 29] = [
    "Authenticate",
    "Author",
    "Convert",
    "Discover",
    "Execute",
    "Hide",
    "Identify",
    "Inform",
    "Interpret",
    "MM-Add",
    "MM-Animate",
    "MM-Capture",
    "MM-Move",
    "MM-Send",
    "Modify",
    "MU-Actuate",
    "MU-Add",
    "MU-Animate",
    "MU-Move",
    "MU-Send",
    "Post",
    "Property Manage",
    "Register",
    "Resolve",
    "Rights Manage",
    "Transact",
    "UM-Capture",
    "UM-Send",
    "Validate",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Preposition {
    Nil,
    At,
    From,
    To,
    Of,
    With,
}

impl Preposition {
    pub const ALL: [Preposition; 6] = [
        Preposition::Nil,
        Preposition::At,
        Preposition::From,
        Preposition::To,
        Preposition::Of,
        Preposition::With,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preposition::Nil => "Nil",
            Preposition::At => "At",
            Preposition::From => "From",
            Preposition::To => "To",
            Preposition::Of => "Of",
            Preposition::With => "With",
        }
    }

    fn parse(word: &str) -> Option<Preposition> {
        Preposition::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(word))
    }
}

impl fmt::Display for Preposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed statement. Spans are character ranges into the statement text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The Action in its canonical spelling, e.g. `MM-Move`.
    pub action: &'static str,
    pub action_span: Span,
    pub complements: Vec<Complement>,
    /// The event after `If`, trimmed.
    pub condition: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Complement {
    pub preposition: Preposition,
    pub target: Target,
    pub span: Span,
}

/// The Item or Process a complement applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub id: String,
    /// `id=value`
    pub value: Option<String>,
    /// `id(param, param)`
    pub params: Vec<Param>,
    pub span: Span,
}

/// One parameter of `id(...)`: `key=value` or a bare value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub key: Option<String>,
    pub value: String,
}

/// A half-open range of character positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// What the parser would have accepted where it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Action,
    /// A preposition, or `If`, or (after a complement) a comma.
    Preposition,
    /// An Item, Process or M-Location ID.
    Target,
    Value,
    Param,
    CloseParen,
    Event,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Character position (0-based) where the statement stops making sense.
    pub position: usize,
    /// Characters from `position` that are at fault (at least 1 for display, even at the end).
    pub length: usize,
    pub expected: Expected,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.position + 1, self.message)
    }
}

impl std::error::Error for ParseError {}

impl Statement {
    /// The complements with a given preposition, in order.
    pub fn with_prep(&self, preposition: Preposition) -> impl Iterator<Item = &Target> {
        self.complements
            .iter()
            .filter(move |c| c.preposition == preposition)
            .map(|c| &c.target)
    }

    /// The first complement with a given preposition.
    pub fn first(&self, preposition: Preposition) -> Option<&Target> {
        self.with_prep(preposition).next()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum TokenKind {
    Word(String),
    Quoted(String),
    Comma,
    Open,
    Close,
    Equals,
}

#[derive(Clone, Debug)]
struct Token {
    kind: TokenKind,
    span: Span,
}

fn is_word_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, ',' | '(' | ')' | '=' | '"')
}

fn tokenize(chars: &[char]) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let single = match c {
            ',' => Some(TokenKind::Comma),
            '(' => Some(TokenKind::Open),
            ')' => Some(TokenKind::Close),
            '=' => Some(TokenKind::Equals),
            _ => None,
        };
        if c.is_whitespace() {
            i += 1;
        } else if let Some(kind) = single {
            tokens.push(Token {
                kind,
                span: Span {
                    start: i,
                    end: i + 1,
                },
            });
            i += 1;
        } else if c == '"' {
            let start = i;
            i += 1;
            let mut text = String::new();
            while i < chars.len() && chars[i] != '"' {
                text.push(chars[i]);
                i += 1;
            }
            if i == chars.len() {
                return Err(ParseError {
                    position: start,
                    length: chars.len() - start,
                    expected: Expected::Value,
                    message: "this quoted value has no closing \"".into(),
                });
            }
            i += 1;
            tokens.push(Token {
                kind: TokenKind::Quoted(text),
                span: Span { start, end: i },
            });
        } else {
            let start = i;
            while i < chars.len() && is_word_char(chars[i]) {
                i += 1;
            }
            tokens.push(Token {
                kind: TokenKind::Word(chars[start..i].iter().collect()),
                span: Span { start, end: i },
            });
        }
    }
    Ok(tokens)
}

struct Parser<'a> {
    chars: &'a [char],
    tokens: Vec<Token>,
    next: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn end_position(&self) -> usize {
        self.chars.len()
    }

    /// Where the next token starts, or the end of the text.
    fn here(&self) -> usize {
        self.peek()
            .map(|t| t.span.start)
            .unwrap_or(self.end_position())
    }

    fn error(&self, expected: Expected, message: impl Into<String>) -> ParseError {
        let (position, length) = match self.peek() {
            Some(token) => (token.span.start, token.span.end - token.span.start),
            None => (self.end_position(), 1),
        };
        ParseError {
            position,
            length,
            expected,
            message: message.into(),
        }
    }

    fn word(&self) -> Option<&str> {
        match &self.peek()?.kind {
            TokenKind::Word(w) => Some(w),
            _ => None,
        }
    }

    fn action(&mut self) -> Result<(&'static str, Span), ParseError> {
        let Some(first) = self.word().map(str::to_owned) else {
            return Err(self.error(
                Expected::Action,
                "a statement starts with an Action, e.g. MM-Move",
            ));
        };
        let start = self.peek().map(|t| t.span).unwrap_or_default();
        // Two-word Actions ("Rights Manage") first.
        if let Some(Token {
            kind: TokenKind::Word(second),
            span,
        }) = self.tokens.get(self.next + 1)
        {
            let two = format!("{first} {second}");
            if let Some(action) = ACTIONS.iter().find(|a| a.eq_ignore_ascii_case(&two)) {
                let span = Span {
                    start: start.start,
                    end: span.end,
                };
                self.next += 2;
                return Ok((action, span));
            }
        }
        if let Some(action) = ACTIONS.iter().find(|a| a.eq_ignore_ascii_case(&first)) {
            self.next += 1;
            return Ok((action, start));
        }
        let hint = closest_action(&first)
            .map(|a| format!(" (did you mean {a}?)"))
            .unwrap_or_default();
        Err(self.error(
            Expected::Action,
            format!("\"{first}\" is not an MMM-TEC V2.2 Action{hint}"),
        ))
    }

    fn target(&mut self, after: Preposition) -> Result<Target, ParseError> {
        let Some(id) = self.word().map(str::to_owned) else {
            return Err(self.error(
                Expected::Target,
                format!("expected an Item, Process or M-Location ID after {after}"),
            ));
        };
        if Preposition::parse(&id).is_some() || id.eq_ignore_ascii_case("If") {
            return Err(self.error(
                Expected::Target,
                format!("expected an Item, Process or M-Location ID after {after}, found the keyword {id}"),
            ));
        }
        let start = self.here();
        self.next += 1;
        let mut target = Target {
            id,
            value: None,
            params: Vec::new(),
            span: Span::default(),
        };
        match self.peek().map(|t| &t.kind) {
            Some(TokenKind::Equals) => {
                self.next += 1;
                target.value = Some(self.value(&target.id)?);
            }
            Some(TokenKind::Open) => {
                self.next += 1;
                target.params = self.params(&target.id)?;
            }
            _ => {}
        }
        let end = self
            .tokens
            .get(self.next.wrapping_sub(1))
            .map(|t| t.span.end)
            .unwrap_or(start);
        target.span = Span { start, end };
        Ok(target)
    }

    fn value(&mut self, of: &str) -> Result<String, ParseError> {
        match self.peek().map(|t| t.kind.clone()) {
            Some(TokenKind::Word(w)) | Some(TokenKind::Quoted(w)) => {
                self.next += 1;
                Ok(w)
            }
            _ => Err(self.error(Expected::Value, format!("expected a value after {of}="))),
        }
    }

    fn params(&mut self, of: &str) -> Result<Vec<Param>, ParseError> {
        let mut params = Vec::new();
        loop {
            let value = match self.peek().map(|t| t.kind.clone()) {
                Some(TokenKind::Word(w)) | Some(TokenKind::Quoted(w)) => {
                    self.next += 1;
                    w
                }
                _ => {
                    return Err(self.error(
                        Expected::Param,
                        format!("expected a parameter of {of}( … ), e.g. Status=Model"),
                    ));
                }
            };
            let param = if matches!(self.peek().map(|t| &t.kind), Some(TokenKind::Equals)) {
                self.next += 1;
                Param {
                    key: Some(value),
                    value: self.value(of)?,
                }
            } else {
                Param { key: None, value }
            };
            params.push(param);
            match self.peek().map(|t| &t.kind) {
                Some(TokenKind::Comma) => self.next += 1,
                Some(TokenKind::Close) => {
                    self.next += 1;
                    return Ok(params);
                }
                _ => {
                    return Err(self.error(
                        Expected::CloseParen,
                        format!("expected , or ) in the parameters of {of}"),
                    ));
                }
            }
        }
    }
}

/// Parses a Process Action statement.
pub fn parse(statement: &str) -> Result<Statement, ParseError> {
    let chars: Vec<char> = statement.chars().collect();
    let tokens = tokenize(&chars)?;
    let mut p = Parser {
        chars: &chars,
        tokens,
        next: 0,
    };
    let (action, action_span) = p.action()?;
    let mut complements = Vec::new();
    let mut condition = None;
    loop {
        if p.peek().is_none() {
            break;
        }
        if !complements.is_empty() && matches!(p.peek().map(|t| &t.kind), Some(TokenKind::Comma)) {
            p.next += 1;
        }
        let Some(word) = p.word().map(str::to_owned) else {
            return Err(p.error(
                Expected::Preposition,
                "expected a preposition (Nil, At, From, To, Of, With) or If",
            ));
        };
        if word.eq_ignore_ascii_case("If") {
            if complements.is_empty() {
                return Err(p.error(
                    Expected::Preposition,
                    format!("{action} needs at least one complement before If"),
                ));
            }
            let if_end = p.peek().map(|t| t.span.end).unwrap_or(chars.len());
            let event: String = chars[if_end..].iter().collect::<String>().trim().to_owned();
            if event.is_empty() {
                return Err(ParseError {
                    position: chars.len(),
                    length: 1,
                    expected: Expected::Event,
                    message: "expected an event after If".into(),
                });
            }
            condition = Some(event);
            break;
        }
        let Some(preposition) = Preposition::parse(&word) else {
            return Err(p.error(
                Expected::Preposition,
                format!(
                    "expected a preposition (Nil, At, From, To, Of, With) or If, found \"{word}\""
                ),
            ));
        };
        let start = p.here();
        p.next += 1;
        let target = p.target(preposition)?;
        complements.push(Complement {
            preposition,
            span: Span {
                start,
                end: target.span.end,
            },
            target,
        });
    }
    if complements.is_empty() {
        return Err(p.error(
            Expected::Preposition,
            format!("{action} needs at least one complement, e.g. Nil Avatar#7"),
        ));
    }
    Ok(Statement {
        action,
        action_span,
        complements,
        condition,
    })
}

/// The Action closest in spelling to a misspelt one, if any is close enough to suggest.
pub fn closest_action(word: &str) -> Option<&'static str> {
    crate::protocol::spelling::closest(word, ACTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_binding_example() {
        let s = parse(
            "MM-Move Nil Avatar#7 From MLoc:Square.Fountain To MLoc:Square.Stage With SpatialAttitude=upright",
        )
        .unwrap();
        assert_eq!(s.action, "MM-Move");
        assert_eq!(s.complements.len(), 4);
        assert_eq!(s.first(Preposition::Nil).unwrap().id, "Avatar#7");
        assert_eq!(s.first(Preposition::To).unwrap().id, "MLoc:Square.Stage");
        let with = s.first(Preposition::With).unwrap();
        assert_eq!(with.id, "SpatialAttitude");
        assert_eq!(with.value.as_deref(), Some("upright"));
    }

    #[test]
    fn two_word_actions_params_commas_and_conditions() {
        let s = parse(
            "rights manage Nil Item#3, To User#B With Rights(Status=Model, Level=Granted) If the market opens",
        )
        .unwrap();
        assert_eq!(s.action, "Rights Manage");
        assert_eq!(s.complements.len(), 3);
        let rights = s.first(Preposition::With).unwrap();
        assert_eq!(rights.params.len(), 2);
        assert_eq!(rights.params[1].key.as_deref(), Some("Level"));
        assert_eq!(s.condition.as_deref(), Some("the market opens"));
    }

    #[test]
    fn quoted_values_keep_spaces() {
        let s =
            parse("MM-Add Nil Kiosk#9 With Label=\"Lemonade stand\" At MLoc:Square.Gate").unwrap();
        assert_eq!(
            s.first(Preposition::With).unwrap().value.as_deref(),
            Some("Lemonade stand")
        );
    }

    #[test]
    fn errors_point_at_the_fault() {
        let e = parse("MM-Mve Nil Avatar#7").unwrap_err();
        assert_eq!((e.position, e.expected), (0, Expected::Action));
        assert!(e.message.contains("MM-Move"), "{e}");

        let e = parse("MM-Move Nil Avatar#7 Toward X").unwrap_err();
        assert_eq!((e.position, e.expected), (21, Expected::Preposition));

        let e = parse("MM-Move Nil").unwrap_err();
        assert_eq!((e.position, e.expected), (11, Expected::Target));

        let e = parse("MM-Move").unwrap_err();
        assert_eq!(e.expected, Expected::Preposition);

        let e = parse("Post Nil Item#1 If").unwrap_err();
        assert_eq!(e.expected, Expected::Event);

        let e = parse("Post Nil Item#1 With Rights(Status=Model").unwrap_err();
        assert_eq!(e.expected, Expected::CloseParen);

        let e = parse("").unwrap_err();
        assert_eq!((e.position, e.expected), (0, Expected::Action));
    }

    #[test]
    fn positions_are_characters_not_bytes() {
        let e = parse("MM-Move Nil Café#1 Über X").unwrap_err();
        assert_eq!(e.position, 19);
    }
}
