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

use crate::class::{Applied, Class, Classification, Code};
use crate::classify::Classified;

// Linux errno values of the uncategorised errors worth retrying.
const EMFILE: i32 = 24;
const ENFILE: i32 = 23;
const ENOBUFS: i32 = 105;

impl Classified for Error {
    // Inline: compiled into the classifier made once for each error type,
    // where it saves a retry a call (`benches/HISTORY.md` has the figures;
    // an `async fn` release build of a type per function did not grow).
    #[inline]
    fn classification(&self) -> Classification {
        // Read once: `kind` is a call that decodes the error's repr.
        let kind = self.kind();
        match known(kind) {
            // A known kind is a copy and, for an OS error, its number; what
            // is left, out of line, keeps the registers that its calls need
            // out of this frame.
            Some(known) if kind != ErrorKind::Other => with_errno(known, self.raw_os_error()),
            _ => unknown(self, kind),
        }
    }
}

/// An error whose kind does not tell its class alone: `Other`, classified
/// by the `io::Error` it wraps if it wraps one, and the uncategorised.
#[cold]
#[inline(never)]
fn unknown(error: &Error, kind: ErrorKind) -> Classification {
    if kind == ErrorKind::Other
        && let Some(inner) = error.get_ref().and_then(|e| e.downcast_ref::<Error>())
    {
        return inner.classification();
    }
    let errno = error.raw_os_error();
    let classification = match known(kind) {
        Some(known) => known,
        // An uncategorised transient error (no descriptor, a DNS lookup)
        // came before anything was sent.
        None => Classification::new(uncategorised(errno, &error.to_string()))
            .with_code(const { Code::new("Uncategorized") })
            .not_applied(),
    };
    with_errno(classification, errno)
}

/// The classification with the OS error number as its code, when there is
/// one.
#[inline]
fn with_errno(classification: Classification, errno: Option<i32>) -> Classification {
    match errno {
        Some(errno) => classification.with_code(Code::number(u64::from(errno.unsigned_abs()))),
        None => classification,
    }
}

impl Classified for ErrorKind {
    fn classification(&self) -> Classification {
        known(*self).unwrap_or(
            const { Classification::new(Class::Logical).with_static_code(Code::new("Uncategorized")) },
        )
    }
}

/// The classification of a kind, its name as the code, made at compile
/// time so that a failure copies it rather than working it out; `None` for
/// the kinds that only tell by the OS error or the message.
///
/// Transient kinds marked `not_applied` show the operation never ran: no
/// connection was made, or the resource refused it at once. The others (a
/// reset, a timeout, an early end of stream, an interrupted call) can come
/// after the request was sent and acted on.
fn known(kind: ErrorKind) -> Option<Classification> {
    const fn made(class: Class, code: &str, applied: Applied) -> Classification {
        let made = Classification::new(class).with_static_code(Code::new(code));
        match applied {
            Applied::No => made.not_applied(),
            Applied::Maybe => made,
        }
    }

    macro_rules! kinds {
        ($($class:ident $applied:ident: $($kind:ident)|*;)*) => {
            match kind {
                $($(ErrorKind::$kind => Some(const {
                    made(Class::$class, stringify!($kind), Applied::$applied)
                }),)*)*
                _ => None,
            }
        };
    }
    kinds! {
        Transient No: ConnectionRefused | NotConnected | HostUnreachable | NetworkUnreachable
            | NetworkDown | AddrNotAvailable | ResourceBusy | ExecutableFileBusy | Deadlock;
        Transient Maybe: ConnectionReset | ConnectionAborted | BrokenPipe | TimedOut
            | WouldBlock | Interrupted | UnexpectedEof | WriteZero | StaleNetworkFileHandle
            | OutOfMemory;
        Validation No: InvalidInput | InvalidData | InvalidFilename | FileTooLarge
            | ArgumentListTooLong;
        Logical No: NotFound | PermissionDenied | AlreadyExists | AddrInUse | NotADirectory
            | IsADirectory | DirectoryNotEmpty | ReadOnlyFilesystem | StorageFull | NotSeekable
            | QuotaExceeded | CrossesDevices | TooManyLinks | Unsupported | Other;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_class_its_applied_and_its_name_as_code() {
        use crate::Applied::{Maybe, No};
        use ErrorKind::*;
        let rows = [
            (ConnectionRefused, Class::Transient, No),
            (ConnectionReset, Class::Transient, Maybe),
            (ConnectionAborted, Class::Transient, Maybe),
            (NotConnected, Class::Transient, No),
            (HostUnreachable, Class::Transient, No),
            (NetworkUnreachable, Class::Transient, No),
            (NetworkDown, Class::Transient, No),
            (AddrNotAvailable, Class::Transient, No),
            (BrokenPipe, Class::Transient, Maybe),
            (TimedOut, Class::Transient, Maybe),
            (WouldBlock, Class::Transient, Maybe),
            (Interrupted, Class::Transient, Maybe),
            (UnexpectedEof, Class::Transient, Maybe),
            (WriteZero, Class::Transient, Maybe),
            (StaleNetworkFileHandle, Class::Transient, Maybe),
            (ResourceBusy, Class::Transient, No),
            (ExecutableFileBusy, Class::Transient, No),
            (Deadlock, Class::Transient, No),
            (OutOfMemory, Class::Transient, Maybe),
            (InvalidInput, Class::Validation, No),
            (InvalidData, Class::Validation, No),
            (InvalidFilename, Class::Validation, No),
            (FileTooLarge, Class::Validation, No),
            (ArgumentListTooLong, Class::Validation, No),
            (NotFound, Class::Logical, No),
            (PermissionDenied, Class::Logical, No),
            (AlreadyExists, Class::Logical, No),
            (AddrInUse, Class::Logical, No),
            (NotADirectory, Class::Logical, No),
            (IsADirectory, Class::Logical, No),
            (DirectoryNotEmpty, Class::Logical, No),
            (ReadOnlyFilesystem, Class::Logical, No),
            (StorageFull, Class::Logical, No),
            (NotSeekable, Class::Logical, No),
            (QuotaExceeded, Class::Logical, No),
            (CrossesDevices, Class::Logical, No),
            (TooManyLinks, Class::Logical, No),
            (Unsupported, Class::Logical, No),
            (Other, Class::Logical, No),
        ];
        for (kind, class, applied) in rows {
            let name = format!("{kind:?}");
            for c in [Error::from(kind).classification(), kind.classification()] {
                assert_eq!(c.class(), class, "{kind:?}");
                assert_eq!(c.applied(), applied, "{kind:?}");
                assert_eq!(c.code(), Some(name.as_str()), "{kind:?}");
                assert_eq!(c.retry_after(), None, "{kind:?}");
            }
            // An OS error of the kind keeps the kind's class and says its
            // number.
            if let Some(errno) = (1..200).find(|&n| Error::from_raw_os_error(n).kind() == kind) {
                let c = Error::from_raw_os_error(errno).classification();
                assert_eq!((c.class(), c.applied()), (class, applied), "{kind:?}");
                assert_eq!(c.code(), Some(errno.to_string().as_str()), "{kind:?}");
            }
        }
        // A kind std does not name: logical, with a code that says so.
        let unnamed = Error::from_raw_os_error(115);
        assert_eq!(
            unnamed.kind().classification().code(),
            Some("Uncategorized")
        );
        assert_eq!(unnamed.classification().code(), Some("115"));
        assert_eq!(unnamed.classification().applied(), No);
    }

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
