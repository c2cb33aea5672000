//! A page request's files, read out of its body. Text stays where it lies in the body, and
//! base64 is decoded in place, in the body's own memory (decoded bytes are never longer than
//! their base64), on every core for a large batch, on the blocking pool for a long body.
//! Every file is then a slice of the one body: a publish holds its files once, and decodes
//! them once.

use std::ops::Range;

use actix_web::web;
use bytes::Bytes;
use quire_kernel::parallel::map_in_order;
use quire_pages::{FileInput, Unreadable};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::schema;
use quire_edge::ApiError;
use quire_edge::body::WritableBody;
use quire_edge::json::{RequestBody, SharedText, parse_sharing};

/// One file of a bundle, as sent.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::file_body)]
pub struct FileBody {
    /// A safe relative path.
    #[schema(schema_with = schema::path)]
    pub path: String,
    /// The file's body, as `encoding` says.
    #[schema(value_type = String)]
    pub content: SharedText,
    /// Default `utf8`.
    #[serde(default)]
    #[schema(schema_with = schema::encoding)]
    pub encoding: Option<String>,
}

/// How one file's bytes are read from what was sent.
enum Reading {
    /// `utf8` (the default): the text is the file.
    AsSent(SharedText),
    /// Base64 lying in the body at this range: decoded there.
    InPlace(Range<usize>),
    /// Base64 that had escapes (a JSON encoder may write `/` as `\/`), so is a copy.
    Copied(Bytes),
    Unknown(String),
}

/// Below this much base64 in a batch, one thread decodes it all: starting others costs more.
const PARALLEL_DECODE_BYTES: usize = 1 << 20;

/// A body at least this long is parsed and its files read on the blocking pool: its long
/// strings are checked and its base64 decoded on every core (the skeleton's and
/// [`PARALLEL_DECODE_BYTES`]' threshold), which would hold the async worker, and every
/// request it serves, for milliseconds. A shorter one is read where it is, where the
/// hand-over would cost more than the work.
const LONG_BODY_BYTES: usize = 1 << 20;

/// `body` parsed as a `T` (by [`parse_sharing`]), and the files `files_of` takes out of it
/// read ([`read_files`]); on the blocking pool for a long body.
///
/// # Errors
/// As [`parse_sharing`] and [`read_files`]; `internal_error` if the blocking pool cannot
/// run the work.
pub async fn parse_with_files<T: RequestBody + Send + 'static>(
    body: WritableBody,
    files_of: fn(&mut T) -> Vec<FileBody>,
) -> Result<(T, Vec<FileInput>), ApiError> {
    let long = body.bytes().len() >= LONG_BODY_BYTES;
    let read = move || {
        let mut sent: T = parse_sharing(body.bytes())?;
        let files = read_files(files_of(&mut sent), body)?;
        Ok((sent, files))
    };
    if !long {
        return read();
    }
    web::block(read).await.map_err(|e| ApiError::internal(&e))?
}

/// The files `files`, parsed from `body` by [`quire_edge::json::parse_sharing`], with their
/// bytes read: base64 decoded in place, and every file's bytes a slice of the body where it
/// lies there. Content that cannot be read goes to the domain as [`Unreadable`], which
/// reports it in request order with the batch's other problems.
///
/// # Errors
/// `internal_error` if a mapped body cannot be made read-only, or if the files do not lie in
/// the body in order (which parsing rules out).
pub fn read_files(
    files: Vec<FileBody>,
    mut body: WritableBody,
) -> Result<Vec<FileInput>, ApiError> {
    let readings: Vec<(String, Reading)> = files
        .into_iter()
        .map(|f| {
            let reading = match (f.encoding.as_deref().unwrap_or("utf8"), f.content) {
                ("utf8", text) => Reading::AsSent(text),
                ("base64", SharedText::InBody(range)) => Reading::InPlace(range),
                ("base64", SharedText::Copied(text)) => Reading::Copied(text),
                (_, _) => Reading::Unknown(f.encoding.unwrap_or_default()),
            };
            (f.path, reading)
        })
        .collect();
    let spans: Vec<Range<usize>> = readings
        .iter()
        .filter_map(|(_, r)| match r {
            Reading::InPlace(range) => Some(range.clone()),
            _ => None,
        })
        .collect();
    let mut decoded = decode_in_place(body.bytes_mut(), &spans)?.into_iter();
    let body = body.freeze()?;
    Ok(readings
        .into_iter()
        .map(|(path, reading)| {
            let content = match reading {
                Reading::AsSent(text) => Ok(text.bytes_in(&body)),
                Reading::InPlace(range) => match decoded.next().flatten() {
                    Some(len) => Ok(body.slice(range.start..range.start + len)),
                    None => Err(Unreadable::BadBase64),
                },
                Reading::Copied(text) => base64_simd::STANDARD
                    .decode_to_vec(&text)
                    .map(Bytes::from)
                    .map_err(|_| Unreadable::BadBase64),
                Reading::Unknown(name) => Err(Unreadable::UnknownEncoding(name)),
            };
            FileInput { path, content }
        })
        .collect())
}

