//! The arguments whose value is one word of a short list: `retry_after`,
//! `preset`, `nested`, `idempotent`.

use syn::parse::ParseStream;
use syn::{Ident, LitBool};

use crate::hint;

/// `preset = ...`: the three situations backend code meets most.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Network,
    ExternalApi,
    Internal,
}

/// `idempotent = ...`: whether the operation may take effect twice.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Idempotent {
    /// `true`, the default: it may.
    Yes,
    /// `false`: it must not, so only failures that did not take effect are
    /// retried.
    No,
    /// `key`: it sends the call's idempotency key, so the server
    /// deduplicates it and every failure may be retried.
    Key,
}

/// `honor` (true) or `ignore` (false).
pub(super) fn retry_after(input: ParseStream) -> syn::Result<bool> {
    let wrong = |span| {
        syn::Error::new(
            span,
            "`retry_after` is `honor` (wait as long as the server asks, up to `max_retry_after`) or `ignore` (always use the backoff)",
        )
    };
    let value: Ident = input.parse().map_err(|e| wrong(e.span()))?;
    match value.to_string().as_str() {
        "honor" | "honour" => Ok(true),
        "ignore" => Ok(false),
        _ => Err(wrong(value.span())),
    }
}

pub(super) fn preset(input: ParseStream) -> syn::Result<Preset> {
    let allowed = "`preset` is `network`, `external_api` or `internal`";
    let name: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), allowed))?;
    match name.to_string().as_str() {
        "network" => Ok(Preset::Network),
        "external_api" => Ok(Preset::ExternalApi),
        "internal" => Ok(Preset::Internal),
        other => {
            let near = hint::closest(other, &["network", "external_api", "internal"])
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            Err(syn::Error::new(
                name.span(),
                format!("unknown preset `{other}`{near}\n{allowed}"),
            ))
        }
    }
}

/// `single` (true) or `allow` (false).
pub(super) fn nested_single(input: ParseStream) -> syn::Result<bool> {
    let usage = "`nested` is `allow` (retry inside another retried call too) or `single` (one attempt while an outer retry is active)";
    let value: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), usage))?;
    match value.to_string().as_str() {
        "allow" => Ok(false),
        "single" => Ok(true),
        _ => Err(syn::Error::new(value.span(), usage)),
    }
}

pub(super) fn idempotent(input: ParseStream) -> syn::Result<Idempotent> {
    let usage = "`idempotent` is `true` (the default: the operation may happen twice), `false` (it must not: only failures that did not take effect are retried) or `key` (it sends the call's idempotency key, so the server deduplicates it)";
    if input.peek(Ident) {
        let value: Ident = input.parse()?;
        return match value.to_string().as_str() {
            "key" => Ok(Idempotent::Key),
            _ => Err(syn::Error::new(value.span(), usage)),
        };
    }
    let value: LitBool = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), usage))?;
    Ok(if value.value {
        Idempotent::Yes
    } else {
        Idempotent::No
    })
}
