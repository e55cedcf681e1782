//! The annotated item: which function shapes `#[retry]` takes, and where in
//! each the retried body is.

use std::mem;

use proc_macro2::extra::DelimSpan;
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::TokenStreamExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{
    Attribute, Block, Expr, ExprAsync, GenericArgument, Item, PathArguments, ReturnType, Signature,
    Stmt, TraitItemFn, Type, TypeParamBound, Visibility, token,
};

/// A function `#[retry]` can wrap.
pub struct Function {
    /// Outer attributes, then the body's inner ones (as `syn::ItemFn` holds
    /// them).
    pub attrs: Vec<Attribute>,
    /// The outer attributes, visibility and signature as written, which
    /// the expansion passes on unchanged: printing them again from `attrs`
    /// and `sig` cost the unoptimised macro more than keeping them.
    pub head: TokenStream,
    pub sig: Signature,
    pub body: Body,
    pub kind: Kind,
}

/// The body's statements as written, inner attributes taken out. They pass
/// through whole, and are parsed only where the expansion looks inside
/// them: the macro runs unoptimised, and reading every token of a body
/// was most of its cost.
pub enum Body {
    /// The body as written, with no inner attributes: passed on as it is,
    /// since building a group anew costs a copy of every token.
    Whole(Group),
    /// Statements to put back in braces spanned as `braces`: a body's whose
    /// inner attributes were taken out, or a parsed block's.
    Stmts {
        braces: DelimSpan,
        stmts: TokenStream,
    },
}

impl Body {
    /// A parsed block's statements, as a body.
    pub fn of(block: &Block) -> Body {
        let mut stmts = TokenStream::new();
        stmts.append_all(&block.stmts);
        Body::Stmts {
            braces: block.brace_token.span,
            stmts,
        }
    }

    /// The span of the braces, and the statements.
    fn parts(&self) -> (DelimSpan, TokenStream) {
        match self {
            Body::Whole(group) => (group.delim_span(), group.stream()),
            Body::Stmts { braces, stmts } => (*braces, stmts.clone()),
        }
    }

    /// The body's statements, parsed.
    pub fn block(&self) -> syn::Result<Block> {
        let (braces, stmts) = self.parts();
        Ok(Block {
            brace_token: token::Brace { span: braces },
            stmts: Block::parse_within.parse2(stmts)?,
        })
    }

    /// The body in its own braces, with `first` before its statements.
    pub fn with_first(&self, mut first: TokenStream) -> TokenStream {
        if let Body::Whole(group) = self
            && first.is_empty()
        {
            return TokenTree::Group(group.clone()).into();
        }
        let (braces, stmts) = self.parts();
        first.extend(stmts);
        let mut group = Group::new(Delimiter::Brace, first);
        group.set_span(braces.join());
        TokenTree::Group(group).into()
    }
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
    /// `Output` type, `block` the body, parsed, with that block emptied, and
    /// `retried` the block's statements. What comes before the block runs
    /// once, when the future is built.
    AsyncBlock {
        output: Box<Type>,
        block: Box<Block>,
        retried: Box<Block>,
    },
}

/// A function's attributes, its head as written (see [`Function::head`]),
/// its signature and its body, as `syn::ItemFn` reads them but without
/// reading the body's statements: the body is the last token tree, its
/// inner attributes the `#![..]` it starts with.
fn function(tokens: TokenStream) -> syn::Result<(Vec<Attribute>, TokenStream, Signature, Body)> {
    let mut head: Vec<TokenTree> = tokens.into_iter().collect();
    // The error is never shown: the caller then says what the item is.
    let Some(body) = head.pop().and_then(braces) else {
        return Err(syn::Error::new(
            Span::call_site(),
            "expected a function body",
        ));
    };
    let read_head = |input: ParseStream| {
        let attrs = input.call(Attribute::parse_outer)?;
        input.parse::<Visibility>()?;
        let sig: Signature = input.parse()?;
        Ok((attrs, sig))
    };
    let head: TokenStream = head.into_iter().collect();
    let (mut attrs, sig) = read_head.parse2(head.clone())?;
    // Only a body that starts with `#!` is read whole: the unoptimised
    // macro spent 3 % of its run on a body of a dozen statements wrapping
    // each token it would not look at, and freeing them.
    let mut trees = body.stream().into_iter();
    let starts_inner = matches!(
        (trees.next(), trees.next()),
        (Some(TokenTree::Punct(hash)), Some(TokenTree::Punct(bang)))
            if hash.as_char() == '#' && bang.as_char() == '!'
    );
    let mut stmts: Vec<TokenTree> = if starts_inner {
        body.stream().into_iter().collect()
    } else {
        Vec::new()
    };
    let inner = inner_attributes(&stmts);
    let body = if inner == 0 {
        Body::Whole(body)
    } else {
        let rest = stmts.split_off(inner);
        attrs.extend(Attribute::parse_inner.parse2(stmts.into_iter().collect())?);
        Body::Stmts {
            braces: body.delim_span(),
            stmts: rest.into_iter().collect(),
        }
    };
    Ok((attrs, head, sig, body))
}

