//! The annotated item: which function shapes `#[retry]` takes, and where in
//! each the retried body is.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{
    Block, Expr, ExprAsync, GenericArgument, Item, ItemFn, PathArguments, ReturnType, Stmt,
    TraitItemFn, Type, TypeParamBound,
};

/// A function `#[retry]` can wrap.
pub struct Function {
    pub item: ItemFn,
    pub kind: Kind,
}

/// Where the retried body is.
pub enum Kind {
    /// `fn`: the body runs as a closure per attempt.
    Sync,
    /// `async fn`: the body runs as an async block per attempt.
    Async,
    /// A sync `fn` returning a future whose body ends in `async move { .. }`
    /// or `Box::pin(async move { .. })`, as `#[async_trait]` writes methods:
    /// the async block's content is retried. `output` is the future's
    /// `Output` type.
    AsyncBlock { output: Box<Type> },
}

/// Reads the item; an error for items `#[retry]` cannot wrap, or `Ok(None)`
/// when the item does not parse at all (the compiler then reports the
/// syntax error on the untouched tokens).
pub fn parse(tokens: TokenStream) -> syn::Result<Option<Function>> {
    let item: ItemFn = match syn::parse2(tokens.clone()) {
        Ok(item) => item,
        Err(_) => return not_a_function(tokens).map(|()| None),
    };
    let sig = &item.sig;
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new(
            constness.span,
            "`#[retry]` cannot go on a `const fn`: retrying loops and waits at run time",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new(
            variadic.span(),
            "`#[retry]` cannot wrap a C-variadic function: its `...` arguments cannot be handed to each attempt",
        ));
    }
    let kind = if sig.asyncness.is_some() {
        Kind::Async
    } else if let ReturnType::Type(_, ty) = &sig.output
        && let Some(output) = future_output(ty)
    {
        if tail_async_block_mut(&mut item.block.clone()).is_none() {
            return Err(syn::Error::new(
                ty.span(),
                "this function returns a future that its body builds elsewhere; retrying the body would only rebuild the future, not run it again\nwrite it as an `async fn`, or end the body with an `async move { .. }` block",
            ));
        }
        Kind::AsyncBlock {
            output: Box::new(output.clone()),
        }
    } else {
        Kind::Sync
    };
    if let ReturnType::Default = sig.output
        && !matches!(kind, Kind::AsyncBlock { .. })
    {
        return Err(syn::Error::new(
            sig.ident.span(),
            format!(
                "`#[retry]` needs a function that returns `Result<T, E>`; `{}` returns `()`, so there is no error to retry on",
                sig.ident
            ),
        ));
    }
    Ok(Some(Function { item, kind }))
}

/// Explains why an item that is not a plain function cannot be wrapped, or
/// `Ok` when the tokens do not parse as an item at all.
fn not_a_function(tokens: TokenStream) -> syn::Result<()> {
    if let Ok(method) = syn::parse2::<TraitItemFn>(tokens.clone())
        && method.default.is_none()
    {
        let span = method
            .semi_token
            .map_or(method.sig.ident.span(), |semi| semi.span);
        return Err(syn::Error::new(
            span,
            "`#[retry]` needs a body to retry; put it on the method's implementation, or give this trait method a default body",
        ));
    }
    let Ok(item) = syn::parse2::<Item>(tokens) else {
        return Ok(());
    };
    let (what, span): (&str, Span) = match &item {
        Item::Struct(s) => ("a struct", s.struct_token.span),
        Item::Enum(e) => ("an enum", e.enum_token.span),
        Item::Union(u) => ("a union", u.union_token.span),
        Item::Trait(t) => ("a trait", t.trait_token.span),
        Item::Impl(i) => ("an impl block", i.impl_token.span),
        Item::Mod(m) => ("a module", m.mod_token.span),
        Item::Const(c) => ("a const", c.const_token.span),
        Item::Static(s) => ("a static", s.static_token.span),
        Item::Type(t) => ("a type alias", t.type_token.span),
        Item::ForeignMod(f) => ("an extern block", f.abi.extern_token.span),
        Item::Use(u) => ("a use declaration", u.use_token.span),
        other => ("this item", other.span()),
    };
    Err(syn::Error::new(
        span,
        format!("`#[retry]` goes on a function (`fn` or `async fn`), not on {what}"),
    ))
}

/// The `Output` of a `impl Future<Output = T>` or `Pin<Box<dyn Future<Output
/// = T> + ..>>` return type.
fn future_output(ty: &Type) -> Option<&Type> {
    match ty {
        Type::ImplTrait(t) => bounds_output(t.bounds.iter()),
        Type::TraitObject(t) => bounds_output(t.bounds.iter()),
        Type::Paren(p) => future_output(&p.elem),
        Type::Group(g) => future_output(&g.elem),
        Type::Path(p) => {
            let last = p.path.segments.last()?;
            if last.ident != "Pin" && last.ident != "Box" {
                return None;
            }
            let PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            args.args.iter().find_map(|arg| match arg {
                GenericArgument::Type(inner) => future_output(inner),
                _ => None,
            })
        }
        _ => None,
    }
}

fn bounds_output<'a>(mut bounds: impl Iterator<Item = &'a TypeParamBound>) -> Option<&'a Type> {
    bounds.find_map(|bound| {
        let TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let last = t.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(&assoc.ty),
            _ => None,
        })
    })
}

/// The async block the body ends with, bare or inside `Box::pin(..)`.
pub fn tail_async_block_mut(block: &mut Block) -> Option<&mut ExprAsync> {
    match block.stmts.last_mut()? {
        Stmt::Expr(expr, None) => async_block_in_mut(expr),
        _ => None,
    }
}

fn async_block_in_mut(expr: &mut Expr) -> Option<&mut ExprAsync> {
    match expr {
        Expr::Async(block) if block.capture.is_some() => Some(block),
        Expr::Call(call) if call.args.len() == 1 && is_box_pin(&call.func) => {
            async_block_in_mut(call.args.first_mut()?)
        }
        _ => None,
    }
}

fn is_box_pin(func: &Expr) -> bool {
    let Expr::Path(path) = func else {
        return false;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segments.ends_with(&["Box".to_owned(), "pin".to_owned()])
}
