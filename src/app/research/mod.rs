//! The research repository: the workspace's tags, the highlights of what respondents
//! said filed under them, and the insights that rest on those highlights.

pub mod exchange;
pub mod highlights;
pub mod insights;
pub mod search;
pub mod tags;
pub mod themes;
