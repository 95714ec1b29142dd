//! Records: interview material in a project.

pub mod correction;
pub mod intake;
pub mod removal;
pub mod speakers;
pub mod transcription;

use uuid::Uuid;

use crate::domain::record::RecordDetail;
use crate::error::{ApiError, ApiResult};
use crate::store::Store;

/// The user's record with its utterances; 404 when he cannot see it.
pub async fn detail(store: &Store, user_id: Uuid, record_id: Uuid) -> ApiResult<RecordDetail> {
    let record = store
        .get_record(user_id, record_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Record"))?;
    let (utterances, consent) = tokio::try_join!(store.utterances(record_id), store.record_consent(record_id))?;
    Ok(RecordDetail {
        record,
        utterances,
        consent,
    })
}
