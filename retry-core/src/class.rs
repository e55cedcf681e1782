//! The four classes every error falls into, and the classification that
//! carries a class together with the error's code and a server-given delay.

use core::fmt;
use core::time::Duration;

/// What kind of failure an error is; the class decides whether it is retried.
///
/// ```
/// use reattempt::Class;
///
/// assert!(Class::Transient.is_retryable());
/// assert!(!Class::Validation.is_retryable());
/// assert_eq!(Class::RateLimited.as_str(), "rate_limited");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Class {
    /// A failure that passes by itself: a dropped connection, a timeout, a
    /// 503, a deadlock. Retried with backoff.
    Transient,
    /// The server asked the caller to slow down (HTTP 429, a 503 with
    /// `Retry-After`). Retried after the server's delay when it gave one,
    /// otherwise after the backoff.
    RateLimited,
    /// A failure that will not pass: 401/403/404, a duplicate key. Never
    /// retried; worth a person's review.
    Logical,
    /// The caller's input is wrong: 400/422, a data exception. Never retried.
    Validation,
}

impl Class {
    /// Whether errors of this class are retried.
    pub const fn is_retryable(self) -> bool {
        matches!(self, Class::Transient | Class::RateLimited)
    }

    /// The class as it appears in logs: `transient`, `rate_limited`,
    /// `logical` or `validation`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::RateLimited => "rate_limited",
            Class::Logical => "logical",
            Class::Validation => "validation",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A short error code kept inline (no allocation): `"503"`, `"40P01"`,
/// `"1213"`, `"CLUSTERDOWN"`.
///
/// A code of up to [`Code::CAPACITY`] bytes is kept whole. A longer one is
/// never cut silently: it is cut at a character boundary and ends with `…`,
/// and [`is_cut`](Code::is_cut) says so; [`try_new`](Code::try_new) refuses
/// it instead. (A classifier cannot fail, so the retry decision keeps the
/// marked code rather than lose the classification.)
///
/// ```
/// use reattempt::Code;
///
/// assert_eq!(Code::new("40P01").as_str(), "40P01");
/// assert_eq!(Code::number(503).as_str(), "503");
/// let long = Code::new("payment_method_declined_by_issuer");
/// assert!(long.is_cut() && long.as_str().ends_with('…'));
/// assert!(Code::try_new("payment_method_declined_by_issuer").is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code {
    /// The length in bytes, and [`CUT`] when the text was longer.
    len: u8,
    bytes: [u8; Code::CAPACITY],
}

/// The flag of `len` for a code that was cut.
const CUT: u8 = 0x80;

/// A code longer than [`Code::CAPACITY`] bytes, refused by
/// [`Code::try_new`].
///
/// ```
/// use reattempt::Code;
///
/// assert!(Code::try_new("40001").is_ok());
/// let long = Code::try_new("a-code-far-longer-than-the-capacity");
/// assert!(long.is_err(), "refused, not cut");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeTooLong {
    /// Its length in bytes.
    pub len: usize,
}

impl fmt::Display for CodeTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a code of {} bytes is longer than the {} a code holds",
            self.len,
            Code::CAPACITY
        )
    }
}

impl std::error::Error for CodeTooLong {}

impl Code {
    /// The longest code kept whole, in bytes.
    pub const CAPACITY: usize = 23;

    /// A code from text; a text longer than [`Code::CAPACITY`] bytes is cut
    /// at a character boundary and marked with a final `…`.
    pub const fn new(text: &str) -> Code {
        let src = text.as_bytes();
        if src.len() <= Code::CAPACITY {
            return Code::copied(src, src.len(), false);
        }
        // Room for the three bytes of `…`.
        let mut len = Code::CAPACITY - 3;
        // Step back over UTF-8 continuation bytes so the cut stays valid text.
        while len > 0 && (src[len] & 0b1100_0000) == 0b1000_0000 {
            len -= 1;
        }
        let mut code = Code::copied(src, len, true);
        let ellipsis = "…".as_bytes();
        code.bytes[len] = ellipsis[0];
        code.bytes[len + 1] = ellipsis[1];
        code.bytes[len + 2] = ellipsis[2];
        code.len = (len + 3) as u8 | CUT;
        code
    }

    /// A code from text, or an error when it is longer than
    /// [`Code::CAPACITY`] bytes.
    pub const fn try_new(text: &str) -> Result<Code, CodeTooLong> {
        if text.len() > Code::CAPACITY {
            return Err(CodeTooLong { len: text.len() });
        }
        Ok(Code::new(text))
    }

    /// Whether the text was longer than [`Code::CAPACITY`] and was cut.
    pub const fn is_cut(&self) -> bool {
        self.len & CUT != 0
    }

