//! `#[derive(Classified)]`: an error type classified by its variants, each
//! delegating to the error it wraps or given a class of its own.
//!
//! ```text
//! enum AppError { Http(reqwest::Error), #[classify(validation, code = "parse")] Parse(String) }
//! // becomes
//! impl ::reattempt::Classified for AppError {
//!     fn classification(&self) -> ::reattempt::Classification {
//!         match self {
//!             Self::Http { 0: __source, .. } => <reqwest::Error as ::reattempt::__private::Delegate>::delegated(__source),
//!             Self::Parse { .. } => ::reattempt::Classification::new(::reattempt::Class::Validation).with_code(..),
//!         }
//!     }
//! }
//! ```

mod attrs;
mod source;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Path, Type, WherePredicate};

use attrs::Rule;
use source::Source;

/// The `impl Classified` of the type, or the error at what the derive
/// cannot classify.
pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let is_struct = matches!(input.data, Data::Struct(_));
    let own = attrs::parse(&input.attrs, true, is_struct)?;
    let krate = own.krate.unwrap_or_else(|| syn::parse_quote!(::reattempt));
    let mut build = Build {
        krate: &krate,
        generics: &input.generics,
        bounds: Vec::new(),
    };
    let body = match &input.data {
        Data::Enum(data) => {
            let mut arms = Vec::new();
            for variant in &data.variants {
                let rule = attrs::parse(&variant.attrs, false, true)?.rule;
                let name = &variant.ident;
                let what = format!("the variant `{name}`");
                let (source, expr) =
                    build.classification(rule, &variant.fields, name.span(), &what)?;
                let pattern = match source {
                    Some(source) => {
                        let member = source.member;
                        quote!(Self::#name { #member: __source, .. })
                    }
                    None => quote!(Self::#name { .. }),
                };
                arms.push(quote!(#pattern => #expr,));
            }
            if arms.is_empty() {
                // No value of an empty enum exists; its reference is matched
                // through, as a reference to one is not known to be empty.
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            }
        }
        Data::Struct(data) => {
            let what = format!("the struct `{}`", input.ident);
            let (source, expr) =
                build.classification(own.rule, &data.fields, input.ident.span(), &what)?;
            match source {
                Some(source) => {
                    let member = source.member;
                    quote!(let __source = &self.#member; #expr)
                }
                None => expr,
            }
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span,
                "`#[derive(Classified)]` works on enums and structs: a union cannot tell which of its fields holds the error",
            ));
        }
    };
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    where_clause.predicates.extend(build.bounds);
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Classified for #name #type_generics #where_clause {
            fn classification(&self) -> #krate::Classification {
                #body
            }
        }
    })
}

/// What the impl is built with, and the bounds it gathers.
struct Build<'a> {
    krate: &'a Path,
    generics: &'a Generics,
    /// `T: Classified` for each delegated field whose type names a type
    /// parameter.
    bounds: Vec<WherePredicate>,
}

