//! Which overload a call means, as PostgREST's `findProc` decides: the functions whose
//! argument names the keys name (all required ones, optional ones at will), else on a
//! `POST` the one whose single unnamed argument can take the body whole; and PostgREST's
//! PGRST202 and PGRST203 when none or several are left.

use std::collections::BTreeSet;

use crate::body::BodyType;
use crate::error::RestError;
use crate::fuzzy;
use crate::schema::{Function, SchemaCache};

/// How the call came: its argument names, and for a `POST` its body's type.
pub(crate) struct Asked<'a> {
    pub schema: &'a str,
    pub name: &'a str,
    pub keys: &'a BTreeSet<String>,
    /// `None` for `GET` and `HEAD`.
    pub post: Option<BodyType>,
}

impl Asked<'_> {
    fn matches(&self, f: &Function) -> bool {
        if f.args.is_empty() {
            return self.keys.is_empty() && !self.post.is_some_and(BodyType::raw_only);
        }
        let required: BTreeSet<&String> = f
            .args
            .iter()
            .filter(|a| a.required)
            .map(|a| &a.name)
            .collect();
        let optional: BTreeSet<&String> = f
            .args
            .iter()
            .filter(|a| !a.required)
            .map(|a| &a.name)
            .collect();
        let rest: BTreeSet<&String> = self.keys.iter().filter(|k| !optional.contains(k)).collect();
        rest == required
    }

    fn takes_the_body(&self, f: &Function) -> bool {
        match (self.post, f.unnamed()) {
            (Some(body), Some(arg)) => body.raw_arguments().contains(&arg.type_name.as_str()),
            _ => false,
        }
    }

    /// The overload meant, among those of the name in the cache's order.
    ///
    /// # Errors
    /// 404 PGRST202 when none is, 300 PGRST203 when several are.
    pub fn find<'f>(&self, cache: &'f SchemaCache) -> Result<&'f Function, RestError> {
        let overloads = cache.functions_in(self.schema, self.name);
        let named: Vec<&Function> = overloads.iter().filter(|f| self.matches(f)).collect();
        let fallback: Vec<&Function> = overloads
            .iter()
            .filter(|f| !self.matches(f) && self.takes_the_body(f))
            .collect();
        match (named.as_slice(), fallback.as_slice()) {
            ([one], _) | ([], [one]) => Ok(one),
            ([], []) => Err(self.not_found(cache, overloads)),
            ([], many) | (many, _) => Err(ambiguous(many)),
        }
    }

    /// PostgREST's PGRST202: message, details and hint.
    fn not_found(&self, cache: &SchemaCache, overloads: &[Function]) -> RestError {
        let func = format!("{}.{}", self.schema, self.name);
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        let joined = keys.join(", ");
        let raw_only = self.post.filter(|b| b.raw_only());
        let in_message = match raw_only {
            Some(_) => String::new(),
            None if keys.is_empty() => " without parameters".to_owned(),
            None => format!("({joined})"),
        };
        let with_params = if keys.is_empty() {
            " without parameters".to_owned()
        } else {
            let plural = if keys.len() > 1 { "s" } else { "" };
            format!(" with parameter{plural} {joined}")
        };
        let searched = match self.post {
            Some(b) if b.raw_only() => format!(" with a single unnamed {} parameter", b.label()),
            Some(BodyType::Json) => {
                format!("{with_params} or with a single unnamed json/jsonb parameter")
            }
            _ => with_params,
        };
        let mut e = RestError::new(
            404,
            "PGRST202",
            format!("Could not find the function {func}{in_message} in the schema cache"),
        )
        .with_details(format!(
            "Searched for the function {func}{searched}, but no matches were found in the \
             schema cache."
        ));
        if raw_only.is_some() {
            return e;
        }
        let hint = if overloads.is_empty() {
            // PostgREST's hint for a name asks more likeness (0.75) than for arguments.
            fuzzy::matches(&cache.function_names_in(self.schema), self.name)
                .into_iter()
                .find(|(score, _)| *score >= 0.75)
                .map(|(_, name)| name.to_owned())
        } else {
            self.closest_arguments(overloads)
        };
        if let Some(hint) = hint {
            e = e.with_hint(format!(
                "Perhaps you meant to call the function {}.{hint}",
                self.schema
            ));
        }
        e
    }

    /// The overload whose argument names are closest to the keys, as `name(a, b)`, as
    /// PostgREST's hint finds it (each list sorted and written `(a, b)`).
    fn closest_arguments(&self, overloads: &[Function]) -> Option<String> {
        let listed = |names: Vec<&str>| {
            let mut names = names;
            names.sort_unstable();
            format!("({})", names.join(", "))
        };
        let lists: Vec<String> = overloads
            .iter()
            .map(|f| listed(f.args.iter().map(|a| a.name.as_str()).collect()))
            .collect();
        let candidates: Vec<&str> = lists.iter().map(String::as_str).collect();
        let asked = listed(self.keys.iter().map(String::as_str).collect());
        fuzzy::closest(&candidates, &asked).map(|l| format!("{}{l}", self.name))
    }
}

/// PostgREST's PGRST203, the candidates in the cache's order.
fn ambiguous(many: &[&Function]) -> RestError {
    let described: Vec<String> = many
        .iter()
        .map(|f| {
            let args: Vec<String> = f
                .args
                .iter()
                .map(|a| format!("{} => {}", a.name, a.type_name))
                .collect();
            format!("{}.{}({})", f.schema, f.name, args.join(", "))
        })
        .collect();
    RestError::new(
        300,
        "PGRST203",
        format!(
            "Could not choose the best candidate function between: {}",
            described.join(", ")
        ),
    )
    .with_hint(
        "Try renaming the parameters or the function itself in the database so function \
         overloading can be resolved",
    )
}
