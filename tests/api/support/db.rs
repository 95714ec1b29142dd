//! The database under the service, read and written around it: what a test cannot make
//! through the API, and what must never be stored.

use super::TestApp;

/// Sets a record's `created_at`, as if it had been made then.
pub async fn made_at(app: &TestApp, record: &str, at: chrono::DateTime<chrono::Utc>) {
    use sqlx::Connection;
    let id = uuid::Uuid::parse_str(record).expect("record id");
    let sql = "UPDATE records SET created_at = $1 WHERE id = $2";
    if app.database_url.starts_with("sqlite") {
        let mut conn = sqlx::SqliteConnection::connect(&app.database_url).await.expect("open");
        sqlx::query(sql)
            .bind(at)
            .bind(id)
            .execute(&mut conn)
            .await
            .expect("update");
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.database_url).await.expect("open");
        sqlx::query(sql)
            .bind(at)
            .bind(id)
            .execute(&mut conn)
            .await
            .expect("update");
    }
}

/// Asserts that none of `secrets` is stored in clear anywhere in the database.
pub async fn assert_not_stored(database_url: &str, secrets: &[&str]) {
    if let Some(path) = database_url.strip_prefix("sqlite://") {
        let mut checked = 0;
        for file in [path.to_owned(), format!("{path}-wal"), format!("{path}-journal")] {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            checked += 1;
            for secret in secrets {
                let found = bytes.windows(secret.len()).any(|window| window == secret.as_bytes());
                assert!(!found, "{file} holds a token in clear");
            }
        }
        assert!(checked > 0, "no database file at {path}");
    } else {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(database_url)
            .await
            .expect("connect to the database");
        let tables: Vec<(String,)> = sqlx::query_as(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
        )
        .fetch_all(&mut conn)
        .await
        .expect("list tables");
        assert!(tables.iter().any(|(t,)| t == "api_tokens"), "{tables:?}");
        for (table,) in tables {
            let rows: Vec<(String,)> = sqlx::query_as(&format!("SELECT t::text FROM \"{table}\" t"))
                .fetch_all(&mut conn)
                .await
                .expect("read table");
            for (row,) in rows {
                for secret in secrets {
                    // As text, or as the hex PostgreSQL shows a `bytea` in.
                    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
                    assert!(
                        !row.contains(secret) && !row.to_lowercase().contains(&hex),
                        "table {table} holds a token in clear"
                    );
                }
            }
        }
    }
}
