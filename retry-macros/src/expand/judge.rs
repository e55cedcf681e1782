//! How the core reads an attempt's outcome: the classifier, the error's
//! text, the judgement of a value, and the span and fields of the logs.

use proc_macro2::TokenStream;
use syn::Ident;
use syn::spanned::Spanned;

use super::Parts;
use crate::args::Args;
use crate::spanned::private_call;

/// What names the outcome type for a closure that judges its values.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// The body's closure, bound before the early first attempt.
    Body,
    /// The attempt's outcome, which `decide` reads.
    Outcome,
    /// The closure that makes a hedged function's attempts, whose
    /// outcomes are judged before any is bound.
    Attempts,
}

impl Parts<'_> {
    /// How the core reads an outcome, as `decide`'s arguments: classifier,
    /// error text, the judgement of values (`if_result`, or the value type's
    /// own) and the span of `fields(..)`.
    pub(super) fn judge(&self, args: &Args) -> TokenStream {
        self.judge_from(args, Source::Outcome)
    }

    /// [`judge`](Self::judge), with the value's judgement typed by `source`.
    pub(super) fn judge_from(&self, args: &Args, source: Source) -> TokenStream {
        let classify = &self.classify;
        let judge_value = self.judge_value(args, source);
        let fields = self.fields(args);
        let describe = self.describe();
        code! {
            #classify,
            #describe,
            #judge_value,
            #fields
        }
    }

    /// The error's text for the logs: its `Display`, else its `Debug`.
    pub(super) fn describe(&self) -> TokenStream {
        let private = self.private;
        // An error type that is neither is reported at the return type.
        let describer = Ident::new("__retry_describer", self.return_span);
        match self.ret {
            Some(ret) if self.named => code! {
                #private::ErrorProbe::<#ret>::new().#describer()
            },
            _ => code! {
                |__retry_e, __retry_f| #private::Probe::of(__retry_e).#describer()(__retry_e, __retry_f)
            },
        }
    }

    /// The judgement of a successful value: `if_result`, or the value
    /// type's own. A closure is given its argument's type by `source`:
    /// the early first attempt's body (`Source::Body`), else the outcome.
    pub(super) fn judge_value(&self, args: &Args, source: Source) -> TokenStream {
        let private = self.private;
        // A named type (never with `if_result`) is probed by name: no closure.
        if let Some(ret) = self.ret.as_ref().filter(|_| self.named) {
            return code! {
                #private::ValueProbe::<#ret>::new().__retry_judge()
            };
        }
        let closure = match &args.if_result {
            Some(predicate) => {
                // At the predicate: one of another value type is reported
                // there.
                let call = private_call(
                    "reject_with",
                    predicate.span(),
                    code!(__retry_v, #predicate),
                );
                code!(|__retry_v| #call)
            }
            None => code! {
                |__retry_v| #private::JudgeValue::judge(&#private::Probe::of(__retry_v).__retry_judge(), __retry_v)
            },
        };
        match source {
            Source::Body => code!(#private::judge_of_body(&__retry_body, #closure)),
            Source::Attempts => code!(#private::judge_of_attempts(&__retry_make, #closure)),
            Source::Outcome => {
                let outcome = &self.outcome;
                code!(#private::judge_of(&#outcome, #closure))
            }
        }
    }

    /// The arguments named in `fields(..)`: the span the call's events go
    /// in, and their visitor, for records.
    pub(super) fn fields(&self, args: &Args) -> TokenStream {
        let private = self.private;
        match &args.fields {
            Some(fields) => {
                let names = fields.iter().map(ToString::to_string);
                // An argument that is neither text nor `Debug` is reported
                // at its name in `fields(..)`.
                let probes: Vec<_> = fields
                    .iter()
                    .map(|field| Ident::new("__retry_field", field.span()))
                    .collect();
                code! {
                    #private::Named::new(
                        || {
                            #private::tracing::error_span!(target: "reattempt", "retry", #(#fields = ?#private::FieldOf::new(&#fields).#probes()),*)
                        },
                        |__retry_visit: #private::FieldVisitor<'_>| {
                            #(__retry_visit(#names, &#private::FieldOf::new(&#fields).#probes());)*
                        },
                    )
                }
            }
            None => code!(#private::NoFields),
        }
    }
}
