//! By-value arguments (a by-value `self` included) that the body moves.
//!
//! `#[retry]` runs the body once per attempt, so a body that moves a
//! by-value argument, or a field of one, cannot compile; rustc's own error
//! (E0382) then points at the attribute. For each argument or field the
//! body plainly moves (passes it to a function, binds it to a name, puts it
//! in a struct, tuple or array, returns it, loops over it), the expansion
//! adds a check that compiles to nothing when its type is `Copy` or a
//! `&mut` (which a call reborrows), and otherwise fails at that use with a
//! message that names `clone(..)`. Uses it cannot judge (inside macros,
//! closures, async blocks, nested items; method receivers; destructuring
//! patterns; names bound again in the body) are left to rustc. Of a
//! function that returns the async block its body ends with, only that
//! block's content runs once per attempt: what comes before it runs once
//! per call, and may move an argument.

use std::borrow::Cow;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Block, Expr, FnArg, Ident, Member, Pat, Signature, Type};

/// A body's statements, parsed.
pub struct Parsed<'b> {
    /// What each attempt runs.
    pub each_attempt: Cow<'b, Block>,
    /// What runs once per call around it (the statements before a returned
    /// async block), if anything does.
    pub once: Option<&'b Block>,
}

/// A by-value argument, or a field of one, that each attempt moves.
pub struct Moved {
    /// The argument.
    pub name: Ident,
    /// The fields followed from it to what is moved (none: the argument
    /// itself), as the body writes them.
    pub fields: Vec<Member>,
    /// The first move.
    pub at: Span,
}

/// What each attempt moves of the by-value arguments: for each argument,
/// its first move whole and the first move of each of its fields.
/// `parsed` gives the body's statements, or `None` when they do not parse
/// (the compiler then judges them); it is called only when some argument
/// could be moved.
pub fn moved_arguments<'b>(
    sig: &Signature,
    parsed: impl FnOnce() -> Option<Parsed<'b>>,
    cloned: &[Ident],
) -> Vec<Moved> {
    let candidates: Vec<Cow<'_, Ident>> = sig
        .inputs
        .iter()
        .filter_map(|input| {
            let typed = match input {
                // `self` or `mut self`, taken by value: `clone(self)` is
                // not offered, so it is never in `cloned`.
                FnArg::Receiver(receiver) => {
                    let by_value = receiver.reference.is_none() && receiver.colon_token.is_none();
                    return by_value
                        .then(|| Cow::Owned(Ident::new("self", receiver.self_token.span)));
                }
                FnArg::Typed(typed) => typed,
            };
            let Pat::Ident(pat) = &*typed.pat else {
                return None;
            };
            let by_value = pat.by_ref.is_none()
                && pat.subpat.is_none()
                && !matches!(&*typed.ty, Type::Reference(_) | Type::Ptr(_))
                && !is_primitive(&typed.ty);
            (by_value && !cloned.contains(&pat.ident)).then_some(Cow::Borrowed(&pat.ident))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let Some(parsed) = parsed() else {
        return Vec::new();
    };
    // A name bound again anywhere may not be the argument where it is used.
    let mut bound = Bound::default();
    bound.visit_block(&parsed.each_attempt);
    if let Some(once) = parsed.once {
        bound.visit_block(once);
    }
    candidates
        .into_iter()
        .filter(|name| !bound.names.contains(name))
        .flat_map(|name| {
            let mut moves = Moves {
                name: &name,
                firsts: Vec::new(),
            };
            moves.visit_block(&parsed.each_attempt);
            let firsts = moves.firsts;
            firsts.into_iter().map(move |(fields, at)| Moved {
                name: name.clone().into_owned(),
                fields,
                at,
            })
        })
        .collect()
}

/// Whether every argument, the receiver included, is a number, `bool`,
/// `char` or shared reference bound to a plain name: values that a `move`
/// closure can copy without the body telling the copy from the argument.
pub fn all_copied(sig: &Signature) -> bool {
    sig.inputs.iter().all(|input| match input {
        FnArg::Receiver(receiver) => {
            receiver.colon_token.is_none()
                && receiver.reference.is_some()
                && receiver.mutability.is_none()
        }
        FnArg::Typed(typed) => {
            matches!(&*typed.pat, Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none())
                && match &*typed.ty {
                    Type::Reference(reference) => reference.mutability.is_none(),
                    ty => is_primitive(ty),
                }
        }
    })
}

/// A number, `bool` or `char`: `Copy`, so not worth a check.
fn is_primitive(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char",
    ];
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.get_ident().is_some_and(|ident| PRIMITIVES.iter().any(|p| ident == p)))
}

