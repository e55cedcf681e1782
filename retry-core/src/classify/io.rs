//! `std::io::Error` by `ErrorKind`.
//!
//! | class | kinds |
//! |---|---|
//! | transient | `ConnectionRefused`, `ConnectionReset`, `ConnectionAborted`, `NotConnected`, `HostUnreachable`, `NetworkUnreachable`, `NetworkDown`, `AddrNotAvailable`, `BrokenPipe`, `TimedOut`, `WouldBlock`, `Interrupted`, `UnexpectedEof`, `WriteZero`, `StaleNetworkFileHandle`, `ResourceBusy`, `ExecutableFileBusy`, `Deadlock`, `OutOfMemory`; and uncategorised errors for descriptor exhaustion (EMFILE, ENFILE, ENOBUFS) or a temporary DNS failure |
//! | validation | `InvalidInput`, `InvalidData`, `InvalidFilename`, `FileTooLarge`, `ArgumentListTooLong` |
//! | logical | everything else: `NotFound`, `PermissionDenied`, `AlreadyExists`, `AddrInUse`, `Unsupported`, `StorageFull`, `QuotaExceeded`, ... |
//!
//! Applied (whether the operation may have taken effect, see
//! [`Applied`](crate::Applied)): **no** for `ConnectionRefused`,
//! `NotConnected`, `HostUnreachable`, `NetworkUnreachable`, `NetworkDown`,
//! `AddrNotAvailable` (no connection was made, so nothing was sent; Linux
//! `connect(2)`), `ResourceBusy`, `ExecutableFileBusy` and `Deadlock` (the
//! call was refused), descriptor exhaustion and a temporary DNS failure
//! (before any connection), and every logical or validation kind; **maybe**
//! for `ConnectionReset`, `ConnectionAborted`, `BrokenPipe`, `TimedOut`,
//! `UnexpectedEof`, `WriteZero`, `WouldBlock`, `Interrupted`,
//! `StaleNetworkFileHandle` and `OutOfMemory`, which can come after the
//! request was sent and acted on.
//!
//! `ErrorKind::Other` (user-built errors) is classified by the error it
//! wraps when that type is known (another `io::Error`), and is logical
//! otherwise. The code is the OS error number when there is one, else the
//! kind's name.

use std::io::{Error, ErrorKind};

use crate::class::{Class, Classification, Code};
use crate::classify::Classified;

// Linux errno values of the uncategorised errors worth retrying.
const EMFILE: i32 = 24;
const ENFILE: i32 = 23;
const ENOBUFS: i32 = 105;

impl Classified for Error {
    fn classification(&self) -> Classification {
        // Read once: `kind` is a call that decodes the error's repr.
        let kind = self.kind();
        if kind == ErrorKind::Other
            && let Some(inner) = self.get_ref().and_then(|e| e.downcast_ref::<Error>())
        {
            return inner.classification();
        }
        let known = kind_class(kind);
        let class = known.unwrap_or_else(|| uncategorised(self.raw_os_error(), &self.to_string()));
        let code = match self.raw_os_error() {
            Some(errno) => Code::number(u64::from(errno.unsigned_abs())),
            None => kind_code(kind),
        };
        let classification = Classification::new(class).with_code(code);
        // Kinds of their own say nothing ran; an uncategorised transient
        // error (no descriptor, a DNS lookup) came before anything was sent.
        if known.is_none() || nothing_sent(kind) {
            classification.not_applied()
        } else {
            classification
        }
    }
}

impl Classified for ErrorKind {
    fn classification(&self) -> Classification {
        let classification = Classification::new(kind_class(*self).unwrap_or(Class::Logical))
            .with_code(kind_code(*self));
        if nothing_sent(*self) {
            classification.not_applied()
        } else {
            classification
        }
    }
}

/// Transient kinds that show the operation never ran: no connection was
/// made, or the resource refused it at once. The others (a reset, a
/// timeout, an early end of stream, an interrupted call) can come after
/// the request was sent and acted on.
fn nothing_sent(kind: ErrorKind) -> bool {
    use ErrorKind::*;
    matches!(
        kind,
        ConnectionRefused
            | NotConnected
            | HostUnreachable
            | NetworkUnreachable
            | NetworkDown
            | AddrNotAvailable
            | ResourceBusy
            | ExecutableFileBusy
            | Deadlock
    )
}

