//! `Content-Disposition` for an object's file name (RFC 6266): a plain-ASCII `filename`
//! for old clients and the exact name as RFC 8187 `filename*`. Nothing of the name can
//! end the header or add a parameter: quotes, backslashes, control and non-ASCII
//! characters never reach the quoted form, and the extended form is percent-encoded.

/// `attachment` with the file name.
#[must_use]
pub fn attachment(filename: &str) -> String {
    with_type("attachment", filename)
}

/// `inline` with the file name.
#[must_use]
pub fn inline(filename: &str) -> String {
    with_type("inline", filename)
}

fn with_type(kind: &str, filename: &str) -> String {
    let fallback: String = filename
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::with_capacity(filename.len() * 3);
    for b in filename.bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{kind}; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_break_out_of_the_header() {
        assert_eq!(
            attachment("report.pdf"),
            "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"
        );
        let quoted = attachment("a\"; filename=evil.html");
        assert!(quoted.starts_with("attachment; filename=\"a_; filename=evil.html\";"));
        assert!(quoted.ends_with("filename*=UTF-8''a%22%3B%20filename%3Devil.html"));
        let crlf = attachment("x\r\nSet-Cookie: a=b");
        assert!(!crlf.contains('\r') && !crlf.contains('\n'));
        assert!(attachment("résumé.pdf").ends_with("UTF-8''r%C3%A9sum%C3%A9.pdf"));
        assert!(attachment("résumé.pdf").contains("filename=\"r_sum_.pdf\""));
        assert!(!attachment("nul\0").contains('\0'));
    }
}
