//! Pages of a list: at most `limit` items after a position, and the position after the
//! last one when more exist. The position is the list's sort key (keyset pagination), so
//! an item added or removed while a client walks the list neither repeats nor hides the
//! others. (A list sorted by activity, as chat threads are, moves an item that changes
//! during the walk: ahead of the cursor, where this walk does not see it again.)
//!
//! Clients see a position only as a `cursor`: 43 characters of URL-safe base64 holding
//! two numbers and an id, whatever the list. Any such text is a position (perhaps past
//! the end, or before the start), so the API document can say exactly which cursors
//! are accepted, and no list needs an encoding of its own.

use base64::Engine;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Items per page when the client does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// The most items a page holds.
pub const MAX_LIMIT: usize = 500;
/// The cursor's form, for the API document.
pub const CURSOR_PATTERN: &str = "^[A-Za-z0-9_-]{43}$";

/// Which page to read: up to `limit` items after `after` (from the start when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct PageRequest<K> {
    pub limit: usize,
    pub after: Option<K>,
}

impl<K> PageRequest<K> {
    /// Every item at once, for the service's own use of a list.
    pub fn everything() -> Self {
        Self {
            limit: usize::MAX,
            after: None,
        }
    }

    /// How many rows to fetch: one more than the page, to know whether another follows.
    pub fn fetch(&self) -> i64 {
        i64::try_from(self.limit).unwrap_or(i64::MAX).saturating_add(1)
    }
}

/// A page of items and, when more follow, the key to continue after.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, K> {
    pub items: Vec<T>,
    pub next: Option<K>,
}

impl<T, K> Page<T, K> {
    /// The page from rows fetched with [`PageRequest::fetch`]: the extra row, if it came,
    /// is dropped and says that another page follows the last kept item.
    pub fn from_rows(mut rows: Vec<T>, request: &PageRequest<K>, key: impl Fn(&T) -> K) -> Self {
        let more = rows.len() > request.limit;
        rows.truncate(request.limit);
        let next = if more { rows.last().map(key) } else { None };
        Self { items: rows, next }
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U, K> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            next: self.next,
        }
    }
}

/// A position in a list as a cursor carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub first: i64,
    pub second: i64,
    pub id: u128,
}

/// A list's sort key, written as and read from a [`Position`]. Reading is total: every
/// position is some key.
pub trait SortKey: Sized {
    fn to_position(&self) -> Position;
    fn from_position(position: Position) -> Self;
}

/// Creation time and id: records, reports, rooms, endpoints, deliveries.
impl SortKey for (DateTime<Utc>, Uuid) {
    fn to_position(&self) -> Position {
        Position {
            first: self.0.timestamp_micros(),
            second: 0,
            id: self.1.as_u128(),
        }
    }

    fn from_position(position: Position) -> Self {
        (time(position.first), Uuid::from_u128(position.id))
    }
}

/// Latest activity and number: chat threads.
impl SortKey for (DateTime<Utc>, i64) {
    fn to_position(&self) -> Position {
        Position {
            first: self.0.timestamp_micros(),
            second: self.1,
            id: 0,
        }
    }

    fn from_position(position: Position) -> Self {
        (time(position.first), position.second)
    }
}

/// A place in order: a thread's messages.
impl SortKey for i64 {
    fn to_position(&self) -> Position {
        Position {
            first: *self,
            ..Position::default()
        }
    }

    fn from_position(position: Position) -> Self {
        position.first
    }
}

/// A rank, a time and an id: prompts and presets (system ones first).
impl SortKey for (i32, DateTime<Utc>, Uuid) {
    fn to_position(&self) -> Position {
        Position {
            first: i64::from(self.0),
            second: self.1.timestamp_micros(),
            id: self.2.as_u128(),
        }
    }

    fn from_position(position: Position) -> Self {
        let rank = i32::try_from(position.first.clamp(i64::from(i32::MIN), i64::from(i32::MAX))).unwrap_or_default();
        (rank, time(position.second), Uuid::from_u128(position.id))
    }
}

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in microseconds since the epoch.
const EARLIEST_MICROS: i64 = -62_135_596_800_000_000;
const LATEST_MICROS: i64 = 253_402_300_799_000_000;

/// Microseconds since the epoch as a time every backend stores (years 1 to 9999).
fn time(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros.clamp(EARLIEST_MICROS, LATEST_MICROS)).unwrap_or_default()
}

