//! AI usage as it was charged, per workspace: written after each model call, summed for
//! the monthly budget and the usage report.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db};
use crate::domain::usage::{UsageKind, UsageLine};

/// One model call to charge.
#[derive(Debug, Clone)]
pub struct Charge {
    pub workspace_id: Uuid,
    pub project_id: Option<Uuid>,
    pub kind: UsageKind,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost: f64,
    pub duration_ms: u64,
    pub at: DateTime<Utc>,
}

impl Store {
    pub async fn charge(&self, charge: &Charge) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "INSERT INTO ai_usage (id, workspace_id, project_id, kind, model, prompt_tokens, completion_tokens, \
             cost, duration_ms, at) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
             WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = $2)"
        )
        .bind(Uuid::new_v4())
        .bind(charge.workspace_id)
        .bind(charge.project_id)
        .bind(charge.kind.as_str())
        .bind(&charge.model)
        .bind(i64::try_from(charge.prompt_tokens).unwrap_or(i64::MAX))
        .bind(i64::try_from(charge.completion_tokens).unwrap_or(i64::MAX))
        .bind(charge.cost)
        .bind(i64::try_from(charge.duration_ms).unwrap_or(i64::MAX))
        .bind(charge.at)
        .execute(&mut *conn)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// What the workspace spent from `from` on.
    pub async fn spent_since(&self, workspace_id: Uuid, from: DateTime<Utc>) -> anyhow::Result<f64> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, Option<f64>>(
            "SELECT SUM(cost) FROM ai_usage WHERE workspace_id = $1 AND at >= $2"
        )
        .bind(workspace_id)
        .bind(from)
        .fetch_one(pool)
        .await)?
        .unwrap_or(0.0))
    }

    /// The workspace's usage between two moments, by kind and model.
    pub async fn usage_lines(
        &self,
        workspace_id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> anyhow::Result<Vec<UsageLine>> {
        let rows = db!(self, read, |pool| sqlx::query_as::<
            _,
            (String, String, i64, i64, i64, f64),
        >(
            "SELECT kind, model, COUNT(*), CAST(SUM(prompt_tokens) AS BIGINT), CAST(SUM(completion_tokens) AS BIGINT), \
             SUM(cost) FROM ai_usage WHERE workspace_id = $1 AND at >= $2 AND at < $3 \
             GROUP BY kind, model ORDER BY kind, model"
        )
        .bind(workspace_id)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .filter_map(|(kind, model, calls, prompt_tokens, completion_tokens, cost)| {
                Some(UsageLine {
                    kind: UsageKind::parse(&kind)?,
                    model,
                    calls,
                    prompt_tokens,
                    completion_tokens,
                    cost,
                })
            })
            .collect())
    }
}
