//! Keyset pagination in SQL, written once for every list: the clause that starts a page
//! after its cursor, the cursor's parameters, and the page built from the rows fetched.
//!
//! Each list keeps its own query (its filters, its `ORDER BY` and its `LIMIT`, bound to
//! [`PageRequest::fetch`]); it puts the [`Keyset`] where the cursor's condition belongs
//! and binds the keyset after its own parameters, because the cursor's parameters are
//! there only when a page continues.

use std::fmt;

use chrono::{DateTime, Utc};
use sqlx::query::QueryAs;
use sqlx::{Database, Postgres, Sqlite};
use uuid::Uuid;

use crate::domain::paging::{Page, PageRequest};

/// A list's sort key as SQL parameters: how many it takes.
pub(super) trait Key {
    const WIDTH: usize;
}

/// A list's sort key bound, in order, as a query's next parameters on one backend.
pub(super) trait BindKey<DB: Database>: Key {
    fn bind_to<'q, O>(
        &self,
        query: QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>,
    ) -> QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>;
}

impl Key for (DateTime<Utc>, Uuid) {
    const WIDTH: usize = 2;
}

impl Key for (DateTime<Utc>, i64) {
    const WIDTH: usize = 2;
}

impl Key for i64 {
    const WIDTH: usize = 1;
}

impl Key for (i32, DateTime<Utc>, Uuid) {
    const WIDTH: usize = 3;
}

/// The same binding for each backend: the pools' query types differ, the keys do not.
macro_rules! bind_keys {
    ($db:ty) => {
        impl BindKey<$db> for (DateTime<Utc>, Uuid) {
            fn bind_to<'q, O>(
                &self,
                query: QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>>,
            ) -> QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>> {
                query.bind(self.0).bind(self.1)
            }
        }

        impl BindKey<$db> for (DateTime<Utc>, i64) {
            fn bind_to<'q, O>(
                &self,
                query: QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>>,
            ) -> QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>> {
                query.bind(self.0).bind(self.1)
            }
        }

        impl BindKey<$db> for i64 {
            fn bind_to<'q, O>(
                &self,
                query: QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>>,
            ) -> QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>> {
                query.bind(*self)
            }
        }

        impl BindKey<$db> for (i32, DateTime<Utc>, Uuid) {
            fn bind_to<'q, O>(
                &self,
                query: QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>>,
            ) -> QueryAs<'q, $db, O, <$db as Database>::Arguments<'q>> {
                query.bind(self.0).bind(self.1).bind(self.2)
            }
        }
    };
}
bind_keys!(Sqlite);
bind_keys!(Postgres);

/// Where a page of a list starts: after the request's cursor, if it has one. Written
/// into the SQL (`{keyset}`) it is the cursor's condition, ` AND (columns) < ($n, ...)`,
/// or nothing on the first page.
pub(super) struct Keyset<'p, K> {
    page: &'p PageRequest<K>,
    clause: String,
}

impl<'p, K: Key> Keyset<'p, K> {
    /// For a list in descending order of `columns` (the sort key's columns, a row value
    /// in parentheses when there are several), whose cursor parameters start at `$first`.
    pub(super) fn descending(page: &'p PageRequest<K>, columns: &str, first: usize) -> Self {
        Self::new(page, columns, "<", first)
    }

    /// For a list in ascending order of `columns`.
    pub(super) fn ascending(page: &'p PageRequest<K>, columns: &str, first: usize) -> Self {
        Self::new(page, columns, ">", first)
    }

    fn new(page: &'p PageRequest<K>, columns: &str, comparison: &str, first: usize) -> Self {
        let clause = if page.after.is_some() {
            let parameters: Vec<String> = (first..first + K::WIDTH).map(|n| format!("${n}")).collect();
            match parameters.as_slice() {
                [one] => format!(" AND {columns} {comparison} {one}"),
                many => format!(" AND {columns} {comparison} ({})", many.join(", ")),
            }
        } else {
            String::new()
        };
        Self { page, clause }
    }

    /// Binds the cursor's parameters, if the page continues; after all of the list's own.
    pub(super) fn bind<'q, DB: Database, O>(
        &self,
        query: QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>,
    ) -> QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>
    where
        K: BindKey<DB>,
    {
        match &self.page.after {
            Some(key) => key.bind_to(query),
            None => query,
        }
    }

    /// The page from the rows fetched, each item's key read by `key`.
    pub(super) fn page<T>(&self, rows: Vec<T>, key: impl Fn(&T) -> K) -> Page<T, K> {
        Page::from_rows(rows, self.page, key)
    }
}

impl<K> fmt::Display for Keyset<'_, K> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.clause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(after: bool) -> PageRequest<(DateTime<Utc>, Uuid)> {
        PageRequest {
            limit: 2,
            after: after.then(|| (DateTime::UNIX_EPOCH, Uuid::nil())),
        }
    }

    #[test]
    fn the_first_page_has_no_condition() {
        let page = created(false);
        assert_eq!(Keyset::descending(&page, "(r.created_at, r.id)", 4).to_string(), "");
    }

    #[test]
    fn a_continued_page_compares_its_columns_with_numbered_parameters() {
        let page = created(true);
        assert_eq!(
            Keyset::descending(&page, "(r.created_at, r.id)", 4).to_string(),
            " AND (r.created_at, r.id) < ($4, $5)"
        );
        let library = PageRequest {
            limit: 2,
            after: Some((1, DateTime::UNIX_EPOCH, Uuid::nil())),
        };
        assert_eq!(
            Keyset::ascending(&library, "(k, at, id)", 3).to_string(),
            " AND (k, at, id) > ($3, $4, $5)"
        );
        let messages = PageRequest {
            limit: 2,
            after: Some(7_i64),
        };
        assert_eq!(
            Keyset::ascending(&messages, "position", 3).to_string(),
            " AND position > $3"
        );
    }

    #[test]
    fn the_page_keeps_the_limit_and_continues_after_its_last_item() {
        let page = created(false);
        let keyset = Keyset::descending(&page, "(at, id)", 1);
        let rows = vec![(DateTime::UNIX_EPOCH, Uuid::from_u128(3)); 3];
        let built = keyset.page(rows, |row| *row);
        assert_eq!(built.items.len(), 2);
        assert_eq!(built.next, Some((DateTime::UNIX_EPOCH, Uuid::from_u128(3))));
    }
}