/// The class of a kind, or `None` for the kinds that only tell by the OS
/// error or the message.
fn kind_class(kind: ErrorKind) -> Option<Class> {
    use ErrorKind::*;
    Some(match kind {
        ConnectionRefused
        | ConnectionReset
        | ConnectionAborted
        | NotConnected
        | HostUnreachable
        | NetworkUnreachable
        | NetworkDown
        | AddrNotAvailable
        | BrokenPipe
        | TimedOut
        | WouldBlock
        | Interrupted
        | UnexpectedEof
        | WriteZero
        | StaleNetworkFileHandle
        | ResourceBusy
        | ExecutableFileBusy
        | Deadlock
        | OutOfMemory => Class::Transient,
        InvalidInput | InvalidData | InvalidFilename | FileTooLarge | ArgumentListTooLong => {
            Class::Validation
        }
        NotFound | PermissionDenied | AlreadyExists | AddrInUse | NotADirectory | IsADirectory
        | DirectoryNotEmpty | ReadOnlyFilesystem | StorageFull | NotSeekable | QuotaExceeded
        | CrossesDevices | TooManyLinks | Unsupported | Other => Class::Logical,
        _ => return None,
    })
}

/// Errors std leaves uncategorised: descriptor exhaustion passes, and so
/// does a DNS lookup that glibc calls temporary; the rest are logical.
fn uncategorised(errno: Option<i32>, message: &str) -> Class {
    match errno {
        Some(EMFILE | ENFILE | ENOBUFS) => Class::Transient,
        // std keeps no EAI_* code for getaddrinfo failures, only glibc's
        // text, and of those only EAI_AGAIN passes.
        None if message.contains("Temporary failure in name resolution") => Class::Transient,
        _ => Class::Logical,
    }
}

