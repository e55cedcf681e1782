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

fn main() {
    let _ = fetch();
    let _ = store();
    let _ = load();
}
