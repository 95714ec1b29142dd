//! Project lists served from memory while they are current.
//!
//! A list is kept with the user's data version at the time it was read. The auth query
//! reads the current version on every request, and triggers move it with every change
//! a list shows (migration 0002), so a kept list is used only while nothing in it has
//! changed, on any instance sharing the database. The cache only saves work: losing
//! it, or a restart, loses nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Bytes;
use uuid::Uuid;

/// More users than this and the cache starts over, which bounds its memory.
const MAX_USERS: usize = 10_000;

#[derive(Default)]
pub struct ProjectListCache {
    entries: Mutex<HashMap<Uuid, (i64, Bytes)>>,
}

impl ProjectListCache {
    /// The serialised list of `user`'s projects, if it was read at `version`.
    pub fn get(&self, user: Uuid, version: i64) -> Option<Bytes> {
        let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries
            .get(&user)
            .filter(|(kept, _)| *kept == version)
            .map(|(_, body)| body.clone())
    }

    pub fn put(&self, user: Uuid, version: i64, body: Bytes) {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.len() >= MAX_USERS && !entries.contains_key(&user) {
            entries.clear();
        }
        entries.insert(user, (version, body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_used_only_at_its_version() {
        let cache = ProjectListCache::default();
        let ann = Uuid::new_v4();
        assert_eq!(cache.get(ann, 1), None);
        cache.put(ann, 1, Bytes::from_static(b"[]"));
        assert_eq!(cache.get(ann, 1), Some(Bytes::from_static(b"[]")));
        assert_eq!(cache.get(ann, 2), None);
        assert_eq!(cache.get(Uuid::new_v4(), 1), None);
    }
}
