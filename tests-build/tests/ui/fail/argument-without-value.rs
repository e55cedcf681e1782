use reattempt::retry;

// Nothing after `=`: the error is at the `=`, and names what may follow.
#[retry(on =, max = 3)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 3, backoff =)]
fn store() -> std::io::Result<()> {
    Ok(())
}

#[retry(max =)]
fn load() -> std::io::Result<()> {
    Ok(())
}

// A name alone, at the end or not: the error is at the name, and names
// what it takes.
#[retry(max = 3, deadline)]
fn save() -> std::io::Result<()> {
    Ok(())
}

#[retry(retry_after, max = 3)]
fn send() -> std::io::Result<()> {
    Ok(())
}

#[retry(backoff = exp(base), max = 3)]
fn poll() -> std::io::Result<()> {
    Ok(())
}

#[retry(fields)]
fn list(id: u32) -> std::io::Result<u32> {
    Ok(id)
}

fn main() {
    let _ = fetch();
    let _ = store();
    let _ = load();
    let _ = save();
    let _ = send();
    let _ = poll();
    let _ = list(1);
}