impl<'a> Build<'a> {
    /// The field the classification reads, if any, and the expression of
    /// the classification of a variant (or struct) under `rule`.
    fn classification<'f>(
        &mut self,
        rule: Rule,
        fields: &'f Fields,
        at: Span,
        what: &str,
    ) -> syn::Result<(Option<Source<'f>>, TokenStream)> {
        let krate = self.krate;
        match rule {
            Rule::Class {
                class,
                code,
                not_applied,
            } => {
                let code = code.map(|code| {
                    quote_spanned!(code.span()=> .with_code({
                        const CODE: #krate::Code = #krate::__private::derived_code(#code);
                        CODE
                    }))
                });
                let not_applied = not_applied.then(|| quote!(.not_applied()));
                let expr = quote! {
                    #krate::Classification::new(#krate::Class::#class) #code #not_applied
                };
                Ok((None, expr))
            }
            Rule::With(function) => {
                let source = source::pick(fields)?.ok_or_else(|| {
                    syn::Error::new(
                        function.span(),
                        format!(
                            "`with = ..` is called with the error {what} wraps, and {}",
                            source::advice(fields)
                        ),
                    )
                })?;
                let expr = quote_spanned! {function.span()=>
                    #krate::__private::classify_with(__source, #function)
                };
                Ok((Some(source), expr))
            }
            Rule::Transparent(span) => {
                let source = source::pick(fields)?.ok_or_else(|| {
                    syn::Error::new(
                        span,
                        format!(
                            "`transparent` delegates to the error {what} wraps, and {}",
                            source::advice(fields)
                        ),
                    )
                })?;
                Ok(self.delegated(source))
            }
            Rule::Unset => match (fields.len(), source::pick(fields)?) {
                (1, Some(source)) => Ok(self.delegated(source)),
                (0, _) => Err(syn::Error::new(
                    at,
                    format!(
                        "`#[derive(Classified)]` cannot classify {what}, which wraps no error: give it a class with `#[classify(transient)]`, `#[classify(rate_limited)]`, `#[classify(logical)]` or `#[classify(validation)]`, or a function with `#[classify(with = path::to::fn)]`"
                    ),
                )),
                (_, _) => Err(syn::Error::new(
                    at,
                    format!(
                        "`#[derive(Classified)]` cannot tell which field of {what} holds the error it wraps: write `#[classify(transparent)]` on it and mark that field `#[classify(source)]` (or name it `source`), or give it a class such as `#[classify(logical)]`"
                    ),
                )),
            },
        }
    }

    /// The classification of the wrapped error, by its own type's.
    fn delegated<'f>(&mut self, source: Source<'f>) -> (Option<Source<'f>>, TokenStream) {
        let krate = self.krate;
        let ty = source.ty;
        if names_a_type_parameter(ty, self.generics) {
            self.bounds.push(syn::parse_quote!(#ty: #krate::Classified));
        }
        let expr = quote_spanned! {ty.span()=>
            <#ty as #krate::__private::Delegate>::delegated(__source)
        };
        (Some(source), expr)
    }
}

/// Whether `ty` mentions one of the type's type parameters, and so needs a
/// bound to be classified.
fn names_a_type_parameter(ty: &Type, generics: &Generics) -> bool {
    let params: Vec<&Ident> = generics.type_params().map(|param| &param.ident).collect();
    fn walk(tokens: TokenStream, params: &[&Ident]) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => params.iter().any(|param| **param == ident),
            TokenTree::Group(group) => walk(group.stream(), params),
            _ => false,
        })
    }
    !params.is_empty() && walk(quote!(#ty), &params)
}

#[cfg(test)]
mod tests {
    /// Inputs a few edits from valid ones: each gives an impl or an error,
    /// never a panic.
    #[test]
    fn hostile_input_never_panics() {
        let inputs = [
            "enum E {}",
            "enum E { A }",
            "enum E { #[classify] A }",
            "enum E { #[classify()] A(u8) }",
            "enum E { #[classify(,)] A(u8) }",
            "enum E { #[classify(transient,,)] A }",
            "enum E { #[classify(code)] A }",
            "enum E { #[classify(code = 1)] A }",
            "enum E { #[classify(code = \"x\")] A(std::io::Error) }",
            "enum E { #[classify(not_applied)] A }",
            "enum E { #[classify(with)] A(u8) }",
            "enum E { #[classify(with = )] A(u8) }",
            "enum E { #[classify(with = f, transient)] A(u8) }",
            "enum E { #[classify(transparent)] A }",
            "enum E { #[classify(transparent)] A { source: u8, source2: u8 } }",
            "enum E { A(#[classify] u8) }",
            "enum E { A(#[classify(source, source)] u8) }",
            "enum E { A(#[classify(transient)] u8) }",
            "enum E { A(#[source] u8, #[from] u8) }",
            "enum E { #[classify(crate = x)] A }",
            "#[classify(crate)] enum E { A(u8) }",
            "#[classify(crate = \"\")] enum E { A(u8) }",
            "#[classify(crate = \"a b\")] enum E { A(u8) }",
            "struct S;",
            "struct S(u8, u8);",
            "#[classify(logical)] struct S { a: u8 }",
            "#[classify(with = f)] struct S;",
            "union U { a: u8 }",
            "enum E<T> { A(T), B(Vec<T>), #[classify(source)] C }",
        ];
        for input in inputs {
            let parsed: syn::DeriveInput = syn::parse_str(input).expect(input);
            let _ = super::derive(parsed);
        }
    }
}
