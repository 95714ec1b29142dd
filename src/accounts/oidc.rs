//! (filled in by the accounts issue)
