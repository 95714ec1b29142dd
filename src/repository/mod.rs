//! The research repository: the workspace's tags now; highlights, insights and search
//! are to come on the same ground.

pub mod tags;