/// URL-safe base64 without padding that reads any 43 characters of its alphabet, whatever
/// the last one's unused bits.
const CURSOR: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// A key as the text clients pass back as `cursor`.
pub fn encode_cursor<K: SortKey>(key: &K) -> String {
    let position = key.to_position();
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&position.first.to_be_bytes());
    bytes[8..16].copy_from_slice(&position.second.to_be_bytes());
    bytes[16..].copy_from_slice(&position.id.to_be_bytes());
    CURSOR.encode(bytes)
}

/// The key a cursor stands for, or `None` when the text does not have the cursor's form
/// ([`CURSOR_PATTERN`]).
pub fn decode_cursor<K: SortKey>(cursor: &str) -> Option<K> {
    if cursor.len() != 43 {
        return None;
    }
    let bytes: [u8; 32] = CURSOR.decode(cursor).ok()?.try_into().ok()?;
    let number =
        |range: std::ops::Range<usize>| bytes.get(range).and_then(|b| b.try_into().ok()).map(i64::from_be_bytes);
    Some(K::from_position(Position {
        first: number(0..8)?,
        second: number(8..16)?,
        id: u128::from_be_bytes(bytes.get(16..)?.try_into().ok()?),
    }))
}

/// Where a page of a list sorted by creation continues: the last item's time and id.
pub type CreatedKey = (chrono::DateTime<chrono::Utc>, uuid::Uuid);
/// A page of chat threads continues after the last one's latest activity and id.
pub type ThreadKey = (chrono::DateTime<chrono::Utc>, i64);
/// A page of a thread's messages continues after a position.
pub type MessageKey = i64;
/// A page of prompts or presets continues after a kind (system first), a time and an id.
pub type LibraryKey = (i32, chrono::DateTime<chrono::Utc>, uuid::Uuid);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_any_text_of_their_form_is_one() {
        let key: (DateTime<Utc>, Uuid) = (crate::domain::now(), Uuid::new_v4());
        let cursor = encode_cursor(&key);
        assert_eq!(cursor.len(), 43);
        assert!(regex_like(&cursor), "{cursor}");
        assert_eq!(decode_cursor::<(DateTime<Utc>, Uuid)>(&cursor), Some(key));
        let thread: (DateTime<Utc>, i64) = (crate::domain::now(), 42);
        assert_eq!(decode_cursor(&encode_cursor(&thread)), Some(thread));
        let library: (i32, DateTime<Utc>, Uuid) = (1, crate::domain::now(), Uuid::new_v4());
        assert_eq!(decode_cursor(&encode_cursor(&library)), Some(library));
        assert_eq!(decode_cursor::<i64>(&encode_cursor(&7i64)), Some(7));
        // Text of the form, whatever it says, is a position; other text is not.
        assert!(decode_cursor::<(DateTime<Utc>, Uuid)>(&"_".repeat(43)).is_some());
        assert!(decode_cursor::<(i32, DateTime<Utc>, Uuid)>(&"-".repeat(43)).is_some());
        assert_eq!(decode_cursor::<i64>("not a cursor"), None);
        assert_eq!(decode_cursor::<i64>(&"A".repeat(44)), None);
        assert_eq!(decode_cursor::<i64>(&format!("{}=", "A".repeat(42))), None);
    }

    fn regex_like(cursor: &str) -> bool {
        cursor.len() == 43
            && cursor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    #[test]
    fn positions_become_times_every_backend_stores() {
        let first = chrono::NaiveDate::from_ymd_opt(1, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0));
        let last = chrono::NaiveDate::from_ymd_opt(9999, 12, 31).and_then(|d| d.and_hms_opt(23, 59, 59));
        assert_eq!(time(i64::MIN).naive_utc(), first.expect("a time"));
        assert_eq!(time(i64::MAX).naive_utc(), last.expect("a time"));
    }

    #[test]
    fn the_extra_row_says_another_page_follows() {
        let request = PageRequest {
            limit: 2,
            after: None::<i32>,
        };
        assert_eq!(request.fetch(), 3);
        let page = Page::from_rows(vec![1, 2, 3], &request, |n| *n);
        assert_eq!((page.items, page.next), (vec![1, 2], Some(2)));
        let last = Page::from_rows(vec![1, 2], &request, |n| *n);
        assert_eq!((last.items, last.next), (vec![1, 2], None));
    }
}
