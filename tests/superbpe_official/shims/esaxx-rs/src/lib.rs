//! Stub of esaxx-rs (Unigram trainer only): every call panics.
pub struct Suffix;
#[derive(Debug)]
pub struct SuffixError;
impl Suffix {
    pub fn iter(&self) -> std::vec::IntoIter<(&[char], u32)> { unimplemented!("esaxx is not built") }
}
pub fn suffix_rs(_s: &str) -> Result<Suffix, SuffixError> { unimplemented!("esaxx is not built") }
pub fn suffix(_s: &str) -> Result<Suffix, SuffixError> { unimplemented!("esaxx is not built") }
