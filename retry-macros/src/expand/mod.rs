//! Code generation: a small loop around the body that asks the core what to
//! do after each attempt. Which loop a function gets is its
//! [`Shape`], whose documentation sketches each; the
//! parts of the loops are made by [`Parts`], one concept a file.

mod attempt;
mod classifier;
mod clones;
mod fallback;
mod hedged;
mod judge;
mod looped;
mod outcome_type;

use proc_macro2::{Span, TokenStream};
use syn::{AttrStyle, Ident, ReturnType, Type};

use crate::args::{Args, On};
use crate::item::{self, Function, Kind};
use crate::prelude::{Prelude, call_state, prelude};
use crate::shape::Shape;
use crate::spanned::PRIVATE;
use crate::{moves, preset, type_span, validate};
use classifier::classifier;
use clones::{attempt_body, moved_checks};
use outcome_type::{erased, error_type_span};

/// The expanded function, or the errors that keep it from being expanded.
pub fn expand(args: Args, function: Function) -> syn::Result<TokenStream> {
    validate::validate(&args, &function)?;
    let external_api = preset::classifies_as_external_api(&args);
    let Function {
        attrs,
        head,
        sig,
        body,
        kind,
    } = function;
    // The run-time support, named through an alias that `private_import` imports:
    // one ident where the path is used. An ident, not a token stream: the
    // macro's cost is mostly in the token streams it joins.
    let private = Ident::new(PRIVATE, Span::mixed_site());

    let return_span = match &sig.output {
        ReturnType::Type(_, ty) => type_span::first_token(ty),
        ReturnType::Default => sig.ident.span(),
    };
    let erased_ret = match &kind {
        Kind::AsyncBlock { output, .. } => erased(output),
        Kind::Sync | Kind::Async => match &sig.output {
            ReturnType::Type(_, ty) => erased(ty),
            ReturnType::Default => Some((syn::parse_quote!(()), true)),
        },
    };
    // An outcome type named whole is read by probing its error and value
    // types by name, with what the core makes once per type; any other, or
    // one that `if_result` judges (it may not be an outcome at all), by
    // probing the error or value itself in a closure of the function's own.
    let named = match &erased_ret {
        Some((_, whole)) => *whole && args.if_result.is_none(),
        None => false,
    };
    let ret = erased_ret.map(|(ty, _)| ty);
    let shape = Shape::of(&args, !matches!(kind, Kind::Sync));
    let import = private_import(args.krate.as_ref(), &private);
    let moved = moved_checks(&sig, &body, &kind, &args, &private);
    let Prelude {
        items,
        policy: policy_ref,
    } = prelude(&args, &sig.ident, &private, shape, ret.as_ref());
    let error_span = error_type_span(&sig.output, &kind);
    let parts = Parts {
        private: &private,
        // Type errors about the outcome land on the return type, not on the
        // attribute. The return type's own span (not one of the expansion),
        // so that the compiler does not trace such errors back to the
        // attribute; the user's body is never in this name's scope.
        outcome: Ident::new("__retry_out", return_span),
        return_span,
        ret: &ret,
        named,
        shape,
        classify: classifier(&args, &private, error_span, external_api),
        classified_at: match args.on {
            None | Some(On::Transient) if !external_api => Some(error_span),
            _ => None,
        },
        policy: policy_ref,
        arguments: arguments(&sig),
    };
    let prelude = || {
        let call = call_state(&args, &private, &parts.policy, shape);
        code!(#moved #items #call)
    };

    let inner_attrs = attrs
        .iter()
        .filter(|attr| matches!(attr.style, AttrStyle::Inner(_)));
    let body = match (shape, kind) {
        (Shape::SyncEarly, _) => {
            let block = attempt_body(&body, &args);
            let annotation = parts.annotation();
            // Arguments the closure can copy are copied: the success path
            // then makes no pointer to them, where a borrowing closure
            // stored one.
            let capture = moves::all_copied(&sig).then(|| code!(move));
            let looped = parts.early_first_attempt(&args, code!(#capture || #annotation #block));
            code!({ #(#inner_attrs)* #import #moved #items #looped })
        }
        (Shape::SyncLoop, _) => {
            let block = attempt_body(&body, &args);
            let annotation = parts.annotation();
            let policy = &parts.policy;
            let scope = match parts.instead(&args) {
                Some(instead) => code! {
                    __retry_call.scope_within(#policy, #instead, || #annotation #block)
                },
                None => code!(__retry_call.scope(#policy, || #annotation #block)),
            };
            let looped = parts.retry_loop(&args, scope);
            let prelude = prelude();
            code!({ #(#inner_attrs)* #import #prelude #looped })
        }
        // The async shapes differ in the parts their loop is made of; a
        // sync function has one of the sync shapes, matched above.
        (_, Kind::Sync | Kind::Async) => {
            let block = attempt_body(&body, &args);
            let looped = parts.retry_loop(&args, parts.async_attempt(&args, block));
            let prelude = prelude();
            code!({ #(#inner_attrs)* #import #prelude #looped })
        }
        (
            _,
            Kind::AsyncBlock {
                block: mut whole,
                retried,
                ..
            },
        ) => {
            let Some(tail) = item::tail_async_block_mut(&mut whole) else {
                return Err(syn::Error::new(
                    return_span,
                    "expected the body to end in an `async move { .. }` block",
                ));
            };
            let block = attempt_body(&item::Body::of(&retried), &args);
            let looped = parts.retry_loop(&args, parts.async_attempt(&args, block));
            let prelude = prelude();
            tail.block = syn::parse_quote!({ #import #prelude #looped });
            code!({ #(#inner_attrs)* #whole })
        }
    };
    Ok(code!(#head #body))
}

/// The core's private module, imported once for the whole body under a
/// name of the expansion's own, which the expansion's paths name in fewer
/// tokens than the crate's path. No trait is imported: what picks how the
/// expansion reads the user's types (an error's text, a value's judgement,
/// a field, a timeout, a hook's return) are inherent methods of probe
/// types, so the user's method calls have no trait of ours in scope to
/// consider. Every expansion names the module (its error's describer at
/// least), so the import needs no `allow(unused_imports)`, a lint check
/// per function (`benches/HISTORY.md`, Compile cost).
fn private_import(krate: Option<&syn::Path>, private: &Ident) -> TokenStream {
    // The crate's path written into the import, not made apart and joined.
    match krate {
        Some(krate) => code!(use #krate::__private as #private;),
        None => code!(use ::reattempt::__private as #private;),
    }
}

/// The names of the function's arguments but `self`; none when one of
/// them is a pattern, which names no single value.
fn arguments(sig: &syn::Signature) -> Vec<Ident> {
    let mut names = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(_) => {}
            syn::FnArg::Typed(typed) => match &*typed.pat {
                syn::Pat::Ident(pat) if pat.subpat.is_none() => names.push(pat.ident.clone()),
                _ => return Vec::new(),
            },
        }
    }
    names
}

/// What every part of the loop needs to know.
struct Parts<'a> {
    private: &'a Ident,
    outcome: Ident,
    return_span: Span,
    ret: &'a Option<Type>,
    /// Whether the outcome type is named whole, so that its error's text
    /// and its value's judgement are probed by type, not in closures.
    named: bool,
    shape: Shape,
    classify: TokenStream,
    /// Where the call that takes the classifier is made: at the error type
    /// for its own classification, which a type without one fails twice
    /// (the function, and the call's bound on it), so that the compiler
    /// reports the two as one; else at the attribute.
    classified_at: Option<Span>,
    /// The call's policy, as `scope` and `decide` take it.
    policy: TokenStream,
    /// The function's arguments but `self`, which a fallback may take by
    /// reference: none where one of them is a pattern.
    arguments: Vec<Ident>,
}

impl Parts<'_> {
    /// `-> Ret` for the body's closure, where the outcome type is named.
    fn annotation(&self) -> TokenStream {
        match self.ret {
            Some(ret) => code!(-> #ret),
            None => code!(),
        }
    }
}
