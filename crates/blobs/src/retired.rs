//! The marks of retired objects (`BundleStore::retire`): one empty object per mark,
//! `retired/{unix seconds, 12 digits}-{page}-{sha256}`, so that one listing of a folder that
//! holds only marks gives the janitor every page, object and time, with no read of any.

use quire_kernel::PageId;
use quire_pages::Retired;
use time::OffsetDateTime;

/// The mark's name; times before 1970 are written as 0.
pub(crate) fn mark_name(page: PageId, sha256: &str, at: OffsetDateTime) -> String {
    format!("{:012}-{page}-{sha256}", at.unix_timestamp().max(0))
}

/// The mark a name stands for; `None` for a name no mark has.
pub(crate) fn parse_mark(name: &str) -> Option<Retired> {
    let (secs, rest) = name.split_once('-')?;
    if secs.len() != 12 || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let page = rest.get(..36)?.parse().ok()?;
    let sha256 = rest.get(36..)?.strip_prefix('-')?;
    if sha256.is_empty() || sha256.contains(['/', '#']) {
        return None;
    }
    Some(Retired {
        page,
        sha256: sha256.to_owned(),
        at: OffsetDateTime::from_unix_timestamp(secs.parse().ok()?).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_names_its_page_object_and_time() {
        let page = PageId::new();
        let at = OffsetDateTime::from_unix_timestamp(1_767_225_600).unwrap();
        let name = mark_name(page, "ab12", at);
        assert_eq!(name, format!("001767225600-{page}-ab12"));
        assert_eq!(
            parse_mark(&name),
            Some(Retired {
                page,
                sha256: "ab12".into(),
                at
            })
        );
        for other in [
            "",
            "ab12",
            "1767225600-x-ab12",
            &format!("001767225600-{page}-"),
            &format!("001767225600-{page}"),
            &format!("00176722560x-{page}-ab12"),
            &format!("001767225600-{page}-ab12#1"),
        ] {
            assert_eq!(parse_mark(other), None, "{other}");
        }
    }
}
