//! Filters (`[not.]op.value`), `and`/`or` trees and `order` terms.

use super::lexer::P;
use super::{
    FTS_OPS, Filter, IsVal, LogicTree, OPERATOR, OpExpr, Operation, OrderTerm, ParseError,
    QUANT_OPS, Quantifier, R, SIMPLE_OPS,
};

impl P {
    pub(super) fn op_expr(&mut self, in_logic: bool) -> R<OpExpr> {
        let negated = self.eat_str("not.");
        let op = self.operation(in_logic)?;
        Ok(OpExpr { negated, op })
    }

    pub(super) fn operation(&mut self, in_logic: bool) -> R<Operation> {
        let start = self.pos;
        if self.eat_str("in.") {
            return Ok(Operation::In(self.list()?));
        }
        if self.eat_str("is.") {
            return self.is_val(in_logic);
        }
        if self.eat_str("isdistinct.") {
            return Ok(Operation::IsDistinct(self.single_val(in_logic)?));
        }
        // As Parsec does, the error reported is the one that got furthest.
        let mut best = self.err(OPERATOR);
        let miss = |p: &mut P, best: &mut ParseError| {
            let e = p.err("delimiter (.)");
            if e.column > best.column {
                *best = e;
            }
            p.pos = start;
        };
        for (name, op) in FTS_OPS {
            if self.eat_str(name) {
                let mut lang = None;
                if self.eat('(') {
                    let l = self.take_while(|c| {
                        c.is_alphabetic() || c.is_ascii_digit() || c == '_' || c == ' '
                    });
                    if l.trim().is_empty() || !self.eat(')') {
                        miss(self, &mut best);
                        continue;
                    }
                    lang = Some(l.trim().to_owned());
                }
                if self.eat('.') {
                    return Ok(Operation::Fts(op, lang, self.single_val(in_logic)?));
                }
                miss(self, &mut best);
            }
        }
        for (name, op) in SIMPLE_OPS {
            if self.eat_str(name) {
                if self.eat('.') {
                    return Ok(Operation::Simple(op, self.single_val(in_logic)?));
                }
                miss(self, &mut best);
            }
        }
        for (name, op) in QUANT_OPS {
            if self.eat_str(name) {
                let quant = if self.eat_str("(any)") {
                    Some(Quantifier::Any)
                } else if self.eat_str("(all)") {
                    Some(Quantifier::All)
                } else {
                    None
                };
                if self.eat('.') {
                    return Ok(Operation::Quant(op, quant, self.single_val(in_logic)?));
                }
                miss(self, &mut best);
            }
        }
        Err(best)
    }

    pub(super) fn is_val(&mut self, in_logic: bool) -> R<Operation> {
        let vals = [
            ("null", IsVal::Null),
            ("not_null", IsVal::NotNull),
            ("true", IsVal::True),
            ("false", IsVal::False),
            ("unknown", IsVal::Unknown),
        ];
        for (word, val) in vals {
            let n = word.len();
            let candidate: String = self.s.iter().skip(self.pos).take(n).collect();
            if candidate.eq_ignore_ascii_case(word) {
                let save = self.pos;
                self.pos += n;
                let ends = if in_logic {
                    self.at_end_of_item()
                } else {
                    self.peek().is_none()
                };
                if ends {
                    return Ok(Operation::Is(val));
                }
                self.pos = save;
            }
        }
        Err(self.err("isVal: (null, not_null, true, false, unknown)"))
    }

    /// Outside a logic tree the value is everything left; inside, a quoted value, a
    /// `{…}` array literal, or the characters up to `,` or `)`.
    pub(super) fn single_val(&mut self, in_logic: bool) -> R<String> {
        if !in_logic {
            let v = self.s[self.pos..].iter().collect();
            self.pos = self.s.len();
            return Ok(v);
        }
        if let Some(v) = self.try_quoted_element() {
            return Ok(v);
        }
        if self.peek() == Some('{') {
            let save = self.pos;
            let inner = self.take_while(|c| c != '}');
            if self.eat('}') && !inner[1..].contains('{') {
                return Ok(format!("{inner}}}"));
            }
            self.pos = save;
        }
        Ok(self.take_while(|c| c != ',' && c != ')'))
    }

