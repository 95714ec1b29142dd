//! The test harness and every helper more than one test module uses: the test modules
//! import from here, and from nowhere else in the suite (`house.rs` keeps it so).
//!
//! - [`app`]: the service under test ([`TestApp`]) and its users;
//! - [`errors`]: the shapes of its refusals.

pub mod app;
pub mod errors;

pub use app::{TestApp, TestUser, backend_name, fresh_database};
pub use errors::{assert_unknown_references, assert_validation_body, error_locs, error_types};
