//! Moving bytes between two endpoints (Roadrunner's general data
//! streaming): [`overlay`] lays input blocks over output blocks by
//! reference, from the two channels' parameters.

pub mod endpoint;
pub mod overlay;
