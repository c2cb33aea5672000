//! `select=` items: columns with aliases and casts, `*`, and aggregates (`count()`,
//! `qty.sum()`, with aliases and casts); embeddings are read in `embed`.

use super::lexer::P;
use super::{AggFunc, Aggregate, R, SelectItem};

impl P {
    pub(super) fn forest(&mut self) -> R<Vec<SelectItem>> {
        let mut items = Vec::new();
        self.ws();
        if self.at_end_of_item() {
            return Ok(items);
        }
        loop {
            items.push(self.select_item()?);
            self.ws();
            if !self.eat(',') {
                return Ok(items);
            }
            self.ws();
        }
    }

    pub(super) fn select_item(&mut self) -> R<SelectItem> {
        let start = self.pos;
        if let Some(item) = self.try_embed()? {
            return Ok(item);
        }
        self.pos = start;
        if self.eat('*') {
            self.ws();
            return if self.at_end_of_item() {
                Ok(SelectItem::Star)
            } else {
                Err(self.err("\")\", \",\" or end of input"))
            };
        }
        let alias = self.alias();
        if self.eat_str("count()") {
            let cast = self.cast()?;
            return self.end_of_field(SelectItem::Aggregate(Aggregate {
                alias,
                func: AggFunc::Count,
                field: None,
                cast,
            }));
        }
        let field = self.field()?;
        let cast = self.cast()?;
        let before_agg = self.pos;
        if self.eat('.') {
            let func = [
                AggFunc::Sum,
                AggFunc::Avg,
                AggFunc::Count,
                AggFunc::Max,
                AggFunc::Min,
            ]
            .into_iter()
            .find(|f| self.eat_str(&format!("{}()", f.name())));
            if let Some(func) = func {
                let agg_cast = self.cast()?;
                return self.end_of_field(SelectItem::Aggregate(Aggregate {
                    alias,
                    func,
                    field: Some((field, cast)),
                    cast: agg_cast,
                }));
            }
            self.pos = before_agg;
        }
        self.end_of_field(SelectItem::Column { alias, field, cast })
    }

    pub(super) fn end_of_field(&mut self, item: SelectItem) -> R<SelectItem> {
        self.ws();
        if self.at_end_of_item() {
            Ok(item)
        } else {
            Err(self.err("\"->>\", \"->\", \"::\", \".\", \")\", \",\" or end of input"))
        }
    }

    /// `alias:`, not to be confused with a cast's `::`.
    pub(super) fn alias(&mut self) -> Option<String> {
        let save = self.pos;
        self.ws();
        if let Ok(name) = self.field_name()
            && self.peek() == Some(':')
            && self.peek_at(1) != Some(':')
        {
            self.pos += 1;
            return Some(name);
        }
        self.pos = save;
        None
    }
}
