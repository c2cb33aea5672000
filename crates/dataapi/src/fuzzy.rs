//! The fuzzy string set PostgREST suggests names with ("Perhaps you meant 'films' instead of
//! 'film'."), after the `fuzzyset` package it uses: candidates share character trigrams (or
//! bigrams, when no trigram matches) with the query, the best fifty by cosine similarity
//! are rescored by normalized Levenshtein distance, and those scoring at least 0.33 are
//! kept, best first. A candidate equal to the query (ignoring case) is the only match,
//! scoring 1.

use std::collections::HashMap;

const MIN_SCORE: f64 = 0.33;

/// Lowercase, keeping letters, digits, whitespace and commas, enclosed in `-`.
fn padded(s: &str) -> Vec<char> {
    let mut out = vec!['-'];
    out.extend(
        s.to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == ','),
    );
    out.push('-');
    out
}

fn gram_vector(s: &str, size: usize) -> HashMap<String, u32> {
    let chars = padded(s);
    let mut v = HashMap::new();
    if chars.len() >= size {
        for w in chars.windows(size) {
            *v.entry(w.iter().collect::<String>()).or_insert(0) += 1;
        }
    }
    v
}

fn norm(v: &HashMap<String, u32>) -> f64 {
    f64::from(v.values().map(|c| c * c).sum::<u32>()).sqrt()
}

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `1 - distance / longer length`, as `levenshteinNorm`.
#[allow(clippy::cast_precision_loss)]
fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - levenshtein(&a, &b) as f64 / longest as f64
}

/// The candidates that match `query`, best first, with their scores.
pub(crate) fn matches<'c>(candidates: &[&'c str], query: &str) -> Vec<(f64, &'c str)> {
    let key = query.to_lowercase();
    let mut seen = Vec::new();
    let mut unique: Vec<&str> = Vec::new();
    for c in candidates {
        let lower = c.to_lowercase();
        if !seen.contains(&lower) {
            seen.push(lower);
            unique.push(c);
        }
    }
    if let Some(exact) = unique.iter().find(|c| c.to_lowercase() == key) {
        return vec![(1.0, exact)];
    }
    for size in [3, 2] {
        let q = gram_vector(&key, size);
        let qn = norm(&q);
        let mut scored: Vec<(f64, &str)> = unique
            .iter()
            .filter_map(|c| {
                let v = gram_vector(c, size);
                let dot: u32 = q.iter().filter_map(|(g, n)| v.get(g).map(|m| n * m)).sum();
                (dot > 0).then(|| (f64::from(dot) / (qn * norm(&v)), *c))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(50);
        let mut rescored: Vec<(f64, &str)> = scored
            .into_iter()
            .map(|(_, c)| (similarity(&key, &c.to_lowercase()), c))
            .filter(|(s, _)| *s >= MIN_SCORE)
            .collect();
        rescored.sort_by(|a, b| b.0.total_cmp(&a.0));
        if !rescored.is_empty() {
            return rescored;
        }
    }
    Vec::new()
}

/// The closest candidate, if one is close enough.
pub(crate) fn closest<'c>(candidates: &[&'c str], query: &str) -> Option<&'c str> {
    matches(candidates, query).first().map(|(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::{closest, matches};

    #[test]
    fn suggestions_are_the_ones_postgrest_gives() {
        let rels = ["directors", "roles", "actors"];
        assert_eq!(closest(&["films"], "film"), Some("films"));
        assert_eq!(closest(&rels, "role"), Some("roles"));
        assert_eq!(closest(&rels, "noclosealternative"), None);
        assert_eq!(closest(&["films"], "noclosealternative"), None);
        assert_eq!(matches(&rels, "Actors"), [(1.0, "actors")]);
        assert_eq!(
            closest(&["Jurassic Park", "Terminator", "The Matrix"], "percolator"),
            Some("Terminator")
        );
        assert_eq!(closest(&[], "x"), None);
    }
}
