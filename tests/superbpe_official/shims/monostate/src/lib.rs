//! Stub of monostate's MustBe!: a unit type whose (de)serialization fails (decoders only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MustBeStub;
impl serde::Serialize for MustBeStub {
    fn serialize<S: serde::Serializer>(&self, _s: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("monostate MustBe is not built"))
    }
}
impl<'de> serde::Deserialize<'de> for MustBeStub {
    fn deserialize<D: serde::Deserializer<'de>>(_d: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("monostate MustBe is not built"))
    }
}
#[macro_export]
macro_rules! MustBe {
    ($s:literal) => { $crate::MustBeStub };
}