/// Decodes the base64 at each of `spans` of `body` in place, each span's bytes moved to its
/// start; returns each one's decoded length, or `None` for one that is not base64 (and is
/// then partly overwritten). Split across the cores when there is enough to do.
///
/// # Errors
/// `internal_error` if the spans are not in order, apart, and inside the body.
fn decode_in_place(
    body: &mut [u8],
    spans: &[Range<usize>],
) -> Result<Vec<Option<usize>>, ApiError> {
    let mut pieces: Vec<&mut [u8]> = Vec::with_capacity(spans.len());
    let mut rest = body;
    let mut at = 0;
    for span in spans {
        let (Some(gap), true) = (span.start.checked_sub(at), span.end <= at + rest.len()) else {
            return Err(ApiError::internal(&"file content out of place in the body"));
        };
        let tail = std::mem::take(&mut rest).split_at_mut(gap).1;
        let (piece, tail) = tail.split_at_mut(span.len());
        pieces.push(piece);
        rest = tail;
        at = span.end;
    }
    let base64: usize = spans.iter().map(ExactSizeIterator::len).sum();
    Ok(map_in_order(
        pieces,
        base64 >= PARALLEL_DECODE_BYTES,
        decode,
    ))
}

fn decode(piece: &mut [u8]) -> Option<usize> {
    base64_simd::STANDARD
        .decode_inplace(piece)
        .ok()
        .map(|decoded| decoded.len())
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use serde::Deserialize;

    use super::*;
    use quire_edge::json::{RequestBody, parse_sharing};

    #[derive(Debug, Deserialize)]
    struct Batch {
        files: Vec<FileBody>,
    }
    impl RequestBody for Batch {}

    fn b64(bytes: &[u8]) -> String {
        base64_simd::STANDARD.encode_to_string(bytes)
    }

    /// `files` sent in one body, read as a route reads them; also returns where the body's
    /// bytes lie, to tell slices of it from copies.
    fn sent(files: &[String]) -> (Vec<FileInput>, Range<usize>) {
        let text = format!(r#"{{"files":[{}]}}"#, files.join(","));
        let body = WritableBody::from(BytesMut::from(text.as_bytes()));
        let batch: Batch = parse_sharing(body.bytes()).unwrap();
        let place = body.bytes().as_ptr_range();
        let inputs = read_files(batch.files, body).unwrap();
        (inputs, place.start as usize..place.end as usize)
    }

    fn file(path: &str, content: &str, encoding: &str) -> String {
        format!(r#"{{"path":"{path}","content":"{content}","encoding":"{encoding}"}}"#)
    }

    fn in_body(input: &FileInput, body: &Range<usize>) -> bool {
        let at = input.content.as_ref().unwrap().as_ptr() as usize;
        body.contains(&at)
    }

    #[test]
    fn each_way_of_sending_a_file_reads_back_its_bytes() {
        let (inputs, body) = sent(&[
            file("a.bin", &b64(&[0, 1, 2, 250, 251]), "base64"),
            r#"{"path":"a.txt","content":"plain"}"#.to_owned(),
            file("b.txt", "tab\\there", "utf8"),
            file("c.bin", "\\/\\/\\/\\/", "base64"),
            file("bad.bin", "AAAA*AAA", "base64"),
            file("odd.bin", "AAAA", "hex"),
            file("last.bin", &b64(b"the end"), "base64"),
        ]);
        let content = |n: usize| inputs[n].content.clone();
        assert_eq!(content(0).unwrap().as_ref(), [0, 1, 2, 250, 251]);
        assert_eq!(content(1).unwrap(), "plain");
        assert_eq!(content(2).unwrap(), "tab\there");
        assert_eq!(content(3).unwrap().as_ref(), [0xff, 0xff, 0xff]);
        assert_eq!(content(4), Err(Unreadable::BadBase64));
        assert_eq!(content(5), Err(Unreadable::UnknownEncoding("hex".into())));
        assert_eq!(content(6).unwrap(), "the end");
        let paths: Vec<&str> = inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "a.bin", "a.txt", "b.txt", "c.bin", "bad.bin", "odd.bin", "last.bin"
            ]
        );
        // Decoded base64 and unescaped text are the body's own bytes; escaped text is a copy.
        for (n, shared) in [(0, true), (1, true), (2, false), (3, false), (6, true)] {
            assert_eq!(in_body(&inputs[n], &body), shared, "{}", inputs[n].path);
        }
    }

    #[test]
    fn a_long_batch_is_decoded_on_every_core_in_order() {
        // 64 files of 32 KiB: 2.7 MiB of base64, past the threshold for several threads.
        let originals: Vec<Vec<u8>> = (0..64u8)
            .map(|n| (0..32 * 1024u32).map(|i| (i % 251) as u8 ^ n).collect())
            .collect();
        let mut files: Vec<String> = originals
            .iter()
            .enumerate()
            .map(|(n, bytes)| file(&format!("f{n}"), &b64(bytes), "base64"))
            .collect();
        files[40] = file("f40", "not base64!", "base64");
        let (inputs, body) = sent(&files);
        for (n, (input, original)) in inputs.iter().zip(&originals).enumerate() {
            assert_eq!(input.path, format!("f{n}"));
            if n == 40 {
                assert_eq!(input.content, Err(Unreadable::BadBase64));
            } else {
                assert_eq!(
                    input.content.as_ref().unwrap().as_ref(),
                    original.as_slice()
                );
                assert!(in_body(input, &body));
            }
        }
    }

    #[test]
    fn spans_out_of_place_are_refused_not_decoded() {
        let mut body = b"QUJD QUJD".to_vec();
        assert_eq!(
            decode_in_place(&mut body, &[0..4, 5..9]).unwrap(),
            [Some(3), Some(3)]
        );
        assert_eq!(&body[..3], b"ABC");
        let out_of_place: [&[Range<usize>]; 3] = [&[5..9, 0..4], &[0..4, 2..6], &[4..5, 5..10]];
        for spans in out_of_place {
            let mut body = b"QUJD QUJD".to_vec();
            let refused = decode_in_place(&mut body, spans).unwrap_err();
            assert_eq!(refused.code(), "internal_error");
            assert_eq!(body, b"QUJD QUJD", "{spans:?}");
        }
    }
}
