//! Stub of unicode-normalization-alignments: no normalizer is configured on the SuperBPE path,
//! so none of these is ever called; each panics if it is.
pub trait UnicodeNormalization {
    fn nfd(self) -> std::vec::IntoIter<(char, isize)>;
    fn nfkd(self) -> std::vec::IntoIter<(char, isize)>;
    fn nfc(self) -> std::vec::IntoIter<(char, isize)>;
    fn nfkc(self) -> std::vec::IntoIter<(char, isize)>;
}
impl<'a> UnicodeNormalization for &'a str {
    fn nfd(self) -> std::vec::IntoIter<(char, isize)> { unimplemented!("NFD is not built in this reference build") }
    fn nfkd(self) -> std::vec::IntoIter<(char, isize)> { unimplemented!("NFKD is not built in this reference build") }
    fn nfc(self) -> std::vec::IntoIter<(char, isize)> { unimplemented!("NFC is not built in this reference build") }
    fn nfkc(self) -> std::vec::IntoIter<(char, isize)> { unimplemented!("NFKC is not built in this reference build") }
}
pub mod char {
    pub fn is_combining_mark(_c: char) -> bool { unimplemented!("is_combining_mark is not built in this reference build") }
}