    const fn copied(src: &[u8], len: usize, cut: bool) -> Code {
        let mut bytes = [0u8; Code::CAPACITY];
        // One copy, not a loop of bytes: classifiers make codes at run time
        // on every failure.
        bytes
            .split_at_mut(len)
            .0
            .copy_from_slice(src.split_at(len).0);
        Code {
            len: len as u8 | if cut { CUT } else { 0 },
            bytes,
        }
    }

    /// A numeric code written in decimal, such as an HTTP status or a MySQL
    /// error number.
    pub const fn number(mut n: u64) -> Code {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let mut bytes = [0u8; Code::CAPACITY];
        let mut i = 0;
        while i < count {
            bytes[i] = digits[count - 1 - i];
            i += 1;
        }
        Code {
            len: count as u8,
            bytes,
        }
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        let bytes = &self.bytes[..usize::from(self.len & !CUT)];
        // Built only from whole `&str` characters or ASCII digits.
        core::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Code {
    fn from(text: &str) -> Code {
        Code::new(text)
    }
}

impl From<String> for Code {
    fn from(text: String) -> Code {
        Code::new(&text)
    }
}

impl From<&String> for Code {
    fn from(text: &String) -> Code {
        Code::new(text)
    }
}

impl From<u16> for Code {
    fn from(n: u16) -> Code {
        Code::number(u64::from(n))
    }
}

impl From<u32> for Code {
    fn from(n: u32) -> Code {
        Code::number(u64::from(n))
    }
}

/// A [`Class`] with the error's code and the delay the server asked for, if
/// any. This is what classifiers return.
///
/// ```
/// use reattempt::{Class, Classification};
/// use std::time::Duration;
///
/// let c = Classification::rate_limited()
///     .with_code(429u16)
///     .with_retry_after(Duration::from_secs(2));
/// assert_eq!(c.class(), Class::RateLimited);
/// assert_eq!(c.code(), Some("429"));
/// assert_eq!(c.retry_after(), Some(Duration::from_secs(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Classification {
    class: Class,
    code: Option<Code>,
    retry_after: Option<Duration>,
    applied: Applied,
    kind: CodeKind,
}

/// What kind of code a classification carries, so that spans can record it
/// under its OpenTelemetry name: `http.response.status_code`,
/// `db.response.status_code` or `rpc.grpc.status_code`.
///
/// ```
/// use reattempt::CodeKind;
///
/// assert_eq!(reattempt::http::status(503).code_kind(), CodeKind::Http);
/// assert_eq!(reattempt::postgres::sqlstate("40001").code_kind(), CodeKind::Database);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodeKind {
    /// A code of no protocol the conventions name (an errno, a label).
    #[default]
    Other,
    /// An HTTP status.
    Http,
    /// A database's code: a SQLSTATE, a MySQL error number, a Redis error
    /// prefix.
    Database,
    /// A gRPC status, by name.
    Grpc,
}

/// Whether a failed attempt may have taken effect: what decides whether an
/// operation that must not happen twice (`idempotent = false`) may be
/// retried.
///
/// ```
/// use reattempt::{Applied, http, postgres};
///
/// // A 503 refuses the request; a 502 may come after the upstream did it.
/// assert_eq!(http::status(503).applied(), Applied::No);
/// assert_eq!(http::status(502).applied(), Applied::Maybe);
/// // A serialization failure rolled the transaction back.
/// assert_eq!(postgres::sqlstate("40001").applied(), Applied::No);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Applied {
    /// The operation did not happen: refused before it ran, or rolled back.
    /// Any retry is safe.
    No,
    /// The operation may have happened before the error was reported (a
    /// connection lost after the request was sent, a timeout, a 502):
    /// retrying it may do it twice.
    Maybe,
}

impl Applied {
    /// The value as it appears in logs and records.
    pub const fn as_str(self) -> &'static str {
        match self {
            Applied::No => "not_applied",
            Applied::Maybe => "maybe_applied",
        }
    }
}

impl Classification {
    /// A classification with no code and no server delay. An error worth
    /// retrying may have taken effect ([`Applied::Maybe`]) unless it is
    /// marked [`not_applied`](Self::not_applied); a logical or validation
    /// error was a refusal ([`Applied::No`]).
    pub const fn new(class: Class) -> Classification {
        Classification {
            class,
            code: None,
            retry_after: None,
            applied: match class {
                Class::Transient | Class::RateLimited => Applied::Maybe,
                Class::Logical | Class::Validation => Applied::No,
            },
            kind: CodeKind::Other,
        }
    }

    /// The same classification, saying what kind of code it carries.
    pub const fn with_code_kind(mut self, kind: CodeKind) -> Classification {
        self.kind = kind;
        self
    }

    /// What kind of code the classification carries.
    pub const fn code_kind(&self) -> CodeKind {
        self.kind
    }

    /// The same classification, for an error that shows the operation did
    /// not happen (so even `idempotent = false` may retry it).
    pub const fn not_applied(mut self) -> Classification {
        self.applied = Applied::No;
        self
    }

