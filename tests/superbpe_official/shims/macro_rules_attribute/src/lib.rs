//! `#[macro_rules_attribute(path!)] item` expands to `path! { item }`, as upstream does.
extern crate proc_macro;
use proc_macro::{Delimiter, Group, TokenStream, TokenTree};

#[proc_macro_attribute]
pub fn macro_rules_attribute(attrs: TokenStream, input: TokenStream) -> TokenStream {
    let mut out: Vec<TokenTree> = attrs.into_iter().collect();
    // attrs is `path !`; append `{ input }`
    out.push(TokenTree::Group(Group::new(Delimiter::Brace, input)));
    out.into_iter().collect()
}