    pub(super) fn try_quoted_element(&mut self) -> Option<String> {
        if self.peek() != Some('"') {
            return None;
        }
        let save = self.pos;
        match self.quoted() {
            Ok(v) if self.at_end_of_item() => Some(v),
            _ => {
                self.pos = save;
                None
            }
        }
    }

    pub(super) fn list(&mut self) -> R<Vec<String>> {
        self.ws();
        self.expect('(', "\"(\"")?;
        self.ws();
        let mut items = Vec::new();
        loop {
            let item = match self.try_quoted_element() {
                Some(v) => v,
                None => self.take_while(|c| c != ',' && c != ')'),
            };
            items.push(item);
            if !self.eat(',') {
                break;
            }
        }
        self.ws();
        self.expect(')', "\",\" or \")\"")?;
        self.ws();
        Ok(items)
    }

    pub(super) fn logic_tree(&mut self) -> R<LogicTree> {
        let start = self.pos;
        let as_filter = self.logic_filter();
        let filter_err = match as_filter {
            Ok(f) => return Ok(LogicTree::Stmt(f)),
            Err(e) => e,
        };
        self.pos = start;
        match self.logic_expr() {
            Ok(t) => Ok(t),
            // As Parsec does, report the alternative that got furthest.
            Err(e) => Err(if filter_err.column > e.column {
                filter_err
            } else {
                e
            }),
        }
    }

    pub(super) fn logic_filter(&mut self) -> R<Filter> {
        let field = self.field()?;
        self.expect('.', "delimiter (.)")?;
        let expr = self.op_expr(true)?;
        self.ws();
        Ok(Filter { field, expr })
    }

    pub(super) fn logic_expr(&mut self) -> R<LogicTree> {
        let negated = self.eat_str("not.");
        let and = if self.eat_str("and") {
            true
        } else if self.eat_str("or") {
            false
        } else {
            return Err(self.err("logic operator (and, or)"));
        };
        self.ws();
        self.descend("logic trees")?;
        self.expect('(', "\"(\"")?;
        self.ws();
        let mut children = vec![self.logic_tree()?];
        loop {
            self.ws();
            if !self.eat(',') {
                break;
            }
            self.ws();
            children.push(self.logic_tree()?);
        }
        self.depth -= 1;
        self.expect(')', "\",\" or \")\"")?;
        self.ws();
        Ok(LogicTree::Expr {
            negated,
            and,
            children,
        })
    }

    pub(super) fn order_term(&mut self) -> R<OrderTerm> {
        self.ws();
        let start = self.pos;
        if let Ok(name) = self.field_name()
            && self.peek() == Some('(')
        {
            self.pos += 1;
            let field = self.field()?;
            self.expect(')', "\")\"")?;
            let (desc, nulls_first) = self.order_modifiers()?;
            return Ok(OrderTerm::Embed {
                name,
                field,
                desc,
                nulls_first,
            });
        }
        self.pos = start;
        let field = self.field()?;
        let (desc, nulls_first) = self.order_modifiers()?;
        Ok(OrderTerm::Column {
            field,
            desc,
            nulls_first,
        })
    }

    pub(super) fn order_modifiers(&mut self) -> R<(Option<bool>, Option<bool>)> {
        let mut desc = None;
        let mut nulls = None;
        if self.eat_str(".asc") {
            desc = Some(false);
        } else if self.eat_str(".desc") {
            desc = Some(true);
        }
        if self.eat_str(".nullsfirst") {
            nulls = Some(true);
        } else if self.eat_str(".nullslast") {
            nulls = Some(false);
        }
        self.ws();
        if matches!(self.peek(), None | Some(',')) {
            Ok((desc, nulls))
        } else if self.peek() == Some('.') && nulls.is_none() {
            self.pos += 1;
            Err(self.err(if desc.is_none() {
                "\"asc\", \"desc\", \"nullsfirst\" or \"nullslast\""
            } else {
                "\"nullsfirst\" or \"nullslast\""
            }))
        } else {
            Err(self.err("\",\" or end of input"))
        }
    }
}
