//! Decoding and hashing a request's files, on every core when there is enough to do.

use base64::Engine;

use crate::model::FileInput;
use crate::validate::{FilesError, Invalid, quoted, sha256_hex};

/// A file's bytes and their SHA-256.
pub(crate) struct Decoded {
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) sha256: String,
}

/// Below this much content, one thread decodes everything: starting others costs more.
const PARALLEL_DECODE_BYTES: usize = 1 << 20;

/// A file to decode, with the room for its bytes.
type Work = (FileInput, Vec<u8>);

/// Decodes and hashes every file, in order, splitting the work across the cores when there
/// is enough of it. Each file's text is dropped as soon as it is decoded.
///
/// The room for every decoded file is reserved here, on the calling thread, before any
/// helper starts: what a helper thread allocates stays with its own allocator arena after
/// the request (measured: 174 MiB peak after five 27 MiB publishes, against 82 MiB with one
/// arena), while memory reserved here is handed back to the one the request came from.
pub(crate) fn decode_all(inputs: Vec<FileInput>) -> Vec<Result<Decoded, FilesError>> {
    let content: usize = inputs.iter().map(|f| f.content.len()).sum();
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let inputs: Vec<Work> = inputs
        .into_iter()
        .map(|f| {
            let room = if f.encoding.as_deref() == Some("base64") {
                base64::decoded_len_estimate(f.content.len())
            } else {
                0
            };
            (f, Vec::with_capacity(room))
        })
        .collect();
    if threads < 2 || content < PARALLEL_DECODE_BYTES {
        return inputs.into_iter().map(decode).collect();
    }
    let per_thread = inputs.len().div_ceil(threads);
    let mut chunks = Vec::with_capacity(threads);
    let mut rest = inputs;
    while rest.len() > per_thread {
        let tail = rest.split_off(per_thread);
        chunks.push(rest);
        rest = tail;
    }
    chunks.push(rest);
    std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || chunk.into_iter().map(decode).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

fn decode((f, mut room): Work) -> Result<Decoded, FilesError> {
    let bytes = match f.encoding.as_deref().unwrap_or("utf8") {
        "utf8" => f.content.into_bytes(),
        "base64" => {
            base64::engine::general_purpose::STANDARD
                .decode_vec(f.content.as_bytes(), &mut room)
                .map_err(|_| {
                    FilesError::Invalid(Invalid(format!(
                        "content of {} is not valid base64",
                        quoted(&f.path)
                    )))
                })?;
            room
        }
        other => {
            return Err(FilesError::Invalid(Invalid(format!(
                "encoding of {} must be utf8 or base64, not {}",
                quoted(&f.path),
                quoted(other)
            ))));
        }
    };
    Ok(Decoded {
        sha256: sha256_hex(&bytes),
        path: f.path,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, content: String, encoding: &str) -> FileInput {
        FileInput {
            path: path.into(),
            content,
            encoding: Some(encoding.into()),
        }
    }

    #[test]
    fn a_large_batch_is_decoded_in_order_and_its_first_problem_found() {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        // 64 files of 32 KiB: 2 MiB of base64, past the threshold for several threads.
        let inputs: Vec<FileInput> = (0..64u8)
            .map(|n| input(&format!("f{n}"), b64(&[n; 32 * 1024]), "base64"))
            .collect();
        let decoded: Vec<Decoded> = decode_all(inputs.clone())
            .into_iter()
            .map(|d| d.unwrap_or_else(|_| panic!("valid base64")))
            .collect();
        assert_eq!(decoded.len(), 64);
        for (n, d) in (0..64u8).zip(&decoded) {
            assert_eq!(d.path, format!("f{n}"));
            assert_eq!(d.bytes, vec![n; 32 * 1024]);
            assert_eq!(d.sha256, sha256_hex(&d.bytes));
        }

        let mut broken = inputs;
        broken[40].content = "not base64!".into();
        broken[50].encoding = Some("rot13".into());
        let results = decode_all(broken);
        let first = results.into_iter().find_map(Result::err);
        assert!(
            matches!(&first, Some(FilesError::Invalid(Invalid(m))) if m.contains("f40")),
            "{first:?}"
        );
    }
}
