//! The character-level parser PostgREST's combinators are built from: field names (bare,
//! dashed or quoted), JSON paths, casts, and Parsec-like errors.

use super::{Field, JsonOp, JsonOperand, MAX_DEPTH, ParseError, R};

const FIELD_NAME: &str = "field name (* or [a..z0..9_$])";

pub(super) struct P {
    pub(super) s: Vec<char>,
    pub(super) pos: usize,
    /// How deep in embedded resources, or in `and`/`or` trees, the parser is.
    pub(super) depth: usize,
}

impl P {
    pub(super) fn new(input: &str) -> Self {
        P {
            s: input.chars().collect(),
            pos: 0,
            depth: 0,
        }
    }

    /// One level deeper into `what` (resources, logic trees), or PGRST100's error past
    /// [`MAX_DEPTH`] levels; the caller goes back up with `depth -= 1`.
    pub(super) fn descend(&mut self, what: &str) -> R<()> {
        if self.depth == MAX_DEPTH {
            return Err(ParseError {
                column: self.pos + 1,
                details: format!("{what} nested more than {MAX_DEPTH} deep"),
            });
        }
        self.depth += 1;
        Ok(())
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.s.get(self.pos + n).copied()
    }

    pub(super) fn starts_with(&self, lit: &str) -> bool {
        lit.chars()
            .enumerate()
            .all(|(i, c)| self.s.get(self.pos + i) == Some(&c))
    }

    pub(super) fn eat_str(&mut self, lit: &str) -> bool {
        if self.starts_with(lit) {
            self.pos += lit.chars().count();
            true
        } else {
            false
        }
    }

    pub(super) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    pub(super) fn err(&self, expecting: &str) -> ParseError {
        let unexpected = match self.peek() {
            Some(c) => format!("\"{c}\""),
            None => "end of input".to_owned(),
        };
        ParseError {
            column: self.pos + 1,
            details: format!("unexpected {unexpected} expecting {expecting}"),
        }
    }

    pub(super) fn expect(&mut self, c: char, expecting: &str) -> R<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(expecting))
        }
    }

    pub(super) fn eof(&self) -> R<()> {
        if self.pos == self.s.len() {
            Ok(())
        } else {
            Err(self.err("end of input"))
        }
    }

    pub(super) fn at_end_of_item(&self) -> bool {
        matches!(self.peek(), None | Some(',' | ')'))
    }

    /// `"…"` with backslash escaping any character.
    pub(super) fn quoted(&mut self) -> R<String> {
        self.expect('"', "\"\\\"\"")?;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(self.err("\"\\\"\"")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.err("any character"))?;
                    out.push(c);
                    self.pos += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    pub(super) fn take_while(&mut self, ok: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.peek().is_some_and(&ok) {
            self.pos += 1;
        }
        self.s[start..self.pos].iter().collect()
    }

    /// Pieces joined by dashes that do not start an arrow (`a-b`, not `a->b`).
    pub(super) fn dashed(
        &mut self,
        ok: impl Fn(char) -> bool + Copy,
        expecting: &str,
    ) -> R<String> {
        let mut parts = Vec::new();
        loop {
            let piece = self.take_while(ok);
            if piece.is_empty() {
                return Err(self.err(expecting));
            }
            parts.push(piece.trim().to_owned());
            if self.peek() == Some('-') && self.peek_at(1) != Some('>') {
                self.pos += 1;
            } else {
                return Ok(parts.join("-"));
            }
        }
    }

    pub(super) fn field_name(&mut self) -> R<String> {
        if self.peek() == Some('"') {
            return self.quoted();
        }
        self.dashed(ident_char, FIELD_NAME)
    }

    pub(super) fn json_path(&mut self) -> R<Vec<JsonOp>> {
        let mut path = Vec::new();
        loop {
            let double = if self.eat_str("->>") {
                true
            } else if self.eat_str("->") {
                false
            } else {
                return Ok(path);
            };
            let operand = self.json_operand()?;
            path.push(if double {
                JsonOp::DoubleArrow(operand)
            } else {
                JsonOp::Arrow(operand)
            });
        }
    }

    pub(super) fn json_operand(&mut self) -> R<JsonOperand> {
        let save = self.pos;
        let minus = self.eat('-');
        let digits = self.take_while(|c| c.is_ascii_digit());
        let ends = self.starts_with("->")
            || self.starts_with("::")
            || matches!(self.peek(), None | Some('.' | ','));
        if !digits.is_empty() && ends {
            let sign = if minus { '-' } else { '+' };
            return Ok(JsonOperand::Index(format!("{sign}{digits}")));
        }
        self.pos = save;
        if self.peek() == Some('"') {
            return self.quoted().map(JsonOperand::Key);
        }
        self.dashed(
            |c| !"(-:.,>)".contains(c),
            "any non reserved character different from: .,>()",
        )
        .map(JsonOperand::Key)
    }

    pub(super) fn field(&mut self) -> R<Field> {
        self.ws();
        let name = self.field_name()?;
        let json_path = self.json_path()?;
        self.ws();
        Ok(Field { name, json_path })
    }

    /// A cast or aggregate cast: letters, digits, `_` and spaces. PostgREST also admits `$`;
    /// it is refused here because the cast is written unquoted into the SQL and `$$` would
    /// open a dollar-quoted string there.
    pub(super) fn cast(&mut self) -> R<Option<String>> {
        if !self.eat_str("::") {
            return Ok(None);
        }
        let c =
            self.take_while(|c| c.is_alphabetic() || c.is_ascii_digit() || c == '_' || c == ' ');
        if c.trim().is_empty() {
            return Err(self.err("letter or digit"));
        }
        Ok(Some(c.trim().to_owned()))
    }
}

fn ident_char(c: char) -> bool {
    c.is_alphabetic() || c.is_ascii_digit() || c == '_' || c == ' ' || c == '$'
}
