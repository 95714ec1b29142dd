//! Multipart uploads, as the JSON door reads them for every route that takes a file (a
//! record's file, a `.qdpx` or a backup to import): a field streamed to a file in the data
//! folder within a limit, and multipart errors in the contract's shapes.

use std::path::Path;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::app::records::intake::HEAD_BYTES;
use crate::doors::http::extract::body_failed;
use crate::error::{Error, Result, ValidationIssue};

/// Streams a field to `path`, refusing it past `limit` bytes; returns its first bytes.
pub async fn stream_to_file(mut field: multer::Field<'_>, path: &Path, limit: u64) -> Result<Vec<u8>> {
    let mut out = tokio::fs::File::create(path)
        .await
        .map_err(|error| anyhow::anyhow!("cannot create {}: {error}", path.display()))?;
    let mut head = Vec::new();
    let mut written: u64 = 0;
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        written += chunk.len() as u64;
        if written > limit {
            return Err(too_large(limit));
        }
        if head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(chunk.get(..take).unwrap_or_default());
        }
        out.write_all(&chunk)
            .await
            .map_err(|error| anyhow::anyhow!("cannot write the upload: {error}"))?;
    }
    // On disk before the record that points at it is committed.
    out.sync_all()
        .await
        .map_err(|error| anyhow::anyhow!("cannot write the upload: {error}"))?;
    Ok(head)
}

pub fn multipart_error(error: multer::Error) -> Error {
    if let Some(failed) = body_failed(&error) {
        return failed;
    }
    match error {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            Error::TooLarge("The upload is larger than the limit.".to_owned())
        }
        other => Error::validation(vec![ValidationIssue::new(
            vec![json!("body")],
            "value_error",
            format!("The multipart body could not be read: {other}."),
        )]),
    }
}

pub fn too_large(limit: u64) -> Error {
    Error::TooLarge(format!(
        "The upload is larger than the limit of {limit} bytes (INSIGHT_MAX_UPLOAD_BYTES)."
    ))
}
