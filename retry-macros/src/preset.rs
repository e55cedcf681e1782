//! `preset = ...`: the defaults of the three situations backend code meets
//! most, kept in the core (`reattempt_core`'s `preset.rs`, which has their
//! table) and named by path. Explicit arguments override them.

use proc_macro2::{Ident, TokenStream};

use crate::args::{Args, Preset};

/// The core's constant of the function's preset, if it has one.
pub fn constant(args: &Args, private: &Ident) -> Option<TokenStream> {
    let name = match args.preset? {
        Preset::Network => "NETWORK",
        Preset::ExternalApi => "EXTERNAL_API",
        Preset::Internal => "INTERNAL",
    };
    let name = Ident::new(name, proc_macro2::Span::call_site());
    Some(code!(#private::preset::#name))
}

/// Whether errors are to be classified as `external_api` says: under that
/// preset, without an `on = ..` of the function's own.
pub fn classifies_as_external_api(args: &Args) -> bool {
    args.preset == Some(Preset::ExternalApi) && args.on.is_none()
}
