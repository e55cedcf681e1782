//! The spans of a hedged call: each attempt has a span of its own under
//! the call's, marked with whether it is a hedge, entered on each of its
//! polls (its events are in it), and marked failed when it fails.

use std::collections::HashMap;
use std::io::{self, ErrorKind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reattempt::retry;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Default, Clone)]
struct SpanSeen {
    name: &'static str,
    parent: Option<u64>,
    numbers: HashMap<&'static str, i64>,
    flags: HashMap<&'static str, bool>,
    texts: HashMap<&'static str, String>,
}

#[derive(Default)]
struct Seen {
    spans: HashMap<u64, SpanSeen>,
    /// Each `body` event: the number it logged and the span it was in.
    events: Vec<(i64, Option<u64>)>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

struct Fields<'s>(&'s mut SpanSeen);

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.numbers.insert(field.name(), value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.flags.insert(field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.texts.insert(field.name(), value.to_owned());
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// The `number` of a body event.
struct Number(i64);

impl Visit for Number {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "number" {
            self.0 = value as i64;
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        let mut seen = SpanSeen {
            name: attrs.metadata().name(),
            parent,
            ..SpanSeen::default()
        };
        attrs.record(&mut Fields(&mut seen));
        self.0.lock().unwrap().spans.insert(id.into_u64(), seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(seen) = self.0.lock().unwrap().spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(seen));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "body" {
            return;
        }
        let mut number = Number(0);
        event.record(&mut number);
        let span = ctx.lookup_current().map(|span| span.id().into_u64());
        self.0.lock().unwrap().events.push((number.0, span));
    }
}

/// Attempt 1 answers after a second; 2 fails at once; 3 answers first.
#[retry(max = 5, backoff = none, hedge(after = 50ms, in_flight = 3))]
async fn traced() -> io::Result<u32> {
    let number = reattempt::attempt().unwrap().number();
    tracing::info!(target: "body", number, "started");
    match number {
        1 => tokio::time::sleep(Duration::from_secs(1)).await,
        2 => return Err(ErrorKind::ConnectionReset.into()),
        _ => tokio::time::sleep(Duration::from_millis(10)).await,
    }
    tracing::info!(target: "body", number, "answering");
    Ok(number)
}

#[test]
fn each_attempt_of_a_hedged_call_has_its_own_span_marked_as_a_hedge_or_not() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        assert_eq!(runtime.block_on(traced()).unwrap(), 3);
    });
    let seen = recorder.0.lock().unwrap();
    let calls: Vec<u64> = seen
        .spans
        .iter()
        .filter(|(_, s)| s.name == "retry.call")
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(calls.len(), 1);
    let mut attempts: Vec<(i64, Option<bool>, Option<String>, u64)> = seen
        .spans
        .iter()
        .filter(|(_, s)| s.name == "retry.attempt")
        .map(|(id, s)| {
            assert_eq!(s.parent, Some(calls[0]), "under the call's span");
            (
                s.numbers["retry.attempt"],
                s.flags.get("retry.hedge").copied(),
                s.texts.get("otel.status_code").cloned(),
                *id,
            )
        })
        .collect();
    attempts.sort_unstable();
    let marks: Vec<_> = attempts.iter().map(|a| (a.0, a.1, a.2.clone())).collect();
    assert_eq!(
        marks,
        [
            (1, Some(false), None),
            (2, Some(true), Some("ERROR".to_owned())),
            (3, Some(true), None),
        ]
    );
    // Every body event is in its own attempt's span.
    let span_of: HashMap<i64, u64> = attempts.iter().map(|a| (a.0, a.3)).collect();
    assert!(seen.events.len() >= 4, "{:?}", seen.events);
    for (number, span) in &seen.events {
        assert_eq!(
            *span,
            Some(span_of[number]),
            "the events of attempt {number}"
        );
    }
}
