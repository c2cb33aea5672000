//! The request headers that shape a plan: `Prefer` (RFC 7240, as PostgREST reads it: comma
//! separated, the first value of each preference wins), `Accept` and `Content-Type`.

use crate::error::RestError;

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
}

const KNOWN: [&str; 13] = [
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
                let tolerated = KNOWN.contains(&other)
                    || other == "tx=rollback"
                    || other.starts_with("timezone=");
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
    pub fn content_type(self) -> &'static str {
        match self {
            Media::Json => "application/json; charset=utf-8",
            Media::JsonStripped => "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8",
            Media::Singular { strip: false } => "application/vnd.pgrst.object+json; charset=utf-8",
            Media::Singular { strip: true } => {
                "application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8"
            }
            Media::Csv => "text/csv; charset=utf-8",
        }
    }
}

/// Picks the first acceptable media type, by `q` then by order.
///
/// # Errors
/// 406 PGRST107 when none is available (GeoJSON, plans and XML are not served).
pub(crate) fn accept(header: Option<&str>) -> Result<Media, RestError> {
    let Some(header) = header.filter(|h| !h.trim().is_empty()) else {
        return Ok(Media::Json);
    };
    let mut offered: Vec<(f32, usize, String, bool)> = Vec::new();
    for (i, item) in header.split(',').enumerate() {
        let mut parts = item.split(';').map(str::trim);
        let mime = parts.next().unwrap_or("").to_ascii_lowercase();
        let mut q = 1.0_f32;
        let mut strip = false;
        for param in parts {
            if let Some(v) = param.strip_prefix("q=") {
                q = v.trim().parse().unwrap_or(1.0);
            } else if param.eq_ignore_ascii_case("nulls=stripped") {
                strip = true;
            }
        }
        if !mime.is_empty() {
            offered.push((q, i, mime, strip));
        }
    }
    offered.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, mime, strip) in &offered {
        let media = match mime.as_str() {
            "application/json" | "*/*" | "application/*" => Some(Media::Json),
            "application/vnd.pgrst.object+json" | "application/vnd.pgrst.object" => {
                Some(Media::Singular { strip: *strip })
            }
            "application/vnd.pgrst.array+json" | "application/vnd.pgrst.array" => Some(if *strip {
                Media::JsonStripped
            } else {
                Media::Json
            }),
            "text/csv" => Some(Media::Csv),
            _ => None,
        };
        if let Some(m) = media {
            return Ok(m);
        }
    }
    let names: Vec<&str> = offered.iter().map(|o| o.2.as_str()).collect();
    Err(RestError::new(
        406,
        "PGRST107",
        format!(
            "None of these media types are available: {}",
            names.join(", ")
        ),
    ))
}
