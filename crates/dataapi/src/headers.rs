//! The request headers that shape a plan: `Prefer` (RFC 7240, as PostgREST reads it: comma
//! separated, the first value of each preference wins), `Accept` and `Content-Type`.

use crate::error::RestError;
use crate::explain::Explain;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    Full,
    Minimal,
    HeadersOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    Merge,
    Ignore,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Prefer {
    pub representation: Option<Representation>,
    /// `exact`, `planned` or `estimated`: all counted exactly here.
    pub count: Option<&'static str>,
    pub resolution: Option<Resolution>,
    /// `missing=default` (true) or `missing=null` (false).
    pub missing_default: Option<bool>,
    pub strict: Option<bool>,
    /// `max-affected=n`: with `handling=strict`, a `PATCH`, `DELETE` or call that touches
    /// more rows is refused and rolled back.
    pub max_affected: Option<i64>,
    /// `tx=rollback` (true) or `tx=commit` (false): honoured only when the database's
    /// settings allow it (PostgREST's `db-tx-end = commit-allow-override`).
    pub rollback: Option<bool>,
}

const KNOWN: [&str; 14] = [
    "return=representation",
    "return=minimal",
    "return=headers-only",
    "count=exact",
    "count=planned",
    "count=estimated",
    "resolution=merge-duplicates",
    "resolution=ignore-duplicates",
    "missing=default",
    "missing=null",
    "handling=strict",
    "handling=lenient",
    "tx=commit",
    "tx=rollback",
];

/// # Errors
/// 400 PGRST122 when `handling=strict` comes with preferences PostgREST does not know.
pub(crate) fn prefer(header: Option<&str>) -> Result<Prefer, RestError> {
    let mut p = Prefer::default();
    let mut invalid = Vec::new();
    let mut seen_max_affected = false;
    for pref in header.unwrap_or("").split(',').map(str::trim) {
        if pref.is_empty() {
            continue;
        }
        match pref {
            "return=representation" => set(&mut p.representation, Representation::Full),
            "return=minimal" => set(&mut p.representation, Representation::Minimal),
            "return=headers-only" => set(&mut p.representation, Representation::HeadersOnly),
            "count=exact" => set(&mut p.count, "count=exact"),
            "count=planned" => set(&mut p.count, "count=planned"),
            "count=estimated" => set(&mut p.count, "count=estimated"),
            "resolution=merge-duplicates" => set(&mut p.resolution, Resolution::Merge),
            "resolution=ignore-duplicates" => set(&mut p.resolution, Resolution::Ignore),
            "missing=default" => set(&mut p.missing_default, true),
            "missing=null" => set(&mut p.missing_default, false),
            "handling=strict" => set(&mut p.strict, true),
            "handling=lenient" => set(&mut p.strict, false),
            "tx=rollback" => set(&mut p.rollback, true),
            "tx=commit" => set(&mut p.rollback, false),
            other => {
                if let Some(n) = other.strip_prefix("max-affected=") {
                    // As PostgREST: the first one counts, and a number that does not read
                    // is none at all.
                    if p.max_affected.is_none() && !seen_max_affected {
                        p.max_affected = n.parse().ok();
                    }
                    seen_max_affected = true;
                    continue;
                }
                let tolerated = KNOWN.contains(&other) || other.starts_with("timezone=");
                if !tolerated {
                    invalid.push(other.to_owned());
                }
            }
        }
    }
    if p.strict == Some(true) && !invalid.is_empty() {
        return Err(RestError::new(
            400,
            "PGRST122",
            "Invalid preferences given with handling=strict",
        )
        .with_details(format!("Invalid preferences: {}", invalid.join(", "))));
    }
    Ok(p)
}

fn set<T>(slot: &mut Option<T>, v: T) {
    if slot.is_none() {
        *slot = Some(v);
    }
}

/// The answer's media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    /// `application/vnd.pgrst.array+json;nulls=stripped`.
    JsonStripped,
    /// `application/vnd.pgrst.object+json`, with `nulls=stripped` or not.
    Singular {
        strip: bool,
    },
    /// `text/csv`: a header line, then each row as PostgreSQL writes a record.
    Csv,
}

