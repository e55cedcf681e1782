//! The server of the hedging benchmark: HTTP on 127.0.0.1, with a latency
//! tail drawn from a seeded generator.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing;
use reattempt::jitter::Rng;

/// One answer in this many is slow.
pub const SLOW_ONE_IN: u64 = 50;

struct Server {
    rng: Mutex<Rng>,
    served: Arc<AtomicU64>,
}

/// How long the next answer takes: 1 to 4 ms, or one time in
/// [`SLOW_ONE_IN`] 200 to 400 ms.
fn latency(rng: &mut Rng) -> Duration {
    let slow = rng.next_u64().is_multiple_of(SLOW_ONE_IN);
    let within = rng.next_f64();
    let ms = if slow {
        200.0 + 200.0 * within
    } else {
        1.0 + 3.0 * within
    };
    Duration::from_secs_f64(ms / 1000.0)
}

async fn answer(State(server): State<Arc<Server>>) -> &'static str {
    server.served.fetch_add(1, Ordering::Relaxed);
    let took = latency(&mut server.rng.lock().expect("never poisoned"));
    tokio::time::sleep(took).await;
    "ok"
}

/// A server on a port of its own: its URL, and the count of requests it
/// got.
pub async fn start(seed: u64) -> (String, Arc<AtomicU64>) {
    let served = Arc::new(AtomicU64::new(0));
    let server = Arc::new(Server {
        rng: Mutex::new(Rng::seeded(seed)),
        served: served.clone(),
    });
    let app = Router::new()
        .route("/", routing::get(answer))
        .with_state(server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), served)
}
