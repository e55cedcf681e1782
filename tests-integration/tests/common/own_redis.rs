//! A `redis-server` of a test's own, on another port than the shared
//! one, so that the test can stop, hang and restart it.

use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `redis-server` of the test's own, on a free port, ended by its pid.
pub struct OwnRedis {
    child: Child,
    port: u16,
}

impl OwnRedis {
    pub fn start(port: u16, password: Option<&str>) -> OwnRedis {
        let mut args = vec![
            "--port".to_owned(),
            port.to_string(),
            "--bind".to_owned(),
            "127.0.0.1".to_owned(),
            "--save".to_owned(),
            String::new(),
            "--appendonly".to_owned(),
            "no".to_owned(),
        ];
        if let Some(password) = password {
            args.extend(["--requirepass".to_owned(), password.to_owned()]);
        }
        let child = Command::new("redis-server")
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on this machine");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        OwnRedis { child, port }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn stop(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Stops the server (`SIGSTOP`) until the returned guard drops: it
    /// still accepts connections, as the kernel does that for it, and
    /// answers nothing, as a server that hangs or a network that drops every
    /// packet.
    pub fn hang(&self) -> Hanging {
        let pid = self.child.id().to_string();
        signal("-STOP", &pid);
        let (done, ended) = mpsc::channel::<()>();
        let watched = pid.clone();
        let watchdog = std::thread::spawn(move || {
            if ended.recv_timeout(Duration::from_secs(10)).is_err() {
                signal("-CONT", &watched);
            }
        });
        Hanging {
            pid,
            done,
            watchdog: Some(watchdog),
        }
    }
}

/// A stopped server, resumed when this drops, or after 10 s: a call that
/// waits on it without a bound then fails its test instead of hanging it.
pub struct Hanging {
    pid: String,
    done: mpsc::Sender<()>,
    watchdog: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Hanging {
    fn drop(&mut self) {
        let _ = self.done.send(());
        if let Some(watchdog) = self.watchdog.take() {
            let _ = watchdog.join();
        }
        signal("-CONT", &self.pid);
    }
}

fn signal(signal: &str, pid: &str) {
    let sent = Command::new("kill").args([signal, pid]).status().unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
