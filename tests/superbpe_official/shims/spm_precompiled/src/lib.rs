//! Stub of spm_precompiled: deserializing a Precompiled normalizer fails (a required field no
//! JSON has), and transform panics.
use serde::{Deserialize, Serialize};
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Precompiled {
    precompiled_normalizer_not_built_in_this_reference_build: (),
}
impl Precompiled {
    pub fn transform(&self, _s: &str) -> Option<&str> { unimplemented!("Precompiled is not built") }
    pub fn from(_b: &[u8]) -> Result<Precompiled, String> { Err("Precompiled is not built".into()) }
}