/// The braced group `tree` is, or holds alone in invisible delimiters: a
/// declarative macro's `$body:block` reaches the attribute in those.
fn braces(tree: TokenTree) -> Option<Group> {
    let TokenTree::Group(group) = tree else {
        return None;
    };
    match group.delimiter() {
        Delimiter::Brace => Some(group),
        Delimiter::None => {
            let mut trees = group.stream().into_iter();
            match (trees.next(), trees.next()) {
                (Some(only), None) => braces(only),
                _ => None,
            }
        }
        Delimiter::Parenthesis | Delimiter::Bracket => None,
    }
}

/// How many of the body's first token trees are inner attributes: `#`, `!`
/// and a bracketed group each.
fn inner_attributes(trees: &[TokenTree]) -> usize {
    let mut end = 0;
    while let [
        TokenTree::Punct(hash),
        TokenTree::Punct(bang),
        TokenTree::Group(group),
        ..,
    ] = &trees[end..]
        && hash.as_char() == '#'
        && bang.as_char() == '!'
        && group.delimiter() == Delimiter::Bracket
    {
        end += 3;
    }
    end
}

/// Reads the item; an error for items `#[retry]` cannot wrap, or `Ok(None)`
/// when what it must read does not parse (the compiler then reports the
/// syntax error on the untouched tokens). A body's statements it does not
/// read are the compiler's to judge, in the expansion.
pub fn parse(tokens: TokenStream) -> syn::Result<Option<Function>> {
    let (attrs, head, sig, body) = match function(tokens.clone()) {
        Ok(parts) => parts,
        Err(_) => return not_a_function(tokens).map(|()| None),
    };
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
        // Its statements must be read to find the async block; when they
        // do not parse, the compiler reports why on the untouched tokens.
        let Ok(mut block) = body.block() else {
            return Ok(None);
        };
        let Some(tail) = tail_async_block_mut(&mut block) else {
            return Err(syn::Error::new(
                ty.span(),
                "this function returns a future that its body builds elsewhere; retrying the body would only rebuild the future, not run it again\nwrite it as an `async fn`, or end the body with an `async move { .. }` block",
            ));
        };
        let emptied = Block {
            brace_token: tail.block.brace_token,
            stmts: Vec::new(),
        };
        let retried = mem::replace(&mut tail.block, emptied);
        Kind::AsyncBlock {
            output: Box::new(output.clone()),
            block: Box::new(block),
            retried: Box::new(retried),
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
    Ok(Some(Function {
        attrs,
        head,
        sig,
        body,
        kind,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn function_of(source: &str) -> Function {
        match parse(source.parse().unwrap()) {
            Ok(Some(function)) => function,
            Ok(None) => panic!("`{source}` was left to the compiler"),
            Err(error) => panic!("`{source}` was refused: {error}"),
        }
    }

    #[test]
    fn a_body_without_inner_attributes_passes_through_as_written() {
        let source = "fn f(x: u64) -> Result<u64, E> { let y = x + 1; g(y)? ; Ok(y) }";
        let function = function_of(source);
        assert!(function.attrs.is_empty());
        assert_eq!(function.sig.ident, "f");
        let body = function.body.with_first(TokenStream::new()).to_string();
        assert_eq!(body, "{ let y = x + 1 ; g (y) ? ; Ok (y) }");
        assert_eq!(function.body.block().unwrap().stmts.len(), 3);
    }

    #[test]
    fn inner_attributes_join_the_outer_ones_and_leave_the_body() {
        let source = "#[inline] pub fn f() -> Result<(), E> { #![allow(unused)] #![deny(unsafe_code)] Ok(()) }";
        let function = function_of(source);
        let attrs: Vec<String> = function
            .attrs
            .iter()
            .map(|attr| attr.to_token_stream().to_string())
            .collect();
        assert_eq!(
            attrs,
            [
                "# [inline]",
                "# ! [allow (unused)]",
                "# ! [deny (unsafe_code)]"
            ]
        );
        let body = function.body.with_first(TokenStream::new()).to_string();
        assert_eq!(body, "{ Ok (()) }");
    }

    #[test]
    fn what_goes_first_goes_inside_the_braces() {
        let function = function_of("fn f(a: String) -> Result<(), E> { use_it(a) }");
        let first: TokenStream = "let a = a.clone();".parse().unwrap();
        let body = function.body.with_first(first).to_string();
        assert_eq!(body, "{ let a = a . clone () ; use_it (a) }");
    }

    #[test]
    fn a_body_that_does_not_parse_is_wrapped_and_left_to_the_compiler() {
        // The compiler reads the body in the expansion and reports its
        // syntax error there (`tests-build` pins the message).
        let function = function_of("fn f() -> Result<(), E> { let x = 1 Ok(()) }");
        assert!(function.body.block().is_err());
    }

    #[test]
    fn items_that_are_not_functions_are_refused_or_left_alone() {
        let error = parse("struct S { a: u8 }".parse().unwrap()).err().unwrap();
        assert!(error.to_string().contains("not on a struct"), "{error}");
        let error = parse("fn f() -> Result<(), E>;".parse().unwrap())
            .err()
            .unwrap();
        assert!(error.to_string().contains("needs a body"), "{error}");
        assert!(matches!(parse("+ {}".parse().unwrap()), Ok(None)));
        assert!(matches!(parse(TokenStream::new()), Ok(None)));
    }
}
