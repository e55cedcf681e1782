//! Code generation: a small loop around the body that asks the core what to
//! do after each attempt.
//!
//! Input:
//!
//! ```text
//! #[retry(max = 3, backoff = fixed(200ms))]
//! async fn fetch(url: &str) -> Result<String, Error> { body }
//! ```
//!
//! Output (paths shortened; locals have mixed-site hygiene):
//!
//! ```text
//! async fn fetch(url: &str) -> Result<String, Error> {
//!     let __retry_policy = &const { Policy::new(concat!(module_path!(), "::fetch"), Fixed::new(200ms)).max_attempts(3) };
//!     let mut __retry_call = Call::new(__retry_policy, async_clock());
//!     loop {
//!         let __retry_out = attempt::<Result<String, Error>, _>(async { body }).await;
//!         match __retry_call.next(__retry_out, classify_by_type, |e, f| describe(e, f)) {
//!             Step::Done(out) => return out,
//!             Step::Retry(delay) => tokio_sleep(delay).await,
//!         }
//!     }
//! }
//! ```
//!
//! A sync function runs its body as `(|| -> Ret { body })()` instead, and
//! sleeps on the thread. The body's tokens appear exactly once.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{AttrStyle, FnArg, Ident, Pat, ReturnType, Type};

use crate::args::{Args, Backoff, Jitter, Max, On};
use crate::duration::Dur;
use crate::item::{self, Function, Kind};

/// `quote!` with mixed-site hygiene: the expansion's locals (`__retry_*`)
/// can neither see nor shadow the user's names, while paths still resolve
/// at the call site.
macro_rules! code {
    ($($tokens:tt)*) => {
        quote::quote_spanned!(proc_macro2::Span::mixed_site()=> $($tokens)*)
    };
}

