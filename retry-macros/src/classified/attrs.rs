//! The `#[classify(..)]` attributes of a `#[derive(Classified)]` type: on
//! the type, on a variant, on a field.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, LitStr, Path, Token};

use crate::hint::closest;

/// The words a variant's `#[classify(..)]` takes, as messages list them.
pub const RULES: &[&str] = &[
    "transient",
    "rate_limited",
    "logical",
    "validation",
    "code",
    "not_applied",
    "transparent",
    "with",
];

/// How a variant (or a struct) is classified, as its attribute says.
pub enum Rule {
    /// No attribute: the one error it wraps, if it wraps one.
    Unset,
    /// A class of its own, with an optional code.
    Class {
        /// `Transient`, `RateLimited`, `Logical` or `Validation`.
        class: Ident,
        code: Option<LitStr>,
        not_applied: bool,
    },
    /// Delegated to the error it wraps, written out.
    Transparent(Span),
    /// A function (or closure) of the error it wraps.
    With(Box<Expr>),
}

/// What a type's own attribute, and a variant's, may say.
pub struct Attrs {
    pub rule: Rule,
    /// `crate = path`, where the facade is renamed.
    pub krate: Option<Path>,
}

/// The rule and crate path of the type's or a variant's attributes.
/// `container` says whether `crate = ..` is allowed there; `rules` whether
/// a rule is (a struct's attribute takes one, an enum's does not).
pub fn parse(attrs: &[Attribute], container: bool, rules: bool) -> syn::Result<Attrs> {
    let mut parsed = Attrs {
        rule: Rule::Unset,
        krate: None,
    };
    let mut code: Option<LitStr> = None;
    let mut not_applied: Option<Span> = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("classify")) {
        attr.parse_args_with(|input: ParseStream| {
            while !input.is_empty() {
                if input.peek(Token![crate]) {
                    let key: Token![crate] = input.parse()?;
                    if !container {
                        return Err(syn::Error::new(
                            key.span,
                            "`crate = ..` goes on the type's own `#[classify(..)]`, not on a variant",
                        ));
                    }
                    input.parse::<Token![=]>()?;
                    let path = if input.peek(LitStr) {
                        input.parse::<LitStr>()?.parse()?
                    } else {
                        Path::parse_mod_style(input)?
                    };
                    set_once(&mut parsed.krate, path, key.span, "crate")?;
                } else {
                    let key: Ident = input.parse()?;
                    if !rules {
                        return Err(syn::Error::new(
                            key.span(),
                            "on an enum, `#[classify(..)]` takes only `crate = path`: a class goes on each variant",
                        ));
                    }
                    word(input, &key, &mut parsed.rule, &mut code, &mut not_applied)?;
                }
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            Ok(())
        })?;
    }
    if let Rule::Class {
        code: slot,
        not_applied: flag,
        ..
    } = &mut parsed.rule
    {
        *slot = code;
        *flag = not_applied.is_some();
    } else if let Some(code) = code {
        return Err(syn::Error::new(
            code.span(),
            "`code = \"..\"` names the code of a class given beside it: write `#[classify(logical, code = \"..\")]`",
        ));
    } else if let Some(span) = not_applied {
        return Err(syn::Error::new(
            span,
            "`not_applied` says that a failure of a class given beside it did not take effect: write `#[classify(transient, not_applied)]`",
        ));
    }
    Ok(parsed)
}

/// One word of a variant's attribute.
fn word(
    input: ParseStream,
    key: &Ident,
    rule: &mut Rule,
    code: &mut Option<LitStr>,
    not_applied: &mut Option<Span>,
) -> syn::Result<()> {
    let name = key.to_string();
    let class = match name.as_str() {
        "transient" => Some("Transient"),
        "rate_limited" => Some("RateLimited"),
        "logical" => Some("Logical"),
        "validation" => Some("Validation"),
        _ => None,
    };
    let new = match (class, name.as_str()) {
        (Some(class), _) => Rule::Class {
            class: Ident::new(class, key.span()),
            code: None,
            not_applied: false,
        },
        (None, "transparent") => Rule::Transparent(key.span()),
        (None, "with") => {
            input.parse::<Token![=]>()?;
            Rule::With(Box::new(input.parse()?))
        }
        (None, "code") => {
            input.parse::<Token![=]>()?;
            return set_once(code, input.parse()?, key.span(), "code");
        }
        (None, "not_applied") => {
            return set_once(not_applied, key.span(), key.span(), "not_applied");
        }
        (None, "source") => {
            return Err(syn::Error::new(
                key.span(),
                "`#[classify(source)]` goes on the field that holds the wrapped error, not on the variant",
            ));
        }
        _ => return Err(syn::Error::new(key.span(), unknown(&name))),
    };
    if !matches!(rule, Rule::Unset) {
        return Err(syn::Error::new(
            key.span(),
            "a variant is classified one way: a class, `transparent` or `with = ..`, not two",
        ));
    }
    *rule = new;
    Ok(())
}

/// Whether a field's attributes mark it as the error its variant wraps:
/// `#[classify(source)]`.
pub fn marked_source(attrs: &[Attribute]) -> syn::Result<Option<Span>> {
    let mut marked = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("classify")) {
        attr.parse_args_with(|input: ParseStream| {
            let key: Ident = input.parse()?;
            if key != "source" || !input.is_empty() {
                return Err(syn::Error::new(
                    key.span(),
                    "on a field, `#[classify(..)]` takes only `source`: it marks the error the variant wraps",
                ));
            }
            marked = Some(key.span());
            Ok(())
        })?;
    }
    Ok(marked)
}

fn set_once<T>(slot: &mut Option<T>, value: T, span: Span, name: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(
            span,
            format!("`{name}` is given twice in `#[classify(..)]`"),
        ));
    }
    *slot = Some(value);
    Ok(())
}

/// The message for a word `#[classify(..)]` does not take.
fn unknown(word: &str) -> String {
    let hint = closest(word, RULES)
        .map(|near| format!("; did you mean `{near}`?"))
        .unwrap_or_default();
    format!(
        "unknown argument `{word}` of `#[classify(..)]`{hint}\n\
         a variant takes a class (`transient`, `rate_limited`, `logical` or `validation`, \
         each with an optional `code = \"..\"` and `not_applied`), `transparent`, or `with = path::to::fn` (a closure too)"
    )
}
