use reattempt::retry;

#[retry(max = 2, backoff = none)]
unsafe fn read(ptr: *const u8) -> std::io::Result<u8> {
    Ok(unsafe { *ptr })
}

#[retry(max = 2, backoff = none)]
async unsafe fn read_later(ptr: *const u8) -> std::io::Result<u8> {
    Ok(unsafe { *ptr })
}

fn main() {
    let byte = 1u8;
    let _ = unsafe { read(&byte) };
    let _ = unsafe { read_later(&byte) };
}