/// The expanded function, or the errors that keep it from being expanded.
pub fn expand(args: Args, function: Function) -> syn::Result<TokenStream> {
    validate(&args, &function)?;
    let Function { mut item, kind } = function;
    let krate = match &args.krate {
        Some(path) => path.to_token_stream(),
        None => code!(::retry),
    };
    let private = code!(#krate::__private);

    let return_span = match &item.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => item.sig.ident.span(),
    };
    // Type errors about the outcome land on the return type, not on the
    // attribute.
    let outcome = Ident::new("__retry_out", Span::mixed_site().located_at(return_span));
    let is_async = !matches!(kind, Kind::Sync);
    let prelude = prelude(&args, &item.sig.ident, &private, is_async);
    let classify = classifier(&args, &krate, error_type_span(&item.sig.output, &kind));
    let sleep = match (&args.sleep, is_async) {
        (None, false) => code!(#private::thread_sleep(__retry_delay)),
        (None, true) => code!(#private::tokio_sleep(__retry_delay).await),
        (Some(_), false) => code!(__retry_sleep(__retry_delay)),
        (Some(_), true) => code!(__retry_sleep(__retry_delay).await),
    };
    let step = |attempt: TokenStream| {
        code! {
            loop {
                #[allow(clippy::redundant_closure_call)]
                let #outcome = #attempt;
                match __retry_call.next(
                    #outcome,
                    #classify,
                    |__retry_e, __retry_f| {
                        #[allow(unused_imports)]
                        use #private::{DescribeDebug as _, DescribeDisplay as _};
                        (&#private::Describe(__retry_e)).__retry_describe(__retry_f)
                    },
                ) {
                    #private::Step::Done(__retry_out) => return __retry_out,
                    #private::Step::Retry(__retry_delay) => #sleep,
                }
            }
        }
    };

    let (inner_attrs, outer_attrs): (Vec<_>, Vec<_>) = item
        .attrs
        .iter()
        .partition(|attr| matches!(attr.style, AttrStyle::Inner(_)));
    let body = match kind {
        Kind::Sync => {
            let block = attempt_block(&item.block, &args);
            let annotation = match erased_return(&item.sig.output) {
                Some(ret) => code!(-> #ret),
                None => code!(),
            };
            let looped = step(code!((|| #annotation #block)()));
            code!({ #(#inner_attrs)* #prelude #looped })
        }
        Kind::Async => {
            let block = attempt_block(&item.block, &args);
            let attempt = pinned_attempt(erased_return(&item.sig.output), &private, block);
            let looped = step(code!(#attempt.await));
            code!({ #(#inner_attrs)* #prelude #looped })
        }
        Kind::AsyncBlock { output } => {
            let mut output = *output;
            ImplTraitEraser.visit_type_mut(&mut output);
            let output = match output {
                Type::Infer(_) => None,
                output => Some(output),
            };
            let Some(tail) = item::tail_async_block_mut(&mut item.block) else {
                return Err(syn::Error::new(
                    return_span,
                    "expected the body to end in an `async move { .. }` block",
                ));
            };
            let block = attempt_block(&tail.block, &args);
            let attempt = pinned_attempt(output, &private, block);
            let looped = step(code!(#attempt.await));
            tail.block = syn::parse_quote!({ #prelude #looped });
            let block = &item.block;
            code!({ #(#inner_attrs)* #block })
        }
    };
    let vis = &item.vis;
    let sig = &item.sig;
    Ok(code! {
        #(#outer_attrs)*
        #vis #sig #body
    })
}

/// The rules that relate arguments to each other and to the function.
fn validate(args: &Args, function: &Function) -> syn::Result<()> {
    let mut errors: Option<syn::Error> = None;
    let mut fail = |error: syn::Error| match &mut errors {
        Some(all) => all.combine(error),
        None => errors = Some(error),
    };
    if let Some(Max::Unbounded(span)) = args.max
        && args.deadline.is_none()
    {
        fail(syn::Error::new(
            span,
            "`max = unbounded` needs a `deadline`: without one a call that keeps failing would retry forever\nadd `deadline = 30s` (or another duration), or give `max` a number",
        ));
    }
    if let Some(clone) = &args.clone {
        for name in clone {
            if let Err(error) = check_clone(name, function) {
                fail(error);
            }
        }
    }
    match errors {
        Some(errors) => Err(errors),
        None => Ok(()),
    }
}

/// `clone(x)` must name a by-value argument.
fn check_clone(name: &Ident, function: &Function) -> syn::Result<()> {
    let sig = &function.item.sig;
    if name == "self" {
        return Err(syn::Error::new(
            name.span(),
            "`clone(self)` is not supported: take `&self` (or `self: Arc<Self>` used by reference) so each attempt can borrow it",
        ));
    }
    let mut names = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        if pat.ident == *name {
            if let Type::Reference(_) = &*typed.ty {
                return Err(syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` is a reference: each attempt reborrows it, so it needs no `clone`"
                    ),
                ));
            }
            return Ok(());
        }
        names.push(format!("`{}`", pat.ident));
    }
    let known = if names.is_empty() {
        "it takes no named arguments".to_owned()
    } else {
        format!("its arguments are {}", names.join(", "))
    };
    Err(syn::Error::new(
        name.span(),
        format!(
            "`clone({name})` names no argument of `{}`; {known}",
            sig.ident
        ),
    ))
}

/// The statements before the loop: policy, classifier, sleeper, call state.
fn prelude(args: &Args, fn_name: &Ident, private: &TokenStream, is_async: bool) -> TokenStream {
    let name = match &args.name {
        Some(name) => name.to_token_stream(),
        None => {
            let fn_name = fn_name.to_string();
            code!(::core::concat!(::core::module_path!(), "::", #fn_name))
        }
    };
    let (backoff, backoff_is_const) = backoff(args.backoff.as_ref(), private);
    let mut policy = code!(#private::Policy::new(#name, #backoff));
    match &args.max {
        Some(Max::Limited(n)) => policy.extend(code!(.max_attempts(#n))),
        Some(Max::Unbounded(_)) => policy.extend(code!(.unbounded())),
        None => {}
    }
    if let Some(jitter) = &args.jitter {
        let jitter = match *jitter {
            Jitter::None => None,
            Jitter::Proportional(ratio) => Some(code!(Proportional(#ratio))),
            Jitter::Full => Some(code!(Full)),
            Jitter::Equal => Some(code!(Equal)),
            Jitter::Decorrelated => Some(code!(Decorrelated)),
        };
        if let Some(jitter) = jitter {
            policy.extend(code!(.jitter(#private::Jitter::#jitter)));
        }
    }
    let mut deadline_is_const = true;
    if let Some(deadline) = &args.deadline {
        deadline_is_const = deadline.literal_value().is_some();
        let deadline = deadline.tokens();
        policy.extend(code!(.deadline(#deadline)));
    }
    // A policy of literals is a constant: the call keeps only a reference.
    let policy = if backoff_is_const && deadline_is_const {
        code!(let __retry_policy = &const { #policy };)
    } else {
        code!(let __retry_policy = &#policy;)
    };
    let on = match &args.on {
        Some(On::Expr(expr)) => code!(let __retry_on = #expr;),
        _ => code!(),
    };
    let sleeper = match (&args.sleep, is_async) {
        (Some(sleep), false) => code!(let __retry_sleep = #private::sync_sleeper(#sleep);),
        (Some(sleep), true) => code!(let __retry_sleep = #private::async_sleeper(#sleep);),
        (None, _) => code!(),
    };
    let clock = if is_async {
        code!(#private::async_clock())
    } else {
        code!(#private::SystemClock)
    };
    code! {
        #policy
        #on
        #sleeper
        let mut __retry_call = #private::Call::new(__retry_policy, #clock);
    }
}

/// The backoff expression, and whether it can be built in a constant.
fn backoff(backoff: Option<&Backoff>, private: &TokenStream) -> (TokenStream, bool) {
    let secs = |n| Dur::default_literal(std::time::Duration::from_secs(n));
    let or = |d: &Option<Dur>, default: Dur| d.clone().unwrap_or(default);
    let all_literal = |ds: &[&Dur]| ds.iter().all(|d| d.literal_value().is_some());
    match backoff {
        None => (code!(#private::Exponential::DEFAULT), true),
        Some(Backoff::Exp { base, factor, max }) => {
            let (base, max) = (or(base, secs(1)), or(max, secs(30)));
            let factor = factor.unwrap_or(2.0);
            let (b, m) = (base.tokens(), max.tokens());
            (
                code!(#private::Exponential::new(#b, #factor, #m)),
                all_literal(&[&base, &max]),
            )
        }
        Some(Backoff::Fixed(delay)) => {
            let d = delay.tokens();
            (code!(#private::Fixed::new(#d)), all_literal(&[delay]))
        }
        Some(Backoff::Linear { base, step, max }) => {
            let base = or(base, secs(1));
            let step = or(step, base.clone());
            let max = or(max, secs(30));
            let (b, s, m) = (base.tokens(), step.tokens(), max.tokens());
            (
                code!(#private::Linear::new(#b, #s, #m)),
                all_literal(&[&base, &step, &max]),
            )
        }
        Some(Backoff::Fibonacci { base, max }) => {
            let (base, max) = (or(base, secs(1)), or(max, secs(30)));
            let (b, m) = (base.tokens(), max.tokens());
            (
                code!(#private::Fibonacci::new(#b, #m)),
                all_literal(&[&base, &max]),
            )
        }
        Some(Backoff::None) => (code!(#private::NoBackoff), true),
        Some(Backoff::Closure(closure)) => (code!(#private::backoff_fn(#closure)), false),
        Some(Backoff::Expr(expr)) => (code!(#expr), false),
    }
}

/// The classifier handed to `Call::next`: a function of the error. Without
/// `on` it is the error type's own classification, named at the error type
/// so that a type without one is reported there.
fn classifier(args: &Args, krate: &TokenStream, error_span: Span) -> TokenStream {
    let private = code!(#krate::__private);
    match &args.on {
        None | Some(On::Transient) => respan(code!(#private::classify_by_type), error_span),
        Some(On::Matches(pat)) => {
            code!(|__retry_e| #private::into_class(::core::matches!(__retry_e, #pat)))
        }
        Some(On::Closure(closure)) => {
            code!(|__retry_e| #private::classify_with(__retry_e, #closure))
        }
        Some(On::Expr(_)) => {
            code!(|__retry_e| #private::Classify::classify(&__retry_on, __retry_e))
        }
    }
}

/// The body of one attempt: the user's block, with `let x = x.clone();`
/// for each `clone(x)` put first inside its own braces (a block nested in
/// another would draw an `unused_braces` warning on one-line bodies).
fn attempt_block(block: &syn::Block, args: &Args) -> TokenStream {
    let Some(clone) = &args.clone else {
        return block.to_token_stream();
    };
    let mut block = block.clone();
    let clones = clone.iter().map(|name| -> syn::Stmt {
        syn::parse_quote!(let #name = ::core::clone::Clone::clone(&#name);)
    });
    block.stmts.splice(0..0, clones);
    block.to_token_stream()
}

/// The attempt as an async block whose output is pinned to the return type,
/// so that `?` converts errors into it.
fn pinned_attempt(ret: Option<Type>, private: &TokenStream, block: TokenStream) -> TokenStream {
    match ret {
        Some(ret) => code!(#private::attempt::<#ret, _>(async #block)),
        None => code!(async #block),
    }
}

/// The return type with `impl Trait` replaced by `_`, or `None` when nothing
/// of it can be named.
fn erased_return(output: &ReturnType) -> Option<Type> {
    let mut ty = match output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => syn::parse_quote!(()),
    };
    ImplTraitEraser.visit_type_mut(&mut ty);
    match ty {
        Type::Infer(_) => None,
        ty => Some(ty),
    }
}

struct ImplTraitEraser;

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            *ty = Type::Infer(syn::TypeInfer {
                underscore_token: syn::Token![_](impl_trait.impl_token.span),
            });
        } else {
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
}

/// Where the error type is written: `E` in `-> Result<T, E>`, else the
/// whole return type (an alias such as `io::Result<T>` hides it).
fn error_type_span(output: &ReturnType, kind: &Kind) -> Span {
    let ty = match (kind, output) {
        (Kind::AsyncBlock { output }, _) => &**output,
        (_, ReturnType::Type(_, ty)) => &**ty,
        (_, ReturnType::Default) => return Span::call_site(),
    };
    if let Type::Path(path) = ty
        && let Some(last) = path.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(error)) = args.args.iter().nth(1)
    {
        return error.span();
    }
    ty.span()
}

/// The same tokens, all at `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