    /// The same classification, for an error after which the operation
    /// may have happened.
    pub const fn maybe_applied(mut self) -> Classification {
        self.applied = Applied::Maybe;
        self
    }

    /// Whether the failed attempt may have taken effect.
    pub const fn applied(&self) -> Applied {
        self.applied
    }

    /// [`Class::Transient`].
    pub const fn transient() -> Classification {
        Classification::new(Class::Transient)
    }

    /// [`Class::RateLimited`].
    pub const fn rate_limited() -> Classification {
        Classification::new(Class::RateLimited)
    }

    /// [`Class::Logical`].
    pub const fn logical() -> Classification {
        Classification::new(Class::Logical)
    }

    /// [`Class::Validation`].
    pub const fn validation() -> Classification {
        Classification::new(Class::Validation)
    }

    /// The same classification carrying the error's code.
    pub fn with_code(mut self, code: impl Into<Code>) -> Classification {
        self.code = Some(code.into());
        self
    }

    /// [`with_code`](Self::with_code) for a code made at compile time.
    pub(crate) const fn with_static_code(mut self, code: Code) -> Classification {
        self.code = Some(code);
        self
    }

    /// The same classification carrying a delay the server asked for.
    pub const fn with_retry_after(mut self, delay: Duration) -> Classification {
        self.retry_after = Some(delay);
        self
    }

    /// The class.
    pub const fn class(&self) -> Class {
        self.class
    }

    /// The error's code, if the classifier knew it.
    pub fn code(&self) -> Option<&str> {
        self.code.as_ref().map(Code::as_str)
    }

    /// The delay the server asked for, if any.
    pub const fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// Whether the failure says the backend is overloaded: rate-limited,
    /// a delay the server asked for, an HTTP 503, or a gRPC
    /// `RESOURCE_EXHAUSTED` or `UNAVAILABLE`. An [`AdaptiveThrottle`]
    /// counts such an attempt as a request the backend did not accept.
    ///
    /// ```
    /// use reattempt::{Classification, grpc, http};
    ///
    /// assert!(http::status(503).is_overload());
    /// assert!(http::status(429).is_overload());
    /// assert!(grpc::status(8).is_overload());
    /// assert!(!http::status(500).is_overload());
    /// assert!(!Classification::transient().is_overload());
    /// ```
    ///
    /// [`AdaptiveThrottle`]: crate::AdaptiveThrottle
    pub fn is_overload(&self) -> bool {
        let overload_code = match self.kind {
            CodeKind::Http => self.code() == Some("503"),
            CodeKind::Grpc => matches!(self.code(), Some("RESOURCE_EXHAUSTED" | "UNAVAILABLE")),
            _ => false,
        };
        self.class == Class::RateLimited || self.retry_after.is_some() || overload_code
    }
}

impl From<Class> for Classification {
    fn from(class: Class) -> Classification {
        Classification::new(class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_keeps_short_text_whole_and_marks_a_cut_of_long_text() {
        assert_eq!(Code::new("").as_str(), "");
        assert_eq!(Code::new("CLUSTERDOWN").as_str(), "CLUSTERDOWN");
        let exact = "a".repeat(Code::CAPACITY);
        assert_eq!(Code::new(&exact).as_str(), exact);
        assert!(!Code::new(&exact).is_cut());
        let long = "RESOURCE_EXHAUSTED_AND_THEN_SOME";
        let cut = Code::new(long);
        assert_eq!(cut.as_str(), format!("{}…", &long[..Code::CAPACITY - 3]));
        assert!(cut.is_cut());
        assert_eq!(Code::try_new(long), Err(CodeTooLong { len: long.len() }));
        // 19 ASCII bytes then a 2-byte character straddling the cut.
        let text = format!("{}ééé", "a".repeat(19));
        assert_eq!(Code::new(&text).as_str(), format!("{}…", "a".repeat(19)));
        // Codes built at run time convert too.
        let owned = String::from("E_CARD_DECLINED");
        let c = Classification::logical().with_code(owned.clone());
        assert_eq!(c.code(), Some("E_CARD_DECLINED"));
        assert_eq!(
            Classification::logical().with_code(&owned).code(),
            Some("E_CARD_DECLINED")
        );
    }

    #[test]
    fn code_number_writes_decimal() {
        assert_eq!(Code::number(0).as_str(), "0");
        assert_eq!(Code::number(1213).as_str(), "1213");
        assert_eq!(Code::number(u64::MAX).as_str(), u64::MAX.to_string());
        assert_eq!(Code::from(503u16).as_str(), "503");
    }

    #[test]
    fn only_transient_and_rate_limited_are_retryable() {
        assert!(Class::Transient.is_retryable());
        assert!(Class::RateLimited.is_retryable());
        assert!(!Class::Logical.is_retryable());
        assert!(!Class::Validation.is_retryable());
    }
}