/// The kind's name as a code. Each is made at compile time, so that a
/// failure copies a code rather than building one from text.
fn kind_code(kind: ErrorKind) -> Code {
    macro_rules! codes {
        ($($kind:ident),* $(,)?) => {
            match kind {
                $(ErrorKind::$kind => const { Code::new(stringify!($kind)) },)*
                _ => const { Code::new("Uncategorized") },
            }
        };
    }
    codes!(
        NotFound,
        PermissionDenied,
        ConnectionRefused,
        ConnectionReset,
        HostUnreachable,
        NetworkUnreachable,
        ConnectionAborted,
        NotConnected,
        AddrInUse,
        AddrNotAvailable,
        NetworkDown,
        BrokenPipe,
        AlreadyExists,
        WouldBlock,
        NotADirectory,
        IsADirectory,
        DirectoryNotEmpty,
        ReadOnlyFilesystem,
        StaleNetworkFileHandle,
        InvalidInput,
        InvalidData,
        TimedOut,
        WriteZero,
        StorageFull,
        NotSeekable,
        QuotaExceeded,
        FileTooLarge,
        ResourceBusy,
        ExecutableFileBusy,
        Deadlock,
        CrossesDevices,
        TooManyLinks,
        InvalidFilename,
        ArgumentListTooLong,
        Interrupted,
        Unsupported,
        UnexpectedEof,
        OutOfMemory,
        Other,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_rows() {
        use crate::Applied::{Maybe, No};
        use ErrorKind::*;
        for (kind, applied) in [
            (ConnectionRefused, No),
            (NotConnected, No),
            (HostUnreachable, No),
            (NetworkUnreachable, No),
            (AddrNotAvailable, No),
            (Deadlock, No),
            (ConnectionReset, Maybe),
            (ConnectionAborted, Maybe),
            (BrokenPipe, Maybe),
            (TimedOut, Maybe),
            (UnexpectedEof, Maybe),
            (Interrupted, Maybe),
            (NotFound, No),
            (InvalidInput, No),
        ] {
            assert_eq!(
                Error::from(kind).classification().applied(),
                applied,
                "{kind:?}"
            );
        }
        assert_eq!(
            Error::from_raw_os_error(EMFILE).classification().applied(),
            No
        );
    }

    fn class_of(kind: ErrorKind) -> Class {
        Error::from(kind).classification().class()
    }

    #[test]
    fn connection_and_timeout_kinds_are_transient() {
        for kind in [
            ErrorKind::ConnectionRefused,
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::NotConnected,
            ErrorKind::HostUnreachable,
            ErrorKind::NetworkUnreachable,
            ErrorKind::NetworkDown,
            ErrorKind::AddrNotAvailable,
            ErrorKind::BrokenPipe,
            ErrorKind::TimedOut,
            ErrorKind::WouldBlock,
            ErrorKind::Interrupted,
            ErrorKind::UnexpectedEof,
            ErrorKind::WriteZero,
            ErrorKind::StaleNetworkFileHandle,
            ErrorKind::ResourceBusy,
            ErrorKind::ExecutableFileBusy,
            ErrorKind::Deadlock,
            ErrorKind::OutOfMemory,
        ] {
            assert_eq!(class_of(kind), Class::Transient, "{kind:?}");
        }
    }

    #[test]
    fn bad_input_kinds_are_validation() {
        for kind in [
            ErrorKind::InvalidInput,
            ErrorKind::InvalidData,
            ErrorKind::InvalidFilename,
            ErrorKind::FileTooLarge,
            ErrorKind::ArgumentListTooLong,
        ] {
            assert_eq!(class_of(kind), Class::Validation, "{kind:?}");
        }
    }

    #[test]
    fn lasting_kinds_are_logical() {
        for kind in [
            ErrorKind::NotFound,
            ErrorKind::PermissionDenied,
            ErrorKind::AlreadyExists,
            ErrorKind::AddrInUse,
            ErrorKind::NotADirectory,
            ErrorKind::IsADirectory,
            ErrorKind::DirectoryNotEmpty,
            ErrorKind::ReadOnlyFilesystem,
            ErrorKind::StorageFull,
            ErrorKind::NotSeekable,
            ErrorKind::QuotaExceeded,
            ErrorKind::CrossesDevices,
            ErrorKind::TooManyLinks,
            ErrorKind::Unsupported,
            ErrorKind::Other,
        ] {
            assert_eq!(class_of(kind), Class::Logical, "{kind:?}");
        }
    }

    #[test]
    fn os_errors_carry_their_errno_as_code() {
        let refused = Error::from_raw_os_error(111);
        let c = refused.classification();
        assert_eq!(c.class(), Class::Transient);
        assert_eq!(c.code(), Some("111"));
        assert_eq!(
            Error::from(ErrorKind::TimedOut).classification().code(),
            Some("TimedOut")
        );
    }

    #[test]
    fn descriptor_exhaustion_is_transient_and_other_uncategorised_errnos_logical() {
        assert_eq!(
            Error::from_raw_os_error(EMFILE).classification().class(),
            Class::Transient
        );
        assert_eq!(
            Error::from_raw_os_error(ENFILE).classification().class(),
            Class::Transient
        );
        assert_eq!(
            Error::from_raw_os_error(ENOBUFS).classification().class(),
            Class::Transient
        );
        // EINPROGRESS (115): unstable kind, not worth a retry on its own.
        assert_eq!(
            Error::from_raw_os_error(115).classification().class(),
            Class::Logical
        );
    }

    #[test]
    fn dns_failures_are_transient_only_when_glibc_calls_them_temporary() {
        let again = "failed to lookup address information: Temporary failure in name resolution";
        let noname = "failed to lookup address information: Name or service not known";
        assert_eq!(uncategorised(None, again), Class::Transient);
        assert_eq!(uncategorised(None, noname), Class::Logical);
    }

    #[test]
    fn other_errors_wrapping_an_io_error_take_its_class() {
        let wrapped = Error::other(Error::from(ErrorKind::ConnectionReset));
        assert_eq!(wrapped.classification().class(), Class::Transient);
        let opaque = Error::other("boom");
        assert_eq!(opaque.classification().class(), Class::Logical);
    }
}
