//! [`MemoryDocuments`]: client metadata documents a test serves, by URL.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use quire_oauth::{ClientMetadataDocuments, FetchError, FetchedDocument};

/// The `ClientMetadataDocuments` fake: each URL answers what the test put there (a body or
/// a fetch failure); any other URL is unreachable. Counts the fetches.
#[derive(Debug, Default)]
pub struct MemoryDocuments {
    answers: Mutex<HashMap<String, Result<FetchedDocument, FetchError>>>,
    fetches: Mutex<usize>,
}

impl MemoryDocuments {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `body` at `url` from now on.
    pub fn serve(&self, url: &str, body: &str) {
        let document = FetchedDocument {
            body: body.as_bytes().to_vec(),
            max_age: None,
        };
        self.answers
            .lock()
            .unwrap()
            .insert(url.to_owned(), Ok(document));
    }

    /// Fails every fetch of `url` with `error` from now on.
    pub fn fail(&self, url: &str, error: FetchError) {
        self.answers
            .lock()
            .unwrap()
            .insert(url.to_owned(), Err(error));
    }

    /// How many fetches were made.
    #[must_use]
    pub fn fetches(&self) -> usize {
        *self.fetches.lock().unwrap()
    }
}

#[async_trait]
impl ClientMetadataDocuments for MemoryDocuments {
    async fn fetch(&self, url: &url::Url) -> Result<FetchedDocument, FetchError> {
        *self.fetches.lock().unwrap() += 1;
        self.answers
            .lock()
            .unwrap()
            .get(url.as_str())
            .cloned()
            .unwrap_or(Err(FetchError::Unreachable))
    }
}