/// Every name the body binds in a pattern, anywhere.
#[derive(Default)]
struct Bound {
    names: Vec<Ident>,
}

impl<'ast> Visit<'ast> for Bound {
    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.names.push(pat.ident.clone());
        visit::visit_pat_ident(self, pat);
    }
}

/// Where the body first moves `name`, and each field path of it.
struct Moves<'n> {
    name: &'n Ident,
    firsts: Vec<(Vec<Member>, Span)>,
}

impl Moves<'_> {
    fn check(&mut self, expr: &Expr) {
        let mut fields = Vec::new();
        let mut base = expr;
        while let Expr::Field(field) = base {
            fields.push(field.member.clone());
            base = &field.base;
        }
        fields.reverse();
        if let Expr::Path(path) = base
            && path.qself.is_none()
            && path.path.is_ident(self.name)
            && !self.firsts.iter().any(|(seen, _)| *seen == fields)
        {
            self.firsts.push((fields, expr.span()));
        }
    }
}

impl<'ast> Visit<'ast> for Moves<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        match expr {
            // What captures or defers is judged by rustc.
            Expr::Closure(_) | Expr::Async(_) | Expr::Macro(_) => return,
            Expr::Call(call) => call.args.iter().for_each(|arg| self.check(arg)),
            Expr::MethodCall(call) => call.args.iter().for_each(|arg| self.check(arg)),
            Expr::Struct(literal) => literal.fields.iter().for_each(|f| self.check(&f.expr)),
            Expr::Tuple(tuple) => tuple.elems.iter().for_each(|e| self.check(e)),
            Expr::Array(array) => array.elems.iter().for_each(|e| self.check(e)),
            Expr::Return(ret) => ret.expr.iter().for_each(|e| self.check(e)),
            Expr::Assign(assign) => self.check(&assign.right),
            Expr::ForLoop(for_loop) => self.check(&for_loop.expr),
            _ => {}
        }
        visit::visit_expr(self, expr);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        // `let y = x;` moves `x`. `let _ = x;` binds nothing, so moves
        // nothing, and what a destructuring pattern moves depends on the
        // types of the parts it binds by value, which rustc judges.
        let pat = match &local.pat {
            Pat::Type(typed) => &*typed.pat,
            pat => pat,
        };
        let binds_whole =
            matches!(pat, Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none());
        if binds_whole && let Some(init) = &local.init {
            self.check(&init.expr);
        }
        visit::visit_local(self, local);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copied(sig: &str) -> bool {
        all_copied(&syn::parse_str::<Signature>(sig).unwrap())
    }

    #[test]
    fn numbers_and_shared_references_are_copied_and_nothing_else() {
        assert!(copied("fn f()"));
        assert!(copied("fn f(mut n: u64, on: bool, c: char, s: &str)"));
        assert!(copied("fn f(&self, key: &'a [u8])"));
        assert!(!copied("fn f(&mut self)"));
        assert!(!copied("fn f(self)"));
        assert!(!copied("fn f(self: &Self)"));
        assert!(!copied("fn f(n: u64, out: &mut Vec<u8>)"));
        assert!(!copied("fn f(n: u64, name: String)"));
        assert!(!copied("fn f(n: Wrapping<u64>)"));
        assert!(!copied("fn f((a, b): (u64, u64))"));
        assert!(!copied("fn f(ref n: u64)"));
    }
}