impl Media {
    /// The media type as PostgREST names it (`for=` in a plan's, too).
    pub fn mime(self) -> &'static str {
        match self {
            Media::Json => "application/json",
            Media::JsonStripped => "application/vnd.pgrst.array+json;nulls=stripped",
            Media::Singular { strip: false } => "application/vnd.pgrst.object+json",
            Media::Singular { strip: true } => "application/vnd.pgrst.object+json;nulls=stripped",
            Media::Csv => "text/csv",
        }
    }

    pub fn content_type(self) -> String {
        format!("{}; charset=utf-8", self.mime())
    }

    /// A media type this subset answers, `strip` its `nulls=stripped`.
    fn of(mime: &str, strip: bool) -> Option<Media> {
        match mime {
            "application/json" | "*/*" | "application/*" => Some(Media::Json),
            "application/vnd.pgrst.object+json" | "application/vnd.pgrst.object" => {
                Some(Media::Singular { strip })
            }
            "application/vnd.pgrst.array+json" | "application/vnd.pgrst.array" => Some(if strip {
                Media::JsonStripped
            } else {
                Media::Json
            }),
            "text/csv" => Some(Media::Csv),
            _ => None,
        }
    }
}

/// `;`-separated pieces of a media range, a quoted value kept whole (`for="a;b"`).
fn pieces(item: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in item.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                out.push(item[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(item[start..].trim());
    out
}

/// One media range of `Accept`: its type, lowercased, and its parameters (names
/// lowercased, values unquoted).
struct Offered<'a> {
    q: f32,
    mime: String,
    params: Vec<(String, &'a str)>,
}

impl Offered<'_> {
    fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    fn strip(&self) -> bool {
        self.param("nulls") == Some("stripped")
    }

    /// A plan's type (`application/vnd.pgrst.plan`, `+text`, `+json`): the plan, when its
    /// `for=` is a media type served, and its name as PostgREST writes it in a refusal.
    fn plan(&self) -> Option<(Option<Explain>, String)> {
        let subtype = self.mime.strip_prefix("application/")?;
        if !matches!(
            subtype,
            "vnd.pgrst.plan" | "vnd.pgrst.plan+text" | "vnd.pgrst.plan+json"
        ) {
            return None;
        }
        let of = match self.param("for") {
            None => Some(Media::Json),
            Some(f) => {
                let parts = pieces(f);
                let strip = parts[1..]
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case("nulls=stripped"));
                Media::of(&parts[0].to_ascii_lowercase(), strip)
            }
        };
        let explain = of.map(|of| Explain::new(subtype, of, self.param("options")));
        let name = explain.map_or_else(
            || {
                let format = if subtype.ends_with("+json") {
                    "json"
                } else {
                    "text"
                };
                let of = self.param("for").unwrap_or("application/json");
                format!("application/vnd.pgrst.plan+{format}; for=\"{of}\"")
            },
            |e| e.media_type(),
        );
        Some((explain, name))
    }
}

/// Picks the first acceptable media type, by `q` then by order; a plan's only when
/// `explain` is on (the database's setting), else it is one more type not served.
///
/// # Errors
/// 406 PGRST107 when none is available (GeoJSON, XML, and plans with EXPLAIN off).
pub(crate) fn accept(
    header: Option<&str>,
    explain: bool,
) -> Result<(Media, Option<Explain>), RestError> {
    let Some(header) = header.filter(|h| !h.trim().is_empty()) else {
        return Ok((Media::Json, None));
    };
    let mut offered: Vec<(usize, Offered<'_>)> = Vec::new();
    for (i, item) in header.split(',').enumerate() {
        let parts = pieces(item);
        let mime = parts[0].to_ascii_lowercase();
        if mime.is_empty() {
            continue;
        }
        let mut o = Offered {
            q: 1.0,
            mime,
            params: Vec::new(),
        };
        for param in &parts[1..] {
            let Some((k, v)) = param.split_once('=') else {
                continue;
            };
            let k = k.trim().to_ascii_lowercase();
            let v = v.trim().trim_matches('"');
            if k == "q" {
                o.q = v.parse().unwrap_or(1.0);
            }
            o.params.push((k, v));
        }
        offered.push((i, o));
    }
    offered.sort_by(|(ia, a), (ib, b)| b.q.total_cmp(&a.q).then(ia.cmp(ib)));
    for (_, o) in &offered {
        if let Some((plan, _)) = o.plan() {
            if let Some(plan) = plan.filter(|_| explain) {
                return Ok((plan.of, Some(plan)));
            }
            continue;
        }
        if let Some(m) = Media::of(&o.mime, o.strip()) {
            return Ok((m, None));
        }
    }
    let names: Vec<String> = offered
        .iter()
        .map(|(_, o)| o.plan().map_or_else(|| o.mime.clone(), |(_, name)| name))
        .collect();
    Err(RestError::new(
        406,
        "PGRST107",
        format!(
            "None of these media types are available: {}",
            names.join(", ")
        ),
    ))
}
