//! Embedded resources in `select` (`pRelationSelect`, `pSpreadRelationSelect`): an optional
//! alias, the resource's name, up to two `!` parameters (a join type, `inner` or `left`, or a
//! hint naming the relationship), then the resource's own `select` in parentheses, nested
//! at most [`MAX_DEPTH`](super::MAX_DEPTH) deep.

use super::lexer::P;
use super::{Embed, R, SelectItem};

impl P {
    /// `...rel(…)` or `[alias:]rel[!hint][!inner](…)`; `None` (input untouched) otherwise.
    pub(super) fn try_embed(&mut self) -> R<Option<SelectItem>> {
        let start = self.pos;
        self.ws();
        let spread = self.eat_str("...");
        let alias = if spread { None } else { self.alias() };
        let Ok(name) = self.field_name() else {
            self.pos = start;
            return Ok(None);
        };
        let mut hint = None;
        let mut inner = None;
        for _ in 0..2 {
            if !self.eat('!') {
                break;
            }
            // As Parsec tries them: `left` and `inner` win over a hint that starts so.
            if self.eat_str("left") {
                inner = inner.or(Some(false));
            } else if self.eat_str("inner") {
                inner = inner.or(Some(true));
            } else if let Ok(h) = self.field_name() {
                hint = hint.or(Some(h));
            } else {
                self.pos = start;
                return Ok(None);
            }
        }
        if (!spread && name == "count") || self.peek() != Some('(') {
            self.pos = start;
            return Ok(None);
        }
        self.descend("resources")?;
        self.pos += 1;
        let select = self.forest()?;
        self.depth -= 1;
        self.expect(')', "\")\"")?;
        self.ws();
        Ok(Some(SelectItem::Embed(Embed {
            name,
            alias,
            hint,
            inner: inner == Some(true),
            spread,
            select,
        })))
    }
}
