//! The id of one retried call: random, the same on every attempt, written
//! as a UUID, and drawn only when something asks for it.

use core::fmt;
use core::hash::BuildHasher as _;
use core::sync::atomic::{AtomicU64, Ordering};

/// A random 128-bit id of one retried call, written as a UUID (version 4),
/// fit to send as an `Idempotency-Key`.
///
/// ```
/// use reattempt::{CallId, retry};
///
/// #[retry(max = 2, backoff = none)]
/// fn send() -> std::io::Result<CallId> {
///     Ok(reattempt::attempt().expect("inside the call").call_id())
/// }
///
/// let id = send().unwrap();
/// assert_eq!(CallId::from_u128(id.as_u128()), id);
/// assert_eq!(id.to_string().len(), 36, "a UUID");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallId(u128);

impl CallId {
    /// A new random id.
    pub fn random() -> CallId {
        let keys = crate::rng::entropy();
        let bits = (u128::from(keys.hash_one(0u8)) << 64) | u128::from(keys.hash_one(1u8));
        // Version 4 and the RFC 4122 variant, so it reads as a UUID.
        let bits = (bits & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
        CallId(bits)
    }

    /// The id whose bits are `bits`, as read back from a log or a record.
    pub const fn from_u128(bits: u128) -> CallId {
        CallId(bits)
    }

    /// The id as a number.
    pub const fn as_u128(&self) -> u128 {
        self.0
    }

    /// The id as the value of an `Idempotency-Key` header, in the form the
    /// IETF draft "The Idempotency-Key HTTP Header Field" gives: a UUID as
    /// a structured-field string, in double quotes. The same on every
    /// attempt of the call, so that the server can tell a retry from a new
    /// request.
    ///
    /// ```
    /// let key = reattempt::CallId::random().idempotency_key();
    /// assert_eq!(key.len(), 38);
    /// assert!(key.starts_with('"') && key.ends_with('"'));
    /// ```
    pub fn idempotency_key(&self) -> String {
        format!("\"{self}\"")
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            bits >> 96,
            (bits >> 80) & 0xFFFF,
            (bits >> 64) & 0xFFFF,
            (bits >> 48) & 0xFFFF,
            bits & 0xFFFF_FFFF_FFFF
        )
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallId({self})")
    }
}

/// A call's id, drawn the first time the body asks for it and the same on
/// every attempt after. Atomic because an async call's attempts may run on
/// different threads; only the thread polling the attempt reaches it.
#[derive(Debug, Default)]
pub(crate) struct CallIdCell([AtomicU64; 2]);

impl CallIdCell {
    /// The call's id, drawn now if the body has not asked for it yet.
    pub(crate) fn id(&self) -> CallId {
        CallId(self.get_or_draw())
    }

    /// The same id, if drawn, in a cell of its own.
    #[inline]
    pub(crate) fn moved(&self) -> CallIdCell {
        let [high, low] = &self.0;
        let low = low.load(Ordering::Acquire);
        CallIdCell([
            AtomicU64::new(high.load(Ordering::Relaxed)),
            AtomicU64::new(low),
        ])
    }

    pub(crate) fn get_or_draw(&self) -> u128 {
        let [high, low] = &self.0;
        let known = low.load(Ordering::Acquire);
        if known != 0 {
            return (u128::from(high.load(Ordering::Relaxed)) << 64) | u128::from(known);
        }
        // A version 4 id never has a zero low half: its variant bits are set.
        let id = CallId::random().0;
        high.store((id >> 64) as u64, Ordering::Relaxed);
        low.store(id as u64, Ordering::Release);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_read_as_version_4_uuids() {
        let id = CallId::random().to_string();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(CallId::random(), CallId::random());
    }

    #[test]
    fn call_ids_are_written_as_the_hex_of_their_bits() {
        let id = CallId(0x0123_4567_89ab_4def_8123_4567_89ab_cdef);
        assert_eq!(id.to_string(), "01234567-89ab-4def-8123-456789abcdef");
        assert_eq!(
            CallId(0).to_string(),
            "00000000-0000-0000-0000-000000000000"
        );
        assert_eq!(
            CallId(u128::MAX).to_string(),
            "ffffffff-ffff-ffff-ffff-ffffffffffff"
        );
    }
}
