//! Which field of a variant holds the error it wraps.

use syn::{Field, Fields, Member, Type};

use super::attrs::marked_source;

/// The field a variant's classification reads.
pub struct Source<'f> {
    pub member: Member,
    pub ty: &'f Type,
}

/// The field that holds the wrapped error: the one marked
/// `#[classify(source)]`, else the one thiserror's `#[source]` or `#[from]`
/// marks, else the one named `source`, else the only field; `None` when
/// there is none of these. Two fields marked alike are an error at the
/// second.
pub fn pick(fields: &Fields) -> syn::Result<Option<Source<'_>>> {
    let all: Vec<(usize, &Field)> = fields.iter().enumerate().collect();
    let mut ours = Vec::new();
    for (index, field) in &all {
        if let Some(span) = marked_source(&field.attrs)? {
            ours.push((*index, *field, span));
        }
    }
    if let [_, (_, _, second), ..] = ours.as_slice() {
        return Err(syn::Error::new(
            *second,
            "two fields are marked `#[classify(source)]`: a variant delegates to the one error it wraps",
        ));
    }
    if let Some((index, field, _)) = ours.first() {
        return Ok(Some(source(*index, field)));
    }
    let theirs: Vec<&(usize, &Field)> = all
        .iter()
        .filter(|(_, field)| {
            field
                .attrs
                .iter()
                .any(|attr| attr.path().is_ident("source") || attr.path().is_ident("from"))
        })
        .collect();
    if let [(index, field)] = theirs.as_slice() {
        return Ok(Some(source(*index, field)));
    }
    if let Some((index, field)) = all
        .iter()
        .find(|(_, field)| field.ident.as_ref().is_some_and(|name| name == "source"))
    {
        return Ok(Some(source(*index, field)));
    }
    Ok(match all.as_slice() {
        [(index, field)] => Some(source(*index, field)),
        _ => None,
    })
}

/// What a variant whose wrapped error [`pick`] found none of could do
/// instead, as a message says it.
pub fn advice(fields: &Fields) -> &'static str {
    if fields.is_empty() {
        "it wraps none: give it a class instead, such as `#[classify(logical)]`"
    } else {
        "it has several fields: mark the one that holds the error `#[classify(source)]`, or name it `source`"
    }
}

fn source(index: usize, field: &Field) -> Source<'_> {
    let member = match &field.ident {
        Some(name) => Member::Named(name.clone()),
        None => Member::Unnamed(index.into()),
    };
    Source {
        member,
        ty: &field.ty,
    }
}
